#!/usr/bin/env bash
# Runs every test of mcphost on a fresh machine: installs what the tests need
# (Go modules, the pinned npm MCP servers in interop/), then checks formatting,
# vets, and runs the whole suite with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing dependencies"
go mod download
(cd interop && npm ci --no-audit --no-fund --loglevel=error)

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './interop/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
GORACE="${GORACE:-atexit_sleep_ms=0}" go test -race -timeout 25m ./...
