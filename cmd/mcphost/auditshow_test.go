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

// TestAuditShowFollowsTheApproval: a call that ran on a later approval is
// shown with that approval's records — held, approved by whom and through
// what, used — and the approval id shows the same; another approval's
// records are not.
func TestAuditShowFollowsTheApproval(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	bob := &audit.Person{Issuer: "https://login.example", Subject: "bob", Name: "Bob", Email: "bob@example.com"}
	for _, r := range []*audit.Record{
		{Kind: audit.Approval, Server: "tasks", Tool: "delete_task", ApprovalID: "ap-1", ApprovalState: audit.ApprovalHeld},
		{Kind: audit.Approval, Server: "tasks", Tool: "delete_task", ApprovalID: "ap-other", ApprovalState: audit.ApprovalHeld},
		{Kind: audit.Approval, Server: "tasks", Tool: "delete_task", ApprovalID: "ap-1", ApprovalState: audit.ApprovalApproved, DecidedBy: "user:once", Via: audit.ChannelWeb, Approver: bob},
		{Kind: audit.Approval, Server: "tasks", Tool: "delete_task", ApprovalID: "ap-1", ApprovalState: audit.ApprovalUsed},
		{Kind: audit.Intent, CallID: "c-2", Server: "tasks", Tool: "delete_task", ApprovalID: "ap-1", DecidedBy: "user:once", Via: audit.ChannelWeb},
		{Kind: audit.Outcome, CallID: "c-2", Server: "tasks", Tool: "delete_task", ApprovalID: "ap-1", DecidedBy: "user:once", Via: audit.ChannelWeb, Status: audit.StatusSuccess},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c-2", "ap-1"} {
		code, out, errOut := showRun(t, dir, "--audit", path, "audit", "show", id)
		if code != exitOK {
			t.Fatalf("audit show %s: exit %d: %s", id, code, errOut)
		}
		for _, want := range []string{"record 1 (approval)", "approval:  ap-1 held", "approval:  ap-1 approved", "approver:  Bob <bob@example.com>: bob of https://login.example",
			"approval:  ap-1 used", "record 5 (intent)", "record 6 (outcome)"} {
			if !strings.Contains(out, want) {
				t.Errorf("audit show %s lacks %q:\n%s", id, want, out)
			}
		}
		if strings.Contains(out, "ap-other") || strings.Index(out, "record 1 ") > strings.Index(out, "record 3 ") {
			t.Errorf("audit show %s shows another approval, or out of order:\n%s", id, out)
		}
	}
}

// TestAuditShowOfNoIDShowsNothing: an empty id is no call's and no
// approval's, though records without a call id (approval records) exist.
func TestAuditShowOfNoIDShowsNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(&audit.Record{Kind: audit.Approval, Server: "tasks", Tool: "delete_task", ApprovalID: "ap-1", ApprovalState: audit.ApprovalHeld}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(&audit.Record{Kind: audit.Outcome, CallID: "c-1", Server: "tasks", Tool: "list_tasks", Status: audit.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := showRun(t, dir, "--audit", path, "audit", "show", ""); code == exitOK || strings.Contains(out, "record ") {
		t.Fatalf("audit show of no id: exit %d:\n%s%s", code, out, errOut)
	}
}
