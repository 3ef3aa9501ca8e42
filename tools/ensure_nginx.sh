#!/bin/sh
# The nginx of the cluster tests (`make test`): one the machine has, else Debian's nginx
# installed with apt-get where apt exists (through sudo when not root). The tests run it
# as the current user from a folder of their own; the package's service is not needed
# (and is not started here: without systemd, apt starts none). Without nginx the cluster
# tests skip, saying why; under CI (CI set) they must run, so finding none is an error.
# Looked for: POSEKIT_NGINX (a path or a command), else nginx on POSEKIT_NGINX_PATH (by
# default the PATH, then /usr/sbin and /usr/local/sbin, which a user's PATH may lack).
set -u
. "${0%/*}/apt_install.sh"

find_nginx() {
  if [ -n "${POSEKIT_NGINX:-}" ]; then
    command -v "$POSEKIT_NGINX"
    return
  fi
  PATH="${POSEKIT_NGINX_PATH:-$PATH:/usr/sbin:/usr/local/sbin}" command -v nginx
}

if nginx=$(find_nginx); then
  echo "cluster tests: $nginx"
  exit 0
fi

if [ -z "${POSEKIT_NGINX:-}" ] && apt_install "cluster tests" nginx-light nginx; then
  if nginx=$(find_nginx); then
    echo "cluster tests: $nginx"
    exit 0
  fi
fi

if [ -n "${POSEKIT_NGINX:-}" ]; then
  reason="POSEKIT_NGINX=$POSEKIT_NGINX is not an executable"
else
  reason="no nginx found (nginx on the PATH or in /usr/sbin, or POSEKIT_NGINX), and $how"
fi
give_up "$reason" "CI runs the cluster tests" "the cluster tests will be skipped"
