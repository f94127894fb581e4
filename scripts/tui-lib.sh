# Shared by the end-to-end scripts of the interactive interface: they source
# it after setting $name (for messages) and $sock (the tmux server), and get
# a work directory, a tmux session and the helpers that drive and read it.
# Not a script of its own.

# need TOOL installs TOOL with apt-get when it can, else exits 3.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "$name: installing $1" >&2
    apt-get install -y "$1" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$1" >/dev/null 2>&1; } || true
  fi
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "$name: $1 is required and could not be installed; install it (for example: apt-get install $1)" >&2
    exit 3
  fi
}

work=$(mktemp -d)
session=tui
tm() { tmux -L "$sock" "$@"; }
cleanup() {
  tm kill-server >/dev/null 2>&1 || true
  if [ "${TUI_E2E_KEEP:-}" = 1 ]; then echo "$name: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

fail() {
  echo "$name: FAIL: $*" >&2
  echo "--- screen" >&2
  tm capture-pane -t "$session" -p >&2 2>/dev/null || cat "$work/screen" >&2 2>/dev/null || true
  if [ -s "$work/stderr" ]; then
    echo "--- stderr" >&2
    cat "$work/stderr" >&2
  fi
  exit 1
}

screen() { tm capture-pane -t "$session" -p | tee "$work/screen"; }

# wait_for TEXT... polls the screen until every TEXT is on it.
wait_for() {
  local deadline=$((SECONDS + ${TUI_E2E_TIMEOUT:-30}))
  while :; do
    local s ok=1
    s=$(screen)
    for want in "$@"; do
      [[ "$s" == *"$want"* ]] || { ok=0; break; }
    done
    [ "$ok" = 1 ] && return 0
    [ -f "$work/exit" ] && fail "mcphost exited with status $(cat "$work/exit") while waiting for: $*"
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for: $*"
    sleep 0.2
  done
}

# wait_count N TEXT polls the screen until TEXT stands on it N times: for
# text a resumed transcript already shows once.
wait_count() {
  local deadline=$((SECONDS + ${TUI_E2E_TIMEOUT:-30}))
  while [ "$(screen | grep -cF -- "$2")" -lt "$1" ]; do
    [ -f "$work/exit" ] && fail "mcphost exited with status $(cat "$work/exit") while waiting for $1 times: $2"
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for $1 times: $2"
    sleep 0.2
  done
}

type_line() {
  tm send-keys -t "$session" -l "$1"
  tm send-keys -t "$session" Enter
}

# A dialog ignores keys for a grace period after it opens (and restarts it
# on every key it ignores): wait well past it before answering.
past_grace() { sleep 1.5; }
