# Shared by the end-to-end scripts of the interactive interface: they source
# it from the repository's root after setting $name (for messages and the
# tmux server's socket), and get tmux, a work directory, a tmux session and
# the helpers that drive and read it. Not a script of its own.

# shellcheck source=scripts/need.sh
. scripts/need.sh
need tmux
sock=${sock:-mcphost-$name-$$}

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

# wait_gone TEXT polls the screen until TEXT has left it.
wait_gone() {
  local deadline=$((SECONDS + ${TUI_E2E_TIMEOUT:-30}))
  while [[ "$(screen)" == *"$1"* ]]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "still on the screen: $1"
    sleep 0.2
  done
}

# line_of TEXT: the screen line (from 1) TEXT first stands on, 0 if none.
line_of() { screen | grep -nF -- "$1" | head -1 | cut -d: -f1 || true; }

# esc sends Escape alone: a key right after it would read as alt+key.
esc() {
  tm send-keys -t "$session" Escape
  sleep 0.4
}

# start ARGS...: mcphost in $work/chat, in a fresh tmux server of 120 x
# $rows (35 unless set).
start() {
  rm -f "$work/exit"
  tm kill-server >/dev/null 2>&1 || true
  tm new-session -d -s "$session" -x 120 -y "${rows:-35}" \
    "cd '$work/chat' && env XDG_STATE_HOME='$work/state' XDG_CONFIG_HOME='$work/config' NO_COLOR= TERM=xterm-256color '$work/mcphost' $* 2>'$work/stderr'; echo \$? >'$work/exit'; exec sleep 3600"
}

# quit ends mcphost with ctrl+c twice, keeps its last screen in
# $work/exit-screen and stops the tmux server.
quit() {
  tm send-keys -t "$session" C-c
  sleep 0.2
  tm send-keys -t "$session" C-c
  for _ in $(seq 1 100); do [ -f "$work/exit" ] && break; sleep 0.1; done
  [ -f "$work/exit" ] || fail "mcphost did not quit"
  tm capture-pane -t "$session" -p -S -200 >"$work/exit-screen"
  tm kill-server >/dev/null 2>&1 || true
}

# quit_ctrl_d ends mcphost with ctrl+d twice and wants status 0.
quit_ctrl_d() {
  tm send-keys -t "$session" C-d
  wait_for "press ctrl+d again to quit"
  tm send-keys -t "$session" C-d
  for _ in $(seq 1 100); do [ -f "$work/exit" ] && break; sleep 0.1; done
  [ -f "$work/exit" ] || fail "two ctrl+d did not quit"
  [ "$(cat "$work/exit")" = 0 ] || fail "mcphost exited with status $(cat "$work/exit")"
}

# build [fixture] builds mcphost (and the fixture server) into $work.
build() {
  echo "$name: building mcphost" >&2
  go build -o "$work/mcphost" ./cmd/mcphost
  [ "${1:-}" != fixture ] || go build -o "$work/fixture" ./fixtures/cmd/fixture
}

# pager_search TOOL TEXT WANT opens the pager on the last result of TOOL
# (server/tool), searches it for TEXT and waits for WANT.
pager_search() {
  tm send-keys -t "$session" F2
  wait_for "TRANSCRIPT"
  tm send-keys -t "$session" -l o
  wait_for "result of $1" "s save"
  tm send-keys -t "$session" -l /
  tm send-keys -t "$session" -l "$2"
  tm send-keys -t "$session" Enter
  wait_for "$3"
}
