#!/usr/bin/env bash
# End-to-end check of the chat's dialogs and small habits, in a real
# terminal (tmux, 120x35) with the real binary:
#
#  1. a confirmation dialog clears the screen around it: no fragment of the
#     transcript stands beside the box; "Why it asks" lists the reasons to
#     ask, and the facts in the call's favour stand under their own heading;
#  2. scrolled up, sending a command jumps to the bottom, where its answer is;
#  3. /mcp suggests /servers, and /model gpt-4o the right form;
#  4. the pager's search counts one line in the singular;
#  5. a chat continued with other servers says so next to "continuing the
#     chat", at the bottom of the screen, not above the old transcript.
#
# Exit status: 0 passed, 1 a check failed, 3 tmux is missing and could not
# be installed. TUI_E2E_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."

name=tui-e2e-dialogs
# shellcheck source=scripts/tui-lib.sh
. scripts/tui-lib.sh

build fixture
mkdir -p "$work/state" "$work/config" "$work/chat"
fill=""
for i in $(seq -w 1 60); do fill+="FRAGMENT $i of the old answer, long enough to reach the edges of the screen on both sides ####\\n"; done
cat >"$work/model.jsonl" <<EOF
{"text": "${fill}Deleting T-1 now.", "toolCalls": [{"name": "tasks__delete_task", "args": {"id": "T-1"}}]}
{"expectError": true, "text": "Refused, so listing instead.", "toolCalls": [{"name": "tasks__list_tasks", "args": {}}]}
{"expectResult": {"contains": "T-1"}, "text": "Listed the tasks."}
EOF
cat >"$work/second.jsonl" <<'EOF'
{"text": "Still here."}
EOF

echo "$name: the dialog covers the transcript and says what matters first" >&2
start --demo --model "'script:$work/model.jsonl'"
wait_for "servers 2/2 ready"
type_line "Delete T-1."
wait_for "tasks/delete_task" "Allow once" "DESTRUCTIVE" "Why it asks" "In its favour"
s=$(screen)
if grep -q "FRAGMENT" <<<"$s"; then fail "the transcript shows around the dialog"; fi
# The box leaves two rows above it and four columns beside it: all blank.
head -2 <<<"$s" | grep -q '[^[:space:]]' && fail "the rows above the dialog are not blank"
why=$(line_of "Why it asks") fav=$(line_of "In its favour") local=$(line_of "only touches a closed, local set of data")
destr=$(line_of "may delete or overwrite data")
[ "$why" -gt 0 ] && [ "$why" -lt "$destr" ] && [ "$destr" -lt "$fav" ] && [ "$fav" -lt "$local" ] ||
  fail "the reasons are not split: Why it asks on line $why, destructive $destr, In its favour $fav, closed-world $local"
past_grace
tm send-keys -t "$session" -l n
wait_for "Listed the tasks."

echo "$name: scrolled up, a command jumps to the bottom" >&2
tm send-keys -t "$session" PageUp PageUp
wait_for "scrolled up"
type_line "/mcp"
wait_for "unknown command /mcp: did you mean /servers?"
[[ "$(screen)" != *"scrolled up"* ]] || fail "sending a command did not jump to the bottom"

echo "$name: a /model mistake suggests the right form" >&2
type_line "/model gpt-4o"
wait_for "did you mean /model openai:gpt-4o?"

echo "$name: the pager counts one line in the singular" >&2
pager_search tasks/list_tasks "Draft launch announcement" "1 line matches “Draft launch announcement”"
tm send-keys -t "$session" -l q
wait_gone "result of tasks/list_tasks"
quit

echo "$name: another server set is said beside \"continuing the chat\"" >&2
start --continue --server "'tasks=$work/fixture tasks'" --model "'script:$work/second.jsonl'"
wait_for "continuing the chat" "ran with other servers"
cont=$(line_of "continuing the chat") warn=$(line_of "ran with other servers")
[ "$warn" -gt "$cont" ] && [ "$((warn - cont))" -le 4 ] ||
  fail "the servers warning (line $warn) is not beside the continuing line (line $cont)"
[[ "$(screen)" == *"Listed the tasks."* ]] || fail "the end of the old transcript is not on the screen"
quit
echo "$name: PASS" >&2
