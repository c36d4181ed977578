# shellcheck shell=bash
# Shared by scripts/test and scripts/quickstart (sourced, not run).

# install_packages PKG...: installs the missing Debian packages when run as
# root; otherwise says which are missing and how to install them.
install_packages() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    echo "$(basename "$0"): missing Debian packages: ${missing[*]} (sudo apt-get install -y ${missing[*]})" >&2
  fi
}
