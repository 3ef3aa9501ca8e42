#!/bin/sh
# The compose CLI that validates docker-compose.yml and docker-compose.cluster.yml
# (`make test`): `docker compose` or `docker-compose` the machine has, else Debian's
# docker-compose installed with apt-get where apt exists (through sudo when not root).
# `config` only parses the files: no Docker engine is needed. Without a compose CLI those
# two tests skip, saying why; under CI (CI set) they must run, so finding none is an error.
set -u
. "${0%/*}/apt_install.sh"

find_compose() {
  if command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
    echo "docker compose"
    return 0
  fi
  command -v docker-compose
}

if compose=$(find_compose); then
  echo "compose files: $compose"
  exit 0
fi

if apt_install "compose files" docker-compose; then
  if compose=$(find_compose); then
    echo "compose files: $compose"
    exit 0
  fi
fi

reason="no compose CLI found (docker compose or docker-compose), and $how"
give_up "$reason" "CI validates the compose files" "the compose files will not be validated"
