package state

import (
	"errors"
	"strings"
	"testing"
)

const headHash = "71c737c001d9a2f7bd321949e21bffc9feee4fc3d79cef755e46481833a56aff"

// TestAuditHeadRoundTrip: a recorded audit head is read back from the file,
// per log path, with its time.
func TestAuditHeadRoundTrip(t *testing.T) {
	path := statePath(t)
	mustUpdate(t, path, clock(), func(s *State) error {
		s.SetAuditHead("/logs/a.jsonl", 5, headHash)
		s.SetAuditHead("/logs/b.jsonl", 1, strings.Repeat("0", 64))
		s.SetAuditHead("", 1, headHash) // ignored
		return nil
	})
	s := mustLoad(t, path)
	h, ok := s.AuditHead("/logs/a.jsonl")
	if !ok || h.Seq != 5 || h.Hash != headHash || h.RecordedAt.IsZero() {
		t.Errorf("AuditHead(a) = %+v, %v; want seq 5, its hash and a time", h, ok)
	}
	if _, ok := s.AuditHead("/logs/c.jsonl"); ok {
		t.Error("a head for a log never recorded")
	}
	mustUpdate(t, path, clock(), func(s *State) error { s.SetAuditHead("/logs/a.jsonl", 9, headHash); return nil })
	if h, _ := mustLoad(t, path).AuditHead("/logs/a.jsonl"); h.Seq != 9 {
		t.Errorf("after SetAuditHead(9): seq %d", h.Seq)
	}
}

func TestAuditHeadCorrupt(t *testing.T) {
	for name, data := range map[string]string{
		"short hash": `{"version": 1, "auditHeads": {"/a": {"seq": 1, "hash": "abc"}}}`,
		"no hash":    `{"version": 1, "auditHeads": {"/a": {"seq": 1}}}`,
		"empty path": `{"version": 1, "auditHeads": {"": {"seq": 1, "hash": "` + headHash + `"}}}`,
		"bad seq":    `{"version": 1, "auditHeads": {"/a": {"seq": -1, "hash": "` + headHash + `"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := statePath(t)
			writeRaw(t, path, data)
			var ce *CorruptError
			if _, err := Load(path); !errors.As(err, &ce) || !strings.Contains(err.Error(), "auditHeads") {
				t.Errorf("Load = %v, want a *CorruptError naming auditHeads", err)
			}
		})
	}
}
