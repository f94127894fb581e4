#!/usr/bin/env bash
# Drives the approval page in a real browser: headless Chromium through
# playwright-core (pinned in interop/package.json). Run by
# cmd/mcphost/webpage_test.go, which starts serve and passes the page's
# link; the steps are agreed over standard input and output (see
# interop/webpage.mjs). Installs Chromium with apt-get when it can.
set -euo pipefail
name=web-e2e
root=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=scripts/need.sh
. "$root/scripts/need.sh"

need chromium
need node nodejs
if [ ! -d "$root/interop/node_modules/playwright-core" ]; then
  echo "$name: playwright-core is not installed; run (cd interop && npm ci)" >&2
  exit 3
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
WEB_E2E_PROFILE=$profile WEB_E2E_CHROMIUM=$(command -v chromium) node "$root/interop/webpage.mjs" "$@"
