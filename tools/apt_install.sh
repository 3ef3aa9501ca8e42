# Sourced by tools/ensure_*.sh (with give_up, below). apt_install LABEL PACKAGE [FALLBACK]: install Debian's
# PACKAGE (FALLBACK when PACKAGE fails) with apt-get, through sudo when not root. Returns
# 0 when apt-get ran; otherwise sets $how to why it could not try.
apt_install() {
  label=$1 package=$2 fallback=${3:-}
  if ! command -v apt-get >/dev/null 2>&1; then
    how="there is no apt-get to install Debian's $package with"
    return 1
  fi
  if [ "$(id -u)" = 0 ]; then
    as_root=""
  elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
  else
    how="installing Debian's $package needs root, and there is no sudo"
    return 1
  fi
  how="apt-get could not install Debian's $package"
  echo "$label: installing Debian's $package (apt-get)"
  $as_root apt-get update -qq || return 0
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" ||
    { [ -n "$fallback" ] && $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$fallback"; }
  return 0
}

# give_up REASON IN_CI OUTSIDE: nothing found to run some tests with. Under CI (CI set)
# that is an error ("error: REASON; IN_CI", exit 1); elsewhere a note ("note: REASON;
# OUTSIDE", exit 0) and the tests skip, saying why.
give_up() {
  if [ -n "${CI:-}" ]; then
    echo "error: $1; $2" >&2
    exit 1
  fi
  echo "note: $1; $3" >&2
  exit 0
}
