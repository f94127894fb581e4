#!/usr/bin/env bash
# End-to-end check of saved chats and elicitation forms in the interactive
# interface, in a real terminal (tmux, 120x40) with the real binary:
#
#  1. a chat with a scripted model is saved as it happens; /export writes it
#     as Markdown; mcphost sessions lists it;
#  2. the exit screen says how to continue it (mcphost --resume ID);
#  3. mcphost --continue, in the same directory and without --model, shows
#     the earlier messages, says that session approvals ended, and goes on
#     with the chat's own model;
#  4. mcphost --resume alone opens the picker (the first prompt, the
#     directory, the model); ↓/↑ and Enter resume the chosen chat;
#  5. a chat continued with other servers says which are missing or changed;
#  6. server-everything's elicitation form (a multi-select among its
#     fields) is filled with keys and accepted by the real server.
#
# Exit status: 0 passed, 1 a check failed, 3 tmux is missing and could not
# be installed. Step 6 needs the npm servers (npm ci in interop/); set
# MCPHOST_SKIP_INTEROP=1 to skip it. TUI_E2E_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

name=tui-e2e-sessions
# shellcheck source=scripts/tui-lib.sh
. scripts/tui-lib.sh
rows=40

build
mkdir -p "$work/state" "$work/config" "$work/chat"
cat >"$work/first.jsonl" <<'EOF'
{"text": "Reading the tasks first.", "toolCalls": [{"name": "tasks__list_tasks", "args": {}}]}
{"expectResult": {"contains": "T-1"}, "text": "T-1 is the launch announcement."}
EOF
cat >"$work/second.jsonl" <<'EOF'
{"text": "Still T-1, as before."}
EOF

echo "tui-e2e-sessions: a chat is saved and exported" >&2
start --demo --model "'script:$work/first.jsonl'"
wait_for "servers 2/2 ready"
type_line "What is T-1?"
wait_for "T-1 is the launch announcement."
type_line "/export chat.md"
wait_for "wrote the conversation to chat.md"
quit
grep -q "^## You" "$work/chat/chat.md" && grep -q "### Tool call \`tasks/list_tasks\`" "$work/chat/chat.md" ||
  fail "the export lacks the message or the call: $(cat "$work/chat/chat.md")"
list=$(env XDG_STATE_HOME="$work/state" "$work/mcphost" sessions)
[[ "$list" == *"$work/chat"*"What is T-1?"* ]] || fail "mcphost sessions does not list the chat by its first prompt: $list"
id=$(env XDG_STATE_HOME="$work/state" "$work/mcphost" sessions --json | sed -n 's/.*"id": "\(.*\)".*/\1/p' | head -1)
grep -q "To continue this chat: mcphost --resume $id" "$work/exit-screen" ||
  fail "the exit screen does not say how to resume $id: $(tail -5 "$work/exit-screen")"

echo "tui-e2e-sessions: --continue shows it and goes on with its own model" >&2
start --demo --continue
wait_for "What is T-1?" "T-1 is the launch announcement." "continuing the chat" "ended with it"
wait_for "servers 2/2 ready" "first.jsonl"
type_line "And now?"
# The saved model answers again (no "No model is configured"): its lines
# stand on the screen a second time, after the resumed transcript's.
wait_count 2 "Reading the tasks first."
wait_count 2 "T-1 is the launch announcement."
quit
grep -q "To continue this chat: mcphost --resume $id" "$work/exit-screen" || fail "the exit screen of the resumed chat lacks its id"

echo "tui-e2e-sessions: --resume alone picks with the arrows" >&2
start --demo --resume --model "'script:$work/second.jsonl'"
wait_for "Resume which chat?" "What is T-1?" "· $work/chat" "script:"
tm send-keys -t "$session" Down Up Enter
wait_for "continuing the chat $id" "T-1 is the launch announcement."
wait_for "servers 2/2 ready"
type_line "And now?"
wait_for "Still T-1, as before."
quit

echo "tui-e2e-sessions: another server set is said before the first turn" >&2
go build -o "$work/fixture" ./fixtures/cmd/fixture
start --continue --server "'tasks=$work/fixture tasks'" --model "'script:$work/second.jsonl'"
wait_for "ran with other servers (missing now: bare; another command or URL: tasks)" "continuing the chat $id"
quit

if [ "${MCPHOST_SKIP_INTEROP:-}" = 1 ]; then
  echo "tui-e2e-sessions: MCPHOST_SKIP_INTEROP=1: the elicitation step is skipped" >&2
  echo "tui-e2e-sessions: PASS" >&2
  exit 0
fi
everything="$root/interop/node_modules/.bin/mcp-server-everything"
[ -x "$everything" ] || fail "server-everything is not installed: run npm ci in interop/ (or set MCPHOST_SKIP_INTEROP=1)"

echo "tui-e2e-sessions: server-everything's form, multi-select included" >&2
cat >"$work/ask.jsonl" <<'EOF'
{"text": "Asking the server.", "toolCalls": [{"name": "ev__trigger-elicitation-request", "args": {}}]}
{"expectResult": {"contains": "User provided the requested information"}, "text": "The server took your answers."}
EOF
start --server "'ev=node $everything stdio'" --model "'script:$work/ask.jsonl'"
wait_for "servers 1/1 ready"
type_line "Ask me."
wait_for "ev/trigger-elicitation-request" "Allow once"
past_grace
type_line "trigger-elicitation-request" # tier 3: the name field has the focus
wait_for "A server asks you for information" "untitledSingleSelectEnum"
past_grace
tm send-keys -t "$session" -l "Ada Lovelace"
for _ in $(seq 9); do tm send-keys -t "$session" Tab; done # to untitledMultipleSelectEnum
tm send-keys -t "$session" Right Space                     # Piano, beside the default Guitar
wait_for "[x] Guitar ›[x] Piano"
for _ in $(seq 4); do tm send-keys -t "$session" Tab; done # to Accept
wait_for "[ Accept ]"
tm send-keys -t "$session" Enter
wait_for "The server took your answers." "ran · allowed: you, once"
quit
echo "tui-e2e-sessions: PASS" >&2
