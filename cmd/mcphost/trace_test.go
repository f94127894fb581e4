package main

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/trace"
	"github.com/rogpeppe/go-internal/testscript"
)

// traceMatch is the testscript command "tracematch TRACE SERVER IN OUT":
// the messages TRACE holds for SERVER are, in order, the lines IN (what the
// server read: direction send) and OUT (what it wrote: recv), compared as
// JSON after the same redaction the trace applies.
func traceMatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: tracematch TRACE SERVER IN OUT")
	}
	var sent, recv []any
	for _, line := range jsonLines(ts, args[0]) {
		var r trace.Record
		ts.Check(json.Unmarshal(line, &r))
		if r.Server != args[1] {
			continue
		}
		if r.Cut || r.Message == nil {
			ts.Fatalf("trace: a %s message of %d bytes was not kept", r.Dir, r.Size)
		}
		var v any
		ts.Check(json.Unmarshal(r.Message, &v))
		if r.Dir == "send" {
			sent = append(sent, v)
		} else {
			recv = append(recv, v)
		}
	}
	for _, c := range []struct {
		file  string
		dir   string
		trace []any
	}{{args[2], "send", sent}, {args[3], "recv", recv}} {
		var want []any
		for _, line := range jsonLines(ts, c.file) {
			var v any
			ts.Check(json.Unmarshal(audit.Redact(line), &v))
			want = append(want, v)
		}
		if len(want) == 0 {
			ts.Fatalf("%s is empty: the server's side logged nothing", c.file)
		}
		if len(c.trace) != len(want) {
			ts.Fatalf("trace has %d %s messages for %s, the server's log %d", len(c.trace), c.dir, args[1], len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(c.trace[i], want[i]) {
				got, _ := json.Marshal(c.trace[i])
				exp, _ := json.Marshal(want[i])
				ts.Fatalf("%s message %d:\ntrace:  %s\nserver: %s", c.dir, i+1, got, exp)
			}
		}
	}
}

// jsonLines reads a file's non-empty lines.
func jsonLines(ts *testscript.TestScript, name string) [][]byte {
	f, err := os.Open(ts.MkAbs(name))
	ts.Check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out [][]byte
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			out = append(out, append([]byte(nil), sc.Bytes()...))
		}
	}
	ts.Check(sc.Err())
	return out
}
