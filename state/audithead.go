package state

import (
	"fmt"
	"time"
)

// AuditHead is the end of an audit log's hash chain as mcphost last left
// it: the seq and hash of its last record. Kept outside the log, it shows
// when records were removed from the log's end, which the chain alone
// cannot.
type AuditHead struct {
	Seq        uint64
	Hash       string
	RecordedAt time.Time
}

// AuditHead returns the head recorded for the audit log at path (the
// log's absolute path); ok is false when none is.
func (s *State) AuditHead(path string) (h AuditHead, ok bool) {
	h, ok = s.audit[path]
	return h, ok
}

// SetAuditHead records the head of the audit log at path, replacing any
// earlier one. Whether a head may replace another is the caller's
// decision (package audit never moves one backwards). An empty path or
// hash changes nothing.
func (s *State) SetAuditHead(path string, seq uint64, hash string) {
	if path == "" || hash == "" {
		return
	}
	if h, ok := s.audit[path]; ok && h.Seq == seq && h.Hash == hash {
		return
	}
	if s.audit == nil {
		s.audit = make(map[string]AuditHead)
	}
	s.audit[path] = AuditHead{Seq: seq, Hash: hash, RecordedAt: s.stamp()}
}

// wireAuditHead is an audit head as the file holds it.
type wireAuditHead struct {
	Hash       string `json:"hash"`
	RecordedAt string `json:"recordedAt,omitempty"`
	Seq        uint64 `json:"seq"`
}

// auditHeads checks and converts the file's "auditHeads" section.
func (w *wireFile) auditHeads(s *State) error {
	for _, path := range sortedKeys(w.AuditHeads) {
		h := w.AuditHeads[path]
		where := fmt.Sprintf("auditHeads[%q]", path)
		switch {
		case path == "":
			return fmt.Errorf("auditHeads: a log path is empty")
		case !isHexDigest(h.Hash):
			return fmt.Errorf("%s.hash is %q, not a SHA-256 hex digest", where, h.Hash)
		}
		at, err := parseTime(h.RecordedAt)
		if err != nil {
			return fmt.Errorf("%s.recordedAt: %w", where, err)
		}
		if s.audit == nil {
			s.audit = make(map[string]AuditHead)
		}
		s.audit[path] = AuditHead{Seq: h.Seq, Hash: h.Hash, RecordedAt: at}
	}
	return nil
}

// wireAuditHeads renders the audit heads for the file.
func (s *State) wireAuditHeads() map[string]wireAuditHead {
	m := make(map[string]wireAuditHead, len(s.audit))
	for path, h := range s.audit {
		m[path] = wireAuditHead{Hash: h.Hash, RecordedAt: formatTime(h.RecordedAt), Seq: h.Seq}
	}
	return m
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
