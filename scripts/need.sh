# Sourced by the end-to-end scripts after setting $name (for messages).
# Not a script of its own.

# need TOOL [PACKAGE] installs PACKAGE (TOOL by default) with apt-get when
# it can, else exits 3 saying how to install it.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local pkg=${2:-$1}
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "$name: installing $pkg" >&2
    apt-get install -y "$pkg" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$pkg" >/dev/null 2>&1; } || true
  fi
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "$name: $1 is required and could not be installed; install it (for example: apt-get install $pkg)" >&2
    exit 3
  fi
}
