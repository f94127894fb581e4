#!/usr/bin/env bash
# Runs every test of mcphost on a fresh machine: installs what the tests need
# (Go modules; the pinned npm MCP servers in interop/; the official conformance
# suite and Node 22 in conformance/; PostgreSQL from Debian), then checks
# formatting, vets, and runs the whole suite with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing dependencies"
go mod download
# The OpenTelemetry Collector the telemetry tests build (its own module).
(cd telemetry/internal/collector && go mod download)
# The OpenID provider the serve tests build (its own module: zitadel's).
(cd serve/internal/oidcprovider && go mod download)
(cd interop && npm ci --no-audit --no-fund --loglevel=error)
# The official MCP conformance suite, with the Node 22 it needs, from npm.
(cd conformance && npm ci --no-audit --no-fund --loglevel=error)
# Its newer line (protocols 2025-11-25 and 2026-07-28), run beside it.
(cd conformance/next && npm ci --no-audit --no-fund --loglevel=error)

# tmux and jq drive the end-to-end test of the interactive interface.
for tool in tmux jq; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      (apt-get install -y "$tool" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$tool" >/dev/null; })
    else
      echo "$tool is needed for the interface's end-to-end test: install it (for example apt-get install $tool)"; exit 1
    fi
  fi
done

# PostgreSQL, from Debian's postgresql package (the major version the release
# ships), for the store's tests: each starts a throwaway cluster of its own in a
# temporary directory with initdb and postgres (internal/pgtest), as the user
# nobody when run as root. Nothing is started here.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (export DEBIAN_FRONTEND=noninteractive; apt-get install -y postgresql >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y postgresql >/dev/null; })
  else
    echo "PostgreSQL is needed for the store's tests: install it (for example apt-get install postgresql)"; exit 1
  fi
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path '*/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
export GORACE="${GORACE:-atexit_sleep_ms=0}"
go test -race -count=1 -timeout 25m $(go list ./... | grep -v '/conformance$')

echo "== conformance (mcphost's client beside the reference client)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
go test -race -timeout 10m -count=1 -v ./conformance/ >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then cat "$log"; exit "$status"; fi
grep -E 'checks|^ok' "$log" 
