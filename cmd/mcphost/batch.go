package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// batchCall is one line of a --batch file.
type batchCall struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
	Expect *expectation    `json:"expect,omitempty"`
	line   int
}

// expectation is what a batch line requires of its call; every field set
// must hold.
type expectation struct {
	Verdict  string `json:"verdict,omitempty"`  // allow, ask, deny: the gate's decision
	Status   string `json:"status,omitempty"`   // success, tool-error, denied, blocked, unknown, …
	IsError  *bool  `json:"isError,omitempty"`  // the tool returned isError
	Class    string `json:"class,omitempty"`    // read, additive, destructive, unknown
	Tier     *int   `json:"tier,omitempty"`     // 0–3
	Contains string `json:"contains,omitempty"` // the result's text contains this
}

// readBatch parses a JSON Lines file of calls; blank lines and lines
// starting with # are skipped. Any bad line fails the whole file before
// anything runs.
func readBatch(path string, r io.Reader) ([]batchCall, error) {
	var calls []batchCall
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var c batchCall
		if err := dec.Decode(&c); err != nil {
			return nil, usageError(fmt.Errorf("%s:%d: %v (a line is {\"tool\": \"server/tool\", \"args\": {…}, \"expect\": {…}})", path, n, err))
		}
		if _, _, err := splitRef(c.Tool); err != nil {
			return nil, usageError(fmt.Errorf("%s:%d: %v", path, n, err))
		}
		if len(c.Args) > 0 {
			if _, err := parseArgs(string(c.Args)); err != nil {
				return nil, usageError(fmt.Errorf("%s:%d: %v", path, n, err))
			}
		}
		c.line = n
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return calls, nil
}

// unmet lists the expectations r does not meet.
func (e *expectation) unmet(r *host.Result) []string {
	if e == nil {
		return nil
	}
	var out []string
	check := func(what, want, got string) {
		if want != "" && want != got {
			out = append(out, fmt.Sprintf("%s %s, got %s", what, want, got))
		}
	}
	check("verdict", e.Verdict, r.Decision.Verdict.String())
	check("status", e.Status, string(r.Status))
	check("class", e.Class, r.Decision.Class.String())
	if e.Tier != nil && *e.Tier != int(r.Decision.Tier) {
		out = append(out, fmt.Sprintf("tier %d, got %d", *e.Tier, r.Decision.Tier))
	}
	isErr := r.Result != nil && r.Result.IsError
	if e.IsError != nil && *e.IsError != isErr {
		out = append(out, fmt.Sprintf("isError %v, got %v", *e.IsError, isErr))
	}
	if e.Contains != "" && !strings.Contains(host.ResultText(r.Result), e.Contains) {
		out = append(out, fmt.Sprintf("a result containing %q", e.Contains))
	}
	return out
}

// runBatch runs every call of the file in order through the gate and
// prints one line per call and a summary; it fails when an expectation is
// not met.
func runBatch(ss *session, s *streams, path string, calls []batchCall, ctx context.Context) error {
	passed, failed := 0, 0
	for _, c := range calls {
		server, tool, _ := splitRef(c.Tool)
		r := ss.gate.Call(ctx, host.Call{Server: server, Tool: tool, Args: c.Args})
		bad := c.Expect.unmet(r)
		mark := "ok  "
		if len(bad) > 0 {
			mark = "FAIL"
			failed++
		} else {
			passed++
		}
		fmt.Fprintf(s.Out, "%s %s:%d %s: %s by %s → %s\n", mark, path, c.line, sanitize.Line(c.Tool), r.Decision.Verdict, r.DecidedBy, r.Status)
		for _, b := range bad {
			fmt.Fprintf(s.Out, "       want %s\n", sanitize.Line(b))
		}
	}
	fmt.Fprintf(s.Out, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return withCode(exitError, fmt.Errorf("%d of %d calls did not meet their expectations", failed, len(calls)))
	}
	return nil
}

func openBatch(path string) ([]batchCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError(err)
	}
	defer f.Close()
	return readBatch(path, f)
}
