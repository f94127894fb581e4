package pgstore

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/internal/pgtest"
)

// ApprovalRecords reads back every record of one approval id, in the
// chain's order, and no record of another whose id it contains, nor one
// whose recorded arguments name it.
func TestApprovalRecordsReadOneApproval(t *testing.T) {
	s := open(t, pgtest.DB(t))
	l := audit.OpenChain(s, audit.Options{RecordData: true})
	for _, r := range []*audit.Record{
		{Kind: audit.Approval, ApprovalID: "ap-1", ApprovalState: audit.ApprovalHeld},
		{Kind: audit.Approval, ApprovalID: "ap-10", ApprovalState: audit.ApprovalHeld},
		{Kind: audit.Intent, CallID: "c1", SessionID: "s1", ApprovalID: "ap-1"},
		{Kind: audit.Approval, ApprovalID: "ap-1", ApprovalState: audit.ApprovalUsed},
		{Kind: audit.Intent, CallID: "c2", SessionID: "s1", Args: []byte(`{"approvalId":"ap-1"}`)},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.ApprovalRecords(context.Background(), "ap-1")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, r := range recs {
		seqs = append(seqs, r.Seq)
	}
	if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 3 || seqs[2] != 4 {
		t.Fatalf("ApprovalRecords(ap-1) read records %v, want 1, 3 and 4", seqs)
	}
	if recs, err := s.ApprovalRecords(context.Background(), ""); err != nil || len(recs) != 0 {
		t.Fatalf("ApprovalRecords of no id: %+v %v, want none", recs, err)
	}
}
