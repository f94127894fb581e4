#!/usr/bin/env bash
# Drives serve's team approval page in a real browser: headless Chromium
# through playwright-core (pinned in interop/package.json), logging people
# in on the test OpenID provider's form. Run by serve/team_browser_test.go,
# which starts serve and the provider and passes serve's origin; the steps
# are agreed over standard input and output (see interop/teampage.mjs).
# Installs Chromium with apt-get when it can; exits 3 when a part is
# missing.
set -euo pipefail
name=team-e2e
root=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=scripts/need.sh
. "$root/scripts/need.sh"

need chromium
need node nodejs
if [ ! -d "$root/interop/node_modules/playwright-core" ]; then
  echo "$name: playwright-core is not installed; run (cd interop && npm ci)" >&2
  exit 3
fi
WEB_E2E_CHROMIUM=$(command -v chromium) node "$root/interop/teampage.mjs" "$@"
