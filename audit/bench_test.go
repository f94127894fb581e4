package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAppend measures one intent record: encode, hash, lock, write
// and, with sync, fsync — the cost every non-read call pays before it runs.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"sync", Options{}},
		{"nosync", Options{NoSync: true}},
		{"nosync-recorddata", Options{NoSync: true, RecordData: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.opts.Now = time.Now
			l := open(b, filepath.Join(b.TempDir(), "audit.jsonl"), bc.opts)
			tmpl := intent("s1", "call-1")
			b.ReportAllocs()
			for b.Loop() {
				r := *tmpl
				if err := l.Append(&r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	log, err := os.ReadFile(writeCalls(b, 500))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		if rep, err := Verify(bytes.NewReader(log)); err != nil || !rep.OK() {
			b.Fatal(err, rep.Problems)
		}
	}
}
