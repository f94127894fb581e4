#!/usr/bin/env bash
# End-to-end check of `mcphost approve` in a real terminal (tmux, 100x40)
# with the real binary. A stand-in for mcphost serve (the approver
# package's test binary with MCPHOST_APPROVER_HARNESS set: a gate over a
# real fixture server and the approver socket) asks about three calls of
# set_value, one after the other:
#
#  1. from a trusted server (tier 2): approved with y, after the grace period;
#  2. from an untrusted one (tier 3): approved by typing the tool's name;
#  3. from the trusted one again (tier 2): denied with n.
#
# approve starts first, with no serve running: it says it waits for one and
# connects when the stand-in starts. The calls queue in that order; the
# status line names the client that asks and counts them down. Then the
# first and second ran exactly once and the third never ran; when the
# stand-in stops, approve stays and waits again, and when it starts again
# (a serve restarting) approve connects to it and shows its calls; ctrl+c
# quits (exit 0).
#
# Exit status: 0 passed, 1 a check failed, 3 tmux or jq is missing and
# could not be installed. TUI_E2E_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."

name=tui-e2e-approve
# shellcheck source=scripts/tui-lib.sh
. scripts/tui-lib.sh
need jq

harness_pid=
stop_harness() {
  if [ -n "$harness_pid" ]; then
    kill "$harness_pid" 2>/dev/null || true
    wait "$harness_pid" 2>/dev/null || true
    harness_pid=
  fi
}
trap 'stop_harness; cleanup' EXIT

echo "$name: building mcphost and the serve stand-in" >&2
go build -o "$work/mcphost" ./cmd/mcphost
go test -c -o "$work/harness" ./approver/
mkdir -p "$work/state"

start_harness() {
  rm -f "$work/ready" "$work/done" "$work/results.jsonl"
  MCPHOST_APPROVER_HARNESS="$work" "$work/harness" 2>"$work/harness.err" &
  harness_pid=$!
  for _ in $(seq 1 100); do [ -f "$work/ready" ] && break; sleep 0.1; done
  [ -f "$work/ready" ] || fail "the serve stand-in did not start: $(cat "$work/harness.err")"
}

echo "$name: no serve runs yet: approve waits for one" >&2
tm new-session -d -s "$session" -x 100 -y 40 \
  "env XDG_STATE_HOME='$work/state' NO_COLOR= TERM=xterm-256color '$work/mcphost' approve 2>'$work/stderr'; echo \$? >'$work/exit'; exec sleep 3600"
wait_for "waiting for mcphost serve to start" "No mcphost serve runs now"
start_harness

echo "$name: three calls queue; the first (tier 2) is approved once" >&2
wait_for "Asked by e2e client 1.0" "connected to mcphost serve (e2e harness)" "3 waiting" "f/set_value" "T2" '"value": "blue"'
past_grace
tm send-keys -t "$session" y

echo "$name: the second (tier 3) needs the tool's name typed" >&2
wait_for "2 waiting" "T3" '"value": "green"' "Allowed f/set_value (once)."
past_grace
# The typed confirmation has the focus: a name typed wrong approves nothing
# (had it, the keys after it would land in the third dialog and the story
# below would not finish).
tm send-keys -t "$session" -l "set_valu"
tm send-keys -t "$session" Enter
tm send-keys -t "$session" -l "e"
tm send-keys -t "$session" Enter

echo "$name: the third is denied" >&2
wait_for "1 waiting" '"value": "red"' "Allowed f/set_value (once)."
past_grace
tm send-keys -t "$session" n
wait_for "nothing waiting" "No call is waiting" "Denied f/set_value."

for _ in $(seq 1 100); do [ -f "$work/done" ] && break; sleep 0.1; done
[ -f "$work/done" ] || fail "the calls did not all return: $(cat "$work/harness.err")"
results=$(cat "$work/results.jsonl")
check() { # N STATUS RUNS
  jq -e -s --argjson n "$1" --arg s "$2" --argjson r "$3" 'map(select(.n == $n)) | length == 1 and .[0].status == $s and .[0].runs == $r' \
    <<<"$results" >/dev/null || fail "call $1: want $2 after $3 runs of set_value, got: $results"
}
check 1 success 1
check 2 success 1
check 3 denied 1 # the trusted server's set_value ran once: for call 1

echo "$name: the serve stops; approve stays and waits for one again" >&2
stop_harness
wait_for "waiting for mcphost serve to start" "again when one restarts"

echo "$name: the serve starts again; approve connects to it" >&2
start_harness
wait_for "Asked by e2e client 1.0" "connected to mcphost serve (e2e harness)" "3 waiting" '"value": "blue"'

echo "$name: ctrl+c quits, exit 0" >&2
tm send-keys -t "$session" C-c
for _ in $(seq 1 100); do [ -f "$work/exit" ] && break; sleep 0.1; done
[ -f "$work/exit" ] || fail "mcphost approve did not quit on ctrl+c"
[ "$(cat "$work/exit")" = 0 ] || fail "approve exited $(cat "$work/exit") on ctrl+c, want 0"
stop_harness

echo "$name: PASS" >&2
