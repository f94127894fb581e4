#!/usr/bin/env bash
# End-to-end check of the interactive interface, as a person would use it:
# builds mcphost, runs it in a real terminal (tmux, 120x35) against the
# built-in demo servers and a scripted model, answers the confirmation
# dialogs with keys, and checks the screen and the audit log.
#
# The story: a read runs without asking; a destructive call opens the dialog;
# denying it sends the refusal to the model (its next scripted turn expects an
# error); approving a call "for this session" lets the next call of the same
# tool through without a dialog. A result opens in the pager and is saved;
# Ctrl-C clears a draft and a second one two seconds later does not quit;
# after quitting the conversation is in the terminal's scrollback. A second
# run recalls the first run's messages with the up arrow and queues a message
# while a slow tool runs; a third, on a 40x12 terminal, shows the dialog's
# buttons and key hints and cancels the question with Ctrl-C. A fourth, with
# an untrusted server, answers a tier-3 confirmation: the waiting dialog
# rings the bell, sends a desktop notification (wrapped for tmux) and names
# the call in the pane's title; a paste into the name field does not count;
# the name typed straight away goes into the field, letter by letter, and
# Enter allows the call.
#
# Exit status: 0 passed, 1 a check failed, 3 tmux or jq is missing and could
# not be installed. Set TUI_E2E_KEEP=1 to keep the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."

name=tui-e2e
# shellcheck source=scripts/tui-lib.sh
. scripts/tui-lib.sh
need jq

# on_screen TEXT... checks the screen once.
on_screen() {
  local s
  s=$(screen)
  for want in "$@"; do
    [[ "$s" == *"$want"* ]] || fail "not on the screen: $want"
  done
}

# wait_exit waits for mcphost to end; wait_exit ok also wants status 0.
wait_exit() {
  for _ in $(seq 1 100); do
    [ -f "$work/exit" ] && break
    sleep 0.1
  done
  [ -f "$work/exit" ] || fail "mcphost did not quit: $*"
  [ "$(cat "$work/exit")" = 0 ] || fail "mcphost exited with status $(cat "$work/exit")"
}


build fixture

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
tm new-session -d -s "$session" -x 120 -y 35 -c "$work" \
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

echo "tui-e2e: the pager opens a result, searches it and saves it" >&2
pager_search tasks/update_task Renamed "lines match"
tm send-keys -t "$session" -l s
wait_for "save to file: mcphost-tasks-update_task.txt"
tm send-keys -t "$session" Enter
wait_for "saved mcphost-tasks-update_task.txt"
grep -q "Renamed twice" "$work/mcphost-tasks-update_task.txt" || fail "the saved file lacks the result"
tm send-keys -t "$session" -l q
wait_gone "result of tasks/update_task"
# A key typed right after Esc would arrive as Alt and that key: wait for
# the focus to be back on the input first.
tm send-keys -t "$session" Escape
wait_gone "TRANSCRIPT"

echo "tui-e2e: ctrl+c clears a draft; a second one two seconds later does not quit" >&2
tm send-keys -t "$session" -l "a draft I keep"
wait_for "a draft I keep"
tm send-keys -t "$session" C-c
wait_for "input cleared"
wait_gone "a draft I keep"
sleep 2
tm send-keys -t "$session" C-c
wait_for "press ctrl+c again to quit"
sleep 2
[ ! -f "$work/exit" ] || fail "mcphost quit on a ctrl+c two seconds after clearing a draft"
tm send-keys -t "$session" Up
wait_for "a draft I keep"
tm send-keys -t "$session" C-c

echo "tui-e2e: ctrl+c twice quits; the conversation stays in the scrollback" >&2
wait_for "input cleared"
tm send-keys -t "$session" C-c C-c
wait_exit "on ctrl+c twice"
back=$(tm capture-pane -t "$session" -p -S -300)
for want in "Delete T-1, after a look at the tasks." "The delete was refused, so T-1 stays." "Both renames went through."; do
  [[ "$back" == *"$want"* ]] || { echo "$back" >"$work/screen"; fail "the scrollback after quitting lacks: $want"; }
done

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

# restart NAME W H ARGS... runs mcphost again in a fresh W x H terminal.
restart() {
  local w=$1 h=$2
  shift 2
  rm -f "$work/exit"
  # The new session starts before the old one ends: a tmux server with no
  # session exits, and a command that reaches it meanwhile fails.
  tm new-session -d -s "$session-next" -x "$w" -y "$h" -c "$work" \
    "env $env_vars '$work/mcphost' $* 2>'$work/stderr'; echo \$? >'$work/exit'; exec sleep 3600"
  tm kill-session -t "$session"
  tm rename-session -t "$session-next" "$session"
}

echo "tui-e2e: a second run: the first run's history, a queued message" >&2
cat >"$work/model2.jsonl" <<'MODEL'
{"text": "Asking the slow tool.", "toolCalls": [{"name": "flaky__slow", "args": {}}]}
{"expectResult": {"contains": "answered after"}, "text": "The slow tool answered."}
{"text": "Got the queued message."}
MODEL
restart 120 35 --server "'flaky=$work/fixture flaky --delay 4s'" --trust flaky --model "'script:$work/model2.jsonl'"
wait_for "servers 1/1 ready"
tm send-keys -t "$session" Up
wait_for "› a draft I keep"
tm send-keys -t "$session" Up
wait_for "› Rename T-2 twice."
tm send-keys -t "$session" C-c
type_line "Wait for the slow tool."
wait_for "flaky/slow" "running"
type_line "And then this."
wait_for "⏸ queued And then this." "1 queued"
wait_for "Got the queued message."
on_screen "› And then this." "The slow tool answered."
[[ "$(screen)" != *"⏸ queued"* ]] || fail "the queued message is still shown after it was sent"
tm send-keys -t "$session" C-d
wait_for "press ctrl+d again to quit"
tm send-keys -t "$session" C-d
wait_exit "on a second ctrl+d on an empty input"

echo "tui-e2e: a third run at 40x12: the dialog's buttons show; ctrl+c cancels the question" >&2
cat >"$work/model3.jsonl" <<'MODEL'
{"text": "Deleting.", "toolCalls": [{"name": "tasks__delete_task", "args": {"id": "T-3"}}]}
MODEL
restart 40 12 --demo --model "'script:$work/model3.jsonl'"
wait_for "2 of 2 servers ready"
type_line "Delete T-3."
wait_for "tasks/delete_task" "DESTRUCTIVE" "Deny ]" "n/esc deny"
tm send-keys -t "$session" C-c
wait_for "cancelled by you"
tm send-keys -t "$session" C-c C-c
wait_exit "at 40x12"

echo "tui-e2e: a fourth run: a tier-3 confirmation calls the person and takes the typed name" >&2
cat >"$work/model4.jsonl" <<'MODEL'
{"text": "Deleting T-1.", "toolCalls": [{"name": "tasks__delete_task", "args": {"id": "T-1"}}]}
{"expectError": false, "text": "T-1 is gone."}
MODEL
# KITTY_WINDOW_ID makes the outer terminal kitty: OSC 9, wrapped for tmux.
env_vars="$env_vars KITTY_WINDOW_ID=1"
restart 120 35 --server "'tasks=$work/fixture tasks'" --model "'script:$work/model4.jsonl'"
tm pipe-pane -t "$session" -o "cat >>'$work/written'"
wait_for "servers 1/1 ready"
title() { tm display-message -p -t "$session" '#{pane_title}'; }
[ "$(title)" = "mcphost" ] || fail "the title before any question is '$(title)', want mcphost"
type_line "Delete T-1."
wait_for "tasks/delete_task" "UNKNOWN · T3" "type delete_task and press enter"
[ "$(title)" = "mcphost — waiting: tasks/delete_task" ] || fail "the title while the dialog waits is '$(title)'"
past_grace
# the bell, then OSC 9 in tmux's passthrough, once
called=$'\a\ePtmux;\e\e]9;mcphost waiting for you: tasks/delete_task\a\e\\'
[ "$(grep -aoF "$called" "$work/written" | wc -l)" = 1 ] ||
  fail "want the bell and one desktop notification wrapped for tmux; the program wrote: $(grep -ao $'\a[^\a]*' "$work/written" | od -c | head -20)"
tm set-buffer "delete_task"
tm paste-buffer -p -t "$session"
wait_for "pasted text does not count: type it" "> ▏"
tm send-keys -t "$session" -l "delete_task"
wait_for "> delete_task▏"
s=$(screen)
[[ "$s" != *"Edit the arguments"* && "$s" != *"tell the model why"* ]] || fail "a letter of the name opened a field of its own"
tm send-keys -t "$session" Enter
wait_for "T-1 is gone." "allowed: you"
[ "$(title)" = "mcphost" ] || fail "the title after the answer is '$(title)', want mcphost"
[ "$(grep -aoF "$called" "$work/written" | wc -l)" = 1 ] || fail "the person was called again after the answer"
tm send-keys -t "$session" C-c C-c
wait_exit "after the tier-3 confirmation"

echo "tui-e2e: PASS" >&2
