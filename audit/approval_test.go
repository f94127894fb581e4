package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A held call and each answer to it are records of the chain: verify
// counts them, pairs them with nothing, and sees an edit of one.
func TestApprovalRecordsAreChained(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{})
	held := func(state string) *Record {
		return &Record{Kind: Approval, SessionID: "s1", CallID: "c1", Server: "tasks", Tool: "delete_task",
			DefHash: HashBytes([]byte("delete_task v1")), ArgsHash: HashBytes([]byte(`{"id":"t-42"}`)),
			Class: "destructive", Tier: "T3", ApprovalID: "a1b2", ApprovalState: state}
	}
	for _, r := range []*Record{held(ApprovalHeld), held(ApprovalApproved), intent("s1", "c2"), outcome("s1", "c2"), held(ApprovalUsed)} {
		if err := l.Append(r); err != nil {
			t.Fatalf("Append %s: %v", r.Kind, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 || rep.Approvals != 3 || rep.Intents != 1 || rep.Outcomes != 1 || len(rep.OpenIntents) != 0 || len(rep.OrphanOutcomes) != 0 {
		t.Fatalf("Verify = %+v, want 3 approvals, one intent and its outcome, no problems", rep)
	}
	edited := strings.Replace(string(data), `"approvalState":"approved"`, `"approvalState":"denied"`, 1)
	if edited == string(data) {
		t.Fatal("the approved record was not written with its state")
	}
	rep, err = Verify(strings.NewReader(edited))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Kind != ProblemEdited {
		t.Fatalf("Verify of an edited approval = %+v, want one edited record", rep.Problems)
	}
}
