package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend measures one record: encode, hash, lock, write and, for
// "sync", the fdatasync of an intent of a call that is not a read — the
// cost every such call pays before it runs. "read" is what a read's intent
// or an outcome pays: the write, with a background sync every SyncDelay.
func BenchmarkAppend(b *testing.B) {
	read := intent("s1", "call-1")
	read.Class = ReadClass
	for _, bc := range []struct {
		name string
		opts Options
		rec  *Record
	}{
		{"sync", Options{}, intent("s1", "call-1")},
		{"read", Options{}, read},
		{"nosync", Options{NoSync: true}, intent("s1", "call-1")},
		{"nosync-recorddata", Options{NoSync: true, RecordData: true}, intent("s1", "call-1")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.opts.Now = time.Now
			l := open(b, filepath.Join(b.TempDir(), "audit.jsonl"), bc.opts)
			b.ReportAllocs()
			for b.Loop() {
				r := *bc.rec
				if err := l.Append(&r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendParallelIntents appends intents that each wait for the
// disk from many goroutines at once: they share syncs (syncs/op below 1).
func BenchmarkAppendParallelIntents(b *testing.B) {
	var syncs atomic.Int64
	l := open(b, filepath.Join(b.TempDir(), "audit.jsonl"), Options{Now: time.Now, Sync: func(f *os.File) error {
		syncs.Add(1)
		return syncData(f)
	}})
	tmpl := intent("s1", "call-1")
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := *tmpl
			if err := l.Append(&r); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/op")
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
