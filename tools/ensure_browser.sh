#!/bin/sh
# The browser of the browser tests (`make test`): a Chromium the machine has, else
# Debian's chromium installed with apt-get where apt exists (through sudo when not root).
# Without one the browser tests skip, saying why; under CI (CI set) they must run, so
# finding none is an error here.
set -u
. "${0%/*}/apt_install.sh"

find_browser() {
  if [ -n "${POSEKIT_BROWSER:-}" ]; then
    command -v "$POSEKIT_BROWSER"
    return
  fi
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name"; then
      return 0
    fi
  done
  return 1
}

if browser=$(find_browser); then
  echo "browser tests: $browser"
  exit 0
fi

if [ -z "${POSEKIT_BROWSER:-}" ] && apt_install "browser tests" chromium; then
  if browser=$(find_browser); then
    echo "browser tests: $browser"
    exit 0
  fi
fi

if [ -n "${POSEKIT_BROWSER:-}" ]; then
  reason="POSEKIT_BROWSER=$POSEKIT_BROWSER is not an executable"
else
  reason="no Chromium found (chromium, chromium-browser, google-chrome on the PATH, or POSEKIT_BROWSER), and $how"
fi
give_up "$reason" "CI runs the browser tests" "the browser tests will be skipped"
