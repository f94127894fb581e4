package pgstore

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcphost/mcphost/audit"
)

// ApprovalRecords returns the records of the chain about the held call with
// approval id id, oldest first: the approval records of its holding, its
// answer and its use, and the intent and outcome of the retry that ran
// under it. No column holds the approval id, so this reads every line
// that names it: a command a person runs, never the gate's path.
func (s *Store) ApprovalRecords(ctx context.Context, id string) ([]audit.Record, error) {
	if id == "" {
		return nil, nil
	}
	quoted, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	recs, err := s.records(ctx, `SELECT line FROM mcphost_audit WHERE position($1::bytea in line) > 0 ORDER BY seq`,
		append([]byte(`"approvalId":`), quoted...))
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(recs, func(r audit.Record) bool { return r.ApprovalID != id }), nil
}
