package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/audit"
)

// showRun runs mcphost with args in dir, returning the exit code, stdout
// and stderr.
func showRun(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	var out, errOut bytes.Buffer
	s := &streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
	code := run(context.Background(), args, s)
	return code, out.String(), errOut.String()
}

// TestAuditShowNamesTheChannel: audit show prints every record of one
// call with the way its decision came — --yes here — as text and as JSON.
func TestAuditShowNamesTheChannel(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := showRun(t, dir, "call", "--yes", "tasks/delete_task", `{"id": "T-2"}`); code != exitOK {
		t.Fatalf("call --yes: exit %d: %s", code, errOut)
	}
	_, out, _ := showRun(t, dir, "audit", "tail", "--json")
	var recs []audit.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 2 {
		t.Fatalf("audit tail --json: %v, %d records:\n%s", err, len(recs), out)
	}
	id := recs[0].CallID
	code, out, errOut := showRun(t, dir, "audit", "show", id)
	if code != exitOK {
		t.Fatalf("audit show: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"(intent)", "(outcome)", "call:      " + id, "tool:      tasks/delete_task", "by:        user:once", "via:       yes (with --yes)", "status:    success"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit show lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = showRun(t, dir, "audit", "show", "--json", id)
	recs = nil
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 2 || recs[0].Via != audit.ChannelYes || recs[1].Via != audit.ChannelYes {
		t.Errorf("audit show --json: %v, records %+v; want the intent and the outcome via yes", err, recs)
	}
}

// TestAuditShowNamesTheGrant: a call a grant let run is shown with the
// grant's scope, the way it was given and the call it was given for; the
// log's words are escaped.
func TestAuditShowNamesTheGrant(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*audit.Record{
		{Kind: audit.Outcome, CallID: "c-1", Server: "tasks", Tool: "update_task", DecidedBy: "user:session", Via: audit.ChannelApprove, Status: audit.StatusSuccess},
		{Kind: audit.Outcome, CallID: "c-2", Server: "tasks", Tool: "update\x1b[31m_task", DecidedBy: "user:session", Via: audit.ChannelGrant,
			Grant: &audit.GrantRef{Scope: "session", Via: audit.ChannelApprove, CallID: "c-1"}, Status: audit.StatusSuccess},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := showRun(t, dir, "--audit", path, "audit", "show", "c-2")
	if code != exitOK {
		t.Fatalf("audit show: exit %d: %s", code, errOut)
	}
	if want := "via:       grant (by a grant): the session grant given in mcphost approve for call c-1"; !strings.Contains(out, want) {
		t.Errorf("audit show lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "c-1 (") {
		t.Errorf("audit show printed a raw escape, or another call's record:\n%q", out)
	}
	_, out, _ = showRun(t, dir, "--audit", path, "audit", "tail")
	if !strings.Contains(out, "grant:session<approve") {
		t.Errorf("audit tail does not name the grant:\n%s", out)
	}
}

// TestAuditShowNamesThePerson: a call serve ran for a person of an OAuth
// issuer is shown with the person and the client, escaped, as text and
// as JSON; a log with records from before and after verifies.
func TestAuditShowNamesThePerson(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*audit.Record{
		{Kind: audit.Outcome, CallID: "c-1", Server: "tasks", Tool: "list", Client: &audit.Client{Name: "desk", Session: "serve-1"}, Status: audit.StatusSuccess},
		{Kind: audit.Outcome, CallID: "c-2", Server: "tasks", Tool: "list", Status: audit.StatusSuccess,
			Client: &audit.Client{Name: "desk", Version: "1", Session: "serve-2", ID: "desk-app",
				Person: &audit.Person{Issuer: "https://login.example.com", Subject: "u-alice", Name: "Alice\x1b[31m", Email: "alice@example.com"}}},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := showRun(t, dir, "--audit", path, "audit", "show", "c-2")
	if code != exitOK {
		t.Fatalf("audit show: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"client:    desk 1 (OAuth client desk-app)", "person:    Alice", "<alice@example.com>: u-alice of https://login.example.com"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("audit show printed a raw escape:\n%q", out)
	}
	_, out, _ = showRun(t, dir, "--audit", path, "audit", "show", "--json", "c-2")
	var recs []audit.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 1 || recs[0].Client == nil || recs[0].Client.Person == nil ||
		recs[0].Client.Person.Subject != "u-alice" || recs[0].Client.ID != "desk-app" {
		t.Errorf("audit show --json: %v, records %+v; want alice through desk-app", err, recs)
	}
	if code, out, errOut := showRun(t, dir, "--audit", path, "audit", "verify"); code != exitOK {
		t.Errorf("audit verify of a log with and without persons: exit %d:\n%s%s", code, out, errOut)
	}
}
