#!/usr/bin/env bash
# End-to-end check of trust in the chat, in a real terminal (tmux, 120x35):
#
#  1. a call that asks only because its server is untrusted says so in its
#     dialog and offers trusting the server as a step of its own (ctrl+t);
#     stray keys (Enter, y, Enter in the trust step) never trust it, and
#     Esc denies the call;
#  2. ctrl+t, then ctrl+t again in the step, trusts the server, remembered
#     in the state file, and runs the call;
#  3. /trust lists the servers' trust, and /untrust takes it back, in the
#     state file too.
#
# Exit status: 0 passed, 1 a check failed, 3 tmux or jq is missing and could
# not be installed. TUI_E2E_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."

name=tui-e2e-trust
# shellcheck source=scripts/tui-lib.sh
. scripts/tui-lib.sh
need jq

build fixture
mkdir -p "$work/state" "$work/config"

cat >"$work/model.jsonl" <<'EOF'
{"text": "Listing the tasks.", "toolCalls": [{"name": "tasks__list_tasks", "args": {}}]}
{"text": "Not listed, then."}
{"text": "Listing the tasks again.", "toolCalls": [{"name": "tasks__list_tasks", "args": {}}]}
{"text": "Listed them."}
EOF

trusted() { jq '.trust | length' "$work/state/mcphost/state.json" 2>/dev/null || echo 0; }

tm new-session -d -s "$session" -x 120 -y 35 -c "$work" \
  "XDG_STATE_HOME='$work/state' XDG_CONFIG_HOME='$work/config' NO_COLOR= TERM=xterm-256color '$work/mcphost' --server 'tasks=$work/fixture tasks' --audit '$work/audit.jsonl' --model 'script:$work/model.jsonl' 2>'$work/stderr'; echo \$? >'$work/exit'"
wait_for "servers 1/1 ready"

echo "$name: stray keys never trust the server" >&2
type_line "List the tasks."
wait_for "Untrusted server: that alone makes it ask" "ctrl+t trusts tasks"
past_grace
tm send-keys -t "$session" Enter
tm send-keys -t "$session" -l y
tm send-keys -t "$session" C-t
wait_for "Trust tasks?" "trust tasks and run the call"
tm send-keys -t "$session" Enter
deadline=$((SECONDS + 10))
while [[ "$(screen)" == *"Trust tasks?"* ]]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "Enter in the trust step did not go back"
  sleep 0.2
done
tm send-keys -t "$session" -l y
tm send-keys -t "$session" Escape
wait_for "Not listed, then."
[ "$(trusted)" = 0 ] || fail "stray keys trusted the server: $(cat "$work/state/mcphost/state.json")"
type_line "/trust"
wait_for "tasks: not trusted"

echo "$name: ctrl+t twice trusts the server and runs the call" >&2
type_line "List them again."
wait_for "ctrl+t trusts tasks"
past_grace
tm send-keys -t "$session" C-t
wait_for "Trust tasks?"
tm send-keys -t "$session" C-t
wait_for "tasks is trusted from now on" "Listed them."
[ "$(trusted)" = 1 ] || fail "the trust was not remembered"
n=$(jq -s '[.[] | select(.tool == "list_tasks" and .kind == "outcome" and .status == "success")] | length' "$work/audit.jsonl")
[ "$n" = 1 ] || fail "want one successful list_tasks in the audit log, got $n"

echo "$name: /trust lists, /untrust takes it back" >&2
type_line "/trust"
wait_for "tasks: trusted (/trust in this session, remembered)"
type_line "/untrust tasks"
wait_for "tasks is not trusted from now on"
[ "$(trusted)" = 0 ] || fail "/untrust left the trust in the state file"

quit_ctrl_d
echo "$name: ok" >&2
