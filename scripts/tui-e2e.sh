#!/usr/bin/env bash
# End-to-end check of the interactive interface, as a person would use it:
# builds mcphost, runs it in a real terminal (tmux, 120x35) against the
# built-in demo servers and a scripted model, answers the confirmation
# dialogs with keys, and checks the screen and the audit log.
#
# The story: a read runs without asking; a destructive call opens the dialog;
# denying it sends the refusal to the model (its next scripted turn expects an
# error); approving a call "for this session" lets the next call of the same
# tool through without a dialog.
#
# Exit status: 0 passed, 1 a check failed, 3 tmux or jq is missing and could
# not be installed. Set TUI_E2E_KEEP=1 to keep the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "tui-e2e: installing $1" >&2
    apt-get install -y "$1" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$1" >/dev/null 2>&1; } || true
  fi
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "tui-e2e: $1 is required and could not be installed; install it (for example: apt-get install $1)" >&2
    exit 3
  fi
}
need tmux
need jq

work=$(mktemp -d)
sock="mcphost-e2e-$$"
session=tui
tm() { tmux -L "$sock" "$@"; }
cleanup() {
  tm kill-server >/dev/null 2>&1 || true
  if [ "${TUI_E2E_KEEP:-}" = 1 ]; then echo "tui-e2e: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

fail() {
  echo "tui-e2e: FAIL: $*" >&2
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
    if [ -f "$work/exit" ]; then
      if [[ "$s" == *"interactive chat is not available"* ]]; then
        fail "the root command does not start the interactive interface yet (ui.Run is not wired into cmd/mcphost)"
      fi
      fail "mcphost exited with status $(cat "$work/exit") while waiting for: $*"
    fi
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for: $*"
    sleep 0.2
  done
}

# on_screen TEXT... checks the screen once.
on_screen() {
  local s
  s=$(screen)
  for want in "$@"; do
    [[ "$s" == *"$want"* ]] || fail "not on the screen: $want"
  done
}

type_line() {
  tm send-keys -t "$session" -l "$1"
  tm send-keys -t "$session" Enter
}

# A dialog ignores keys for a grace period after it opens (and restarts it
# on every key it ignores): wait well past it before answering.
past_grace() { sleep 1.5; }

echo "tui-e2e: building mcphost" >&2
go build -o "$work/mcphost" ./cmd/mcphost

cat >"$work/model.jsonl" <<'EOF'
# First message: a read, then a destructive call that the person denies.
{"text": "Reading the tasks first.", "toolCalls": [{"name": "tasks__list_tasks", "args": {}}]}
{"expectResult": {"contains": "T-1"}, "text": "Deleting T-1 as asked.", "toolCalls": [{"name": "tasks__delete_task", "args": {"id": "T-1"}}]}
{"expectError": true, "text": "The delete was refused, so T-1 stays."}
# Second message: the person allows update_task for the session; the second call runs without asking.
{"text": "Renaming T-2.", "toolCalls": [{"name": "tasks__update_task", "args": {"id": "T-2", "title": "Renamed once"}}]}
{"expectError": false, "toolCalls": [{"name": "tasks__update_task", "args": {"id": "T-2", "title": "Renamed twice"}}]}
{"expectError": false, "text": "Both renames went through."}
EOF

mkdir -p "$work/state" "$work/config"
env_vars="XDG_STATE_HOME='$work/state' XDG_CONFIG_HOME='$work/config' NO_COLOR= TERM=xterm-256color"
tm new-session -d -s "$session" -x 120 -y 35 \
  "env $env_vars '$work/mcphost' --demo --model 'script:$work/model.jsonl' 2>'$work/stderr'; echo \$? >'$work/exit'; exec sleep 3600"

echo "tui-e2e: waiting for the servers" >&2
wait_for "servers 2/2 ready"

echo "tui-e2e: a read runs, a destructive call asks" >&2
type_line "Delete T-1, after a look at the tasks."
wait_for "tasks/delete_task" "Allow once" "DESTRUCTIVE"
past_grace
tm send-keys -t "$session" -l n

echo "tui-e2e: the denial reaches the model" >&2
wait_for "The delete was refused, so T-1 stays."
on_screen "✓ tasks/list_tasks" "allowed: auto" "⊘ tasks/delete_task" "denied by you"
if [[ "$(screen)" == *"expectation failed"* ]]; then fail "the model did not get the refusal as an error"; fi

echo "tui-e2e: a session grant lets the next call through" >&2
type_line "Rename T-2 twice."
wait_for "tasks/update_task" "This session"
past_grace
tm send-keys -t "$session" -l s
wait_for "Both renames went through."
s=$(screen)
n=$(grep -o "allowed: you, session" <<<"$s" | wc -l)
[ "$n" -eq 2 ] || fail "want 2 calls approved for the session on the screen, got $n"
[[ "$s" == *"grants 1"* ]] || fail "the status line does not count the session grant"
[[ "$s" != *"Allow once"* ]] || fail "a dialog is still open"

echo "tui-e2e: ctrl+c twice quits" >&2
tm send-keys -t "$session" C-c
wait_for "press ctrl+c again to quit"
tm send-keys -t "$session" C-c
for _ in $(seq 1 100); do
  [ -f "$work/exit" ] && break
  sleep 0.1
done
[ -f "$work/exit" ] || fail "mcphost did not quit on the second ctrl+c"
[ "$(cat "$work/exit")" = 0 ] || fail "mcphost exited with status $(cat "$work/exit")"

echo "tui-e2e: the audit log" >&2
audit() { env XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config" "$work/mcphost" audit "$@"; }
audit tail --json -n 100 >"$work/audit.json" || fail "mcphost audit tail failed"
count() { jq "[.[] | select(.kind == \"outcome\" and $1)] | length" "$work/audit.json"; }
[ "$(count '.tool == "list_tasks" and .decidedBy == "auto" and .status == "success"')" = 1 ] ||
  fail "audit: no silent read of list_tasks: $(cat "$work/audit.json")"
[ "$(count '.tool == "delete_task" and .decidedBy == "user" and .status == "denied"')" = 1 ] ||
  fail "audit: no denial of delete_task by the person"
[ "$(count '.tool == "update_task" and .decidedBy == "user:session" and .status == "success"')" = 2 ] ||
  fail "audit: want two update_task calls allowed for the session"
[ "$(count '.tool == "delete_task" and .status == "success"')" = 0 ] || fail "audit: the denied delete ran"
audit verify >/dev/null || fail "mcphost audit verify failed"

echo "tui-e2e: PASS" >&2
