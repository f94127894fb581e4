#!/usr/bin/env bash
# Drives the approval page in a real browser: headless Chromium through
# playwright-core (pinned in interop/package.json). Run by
# cmd/mcphost/webpage_test.go, which starts serve and passes the page's
# link; the steps are agreed over standard input and output (see
# interop/webpage.mjs). Installs Chromium with apt-get when it can.
set -euo pipefail
name=web-e2e
root=$(cd "$(dirname "$0")/.." && pwd)

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
    echo "$name: $1 is required and could not be installed; install it (for example: sudo apt-get install $pkg)" >&2
    exit 3
  fi
}

need chromium
need node nodejs
if [ ! -d "$root/interop/node_modules/playwright-core" ]; then
  echo "$name: playwright-core is not installed; run (cd interop && npm ci)" >&2
  exit 3
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
WEB_E2E_PROFILE=$profile WEB_E2E_CHROMIUM=$(command -v chromium) node "$root/interop/webpage.mjs" "$@"
