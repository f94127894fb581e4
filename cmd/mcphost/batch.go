package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
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
// must hold. A line without expectations requires status success.
type expectation struct {
	Verdict  string `json:"verdict,omitempty"`  // allow, ask, deny: the gate's decision
	Status   string `json:"status,omitempty"`   // one of batchStatuses
	IsError  *bool  `json:"isError,omitempty"`  // the tool returned isError
	Class    string `json:"class,omitempty"`    // read, additive, destructive, unknown
	Tier     *int   `json:"tier,omitempty"`     // 0–3
	Contains string `json:"contains,omitempty"` // the result's text contains this
}

// batchStatuses are the values of a call's status, as a batch line can
// expect them (README, "call --batch").
var batchStatuses = []host.Status{
	host.StatusSuccess, host.StatusToolError, host.StatusDenied, host.StatusBlocked,
	host.StatusUnknown, host.StatusNotSent, host.StatusRejected, host.StatusThrottled, host.StatusError,
}

// check reports the first value of e that no call can have.
func (e *expectation) check() error {
	if e == nil {
		return nil
	}
	if e.Verdict != "" {
		var v decide.Verdict
		if v.UnmarshalText([]byte(e.Verdict)) != nil {
			return fmt.Errorf("unknown verdict %q (want allow, ask or deny)", e.Verdict)
		}
	}
	if e.Class != "" {
		var c decide.Class
		if c.UnmarshalText([]byte(e.Class)) != nil {
			return fmt.Errorf("unknown class %q (want read, additive, destructive or unknown)", e.Class)
		}
	}
	if e.Status != "" && !slices.Contains(batchStatuses, host.Status(e.Status)) {
		var want []string
		for _, st := range batchStatuses {
			want = append(want, string(st))
		}
		return fmt.Errorf("unknown status %q (want one of %s)", e.Status, strings.Join(want, ", "))
	}
	if e.Tier != nil && (*e.Tier < 0 || *e.Tier > 3) {
		return fmt.Errorf("tier %d is not 0, 1, 2 or 3", *e.Tier)
	}
	return nil
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
		if err := c.Expect.check(); err != nil {
			return nil, usageError(fmt.Errorf("%s:%d: expect: %v", path, n, err))
		}
		c.line = n
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return calls, nil
}

// checkTools fails, naming the line, when a line's tool is not listed by
// its server, or when its arguments do not match the tool's input schema
// (unless noCheck): before any call of the file runs.
func checkTools(st *setup, m *client.Manager, path string, calls []batchCall, noCheck bool) error {
	for _, c := range calls {
		server, tool, _ := splitRef(c.Tool)
		if t, ok := m.Tool(server, tool); ok {
			if err := checkArgs(t, c.Args, noCheck); err != nil {
				return fmt.Errorf("%s:%d: %w", path, c.line, err)
			}
			continue
		}
		if _, ok := m.Spec(server); !ok {
			var names []string
			for _, ss := range m.Servers() {
				names = append(names, ss.Name)
			}
			return usageError(fmt.Errorf("%s:%d: %w", path, c.line, st.noServerNamed(server, names)))
		}
		for _, ss := range m.Servers() {
			if ss.Name == server && ss.State != client.StateReady {
				return withCode(exitError, fmt.Errorf("%s:%d: server %q is %s, so its tools cannot be checked: %s", path, c.line, server, ss.State, serverFailure(ss)))
			}
		}
		return withCode(exitUsage, fmt.Errorf("%s:%d: %w", path, c.line, noSuchTool(m, server, tool)))
	}
	return nil
}

// unmet lists the expectations r does not meet. A line without
// expectations must succeed.
func (e *expectation) unmet(r *host.Result) []string {
	if e == nil || *e == (expectation{}) {
		e = &expectation{Status: string(host.StatusSuccess)}
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

// batchLineJSON is the --json object of one batch line.
type batchLineJSON struct {
	Type      string         `json:"type"` // "call"
	Line      int            `json:"line"`
	Tool      string         `json:"tool"`
	Verdict   string         `json:"verdict"`
	Tier      int            `json:"tier"`
	Class     string         `json:"class"`
	DecidedBy host.DecidedBy `json:"decidedBy"`
	Status    string         `json:"status"`
	IsError   bool           `json:"isError"`
	Message   string         `json:"message,omitempty"`
	Approve   *host.Approval `json:"approve,omitempty"` // for a blocked call: what would approve it
	Expect    *expectation   `json:"expect,omitempty"`  // as the line gave it; none means status success
	Passed    bool           `json:"passed"`
	Unmet     []string       `json:"unmet"` // each expectation not met, as "verdict allow, got deny"
}

// batchSummaryJSON is the --json object that ends a batch.
type batchSummaryJSON struct {
	Type     string `json:"type"` // "summary"
	Passed   int    `json:"passed"`
	Failed   int    `json:"failed"`
	ExitCode int    `json:"exitCode"`
}

// runBatch runs every call of the file in order through the gate and
// prints one line per call and a summary (with asJSON, one JSON object per
// line: each call, then the summary); it fails when an expectation is not
// met. noCheck sends arguments the input schema rejects (call --no-check).
func runBatch(ctx context.Context, ss *session, o *callOptions, s *streams, calls []batchCall) error {
	path, asJSON, noCheck := o.Batch, o.JSON, o.NoCheck
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	passed, failed := 0, 0
	for _, c := range calls {
		server, tool, _ := splitRef(c.Tool)
		r := ss.gate.Call(ctx, host.Call{Server: server, Tool: tool, Args: c.Args, NoArgsCheck: noCheck})
		bad := c.Expect.unmet(r)
		if len(bad) > 0 {
			failed++
		} else {
			passed++
		}
		if asJSON {
			out := batchLineJSON{Type: "call", Line: c.line, Tool: c.Tool, Verdict: r.Decision.Verdict.String(), Tier: int(r.Decision.Tier),
				Class: r.Decision.Class.String(), DecidedBy: r.DecidedBy, Status: string(r.Status),
				IsError: r.Result != nil && r.Result.IsError, Expect: c.Expect, Passed: len(bad) == 0, Unmet: append([]string{}, bad...)}
			if r.Status != host.StatusSuccess {
				out.Message, out.Approve = callMessage(r), r.Approval(host.ApproveWithYes)
			}
			if err := enc.Encode(out); err != nil {
				return err
			}
			continue
		}
		mark := "ok  "
		if len(bad) > 0 {
			mark = "FAIL"
		}
		fmt.Fprintf(s.Out, "%s %s:%d %s: %s by %s → %s\n", mark, path, c.line, sanitize.Line(c.Tool), r.Decision.Verdict, r.DecidedBy, r.Status)
		for _, b := range bad {
			fmt.Fprintf(s.Out, "       want %s\n", sanitize.Line(b))
		}
		if len(bad) > 0 && r.Status != host.StatusSuccess {
			fmt.Fprintf(s.Out, "       %s\n", showingName(callMessage(r), r.Server+"/"+r.Tool, false))
		}
	}
	var err error
	if failed > 0 {
		err = withCode(exitError, fmt.Errorf("%d of %d call%s did not meet %s expectations", failed, len(calls), plural(len(calls)), yesNo(len(calls) == 1, "its", "their")))
	}
	if asJSON {
		if e := enc.Encode(batchSummaryJSON{Type: "summary", Passed: passed, Failed: failed, ExitCode: exitCode(err)}); e != nil {
			return e
		}
		return err
	}
	fmt.Fprintf(s.Out, "%d passed, %d failed\n", passed, failed)
	return err
}

func openBatch(path string) ([]batchCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError(err)
	}
	defer f.Close()
	return readBatch(path, f)
}
