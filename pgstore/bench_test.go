package pgstore

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/internal/pgtest"
)

// BenchmarkAppend measures one audit append of a call's intent (not a
// read: durable before Append returns) to the file log, which fdatasyncs
// it, and to the chain in PostgreSQL (fsync on, a Unix socket), whose
// commit makes it durable: the latency the store adds to every call. The
// parallel runs append from many goroutines, over two replicas for the
// store.
func BenchmarkAppend(b *testing.B) {
	rec := func() *audit.Record {
		return &audit.Record{Kind: audit.Intent, SessionID: "s1", CallID: "c1", Server: "fs", Tool: "write_file", Class: "additive", Tier: "T2", Verdict: "allow"}
	}
	b.Run("file", func(b *testing.B) {
		l, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		for b.Loop() {
			if err := l.Append(rec()); err != nil {
				b.Fatal(err)
			}
		}
	})
	url := pgtest.Start(b, pgtest.Options{Durable: true}).NewDB(b)
	b.Run("postgres", func(b *testing.B) {
		l := audit.OpenChain(open(b, url), audit.Options{})
		for b.Loop() {
			if err := l.Append(rec()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file/parallel", func(b *testing.B) {
		l, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := l.Append(rec()); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("postgres/parallel-2-replicas", func(b *testing.B) {
		logs := []*audit.ChainLog{audit.OpenChain(open(b, url), audit.Options{}), audit.OpenChain(open(b, url), audit.Options{})}
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			l := logs[n.Add(1)%2]
			for pb.Next() {
				if err := l.Append(rec()); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	if rep, err := open(b, url).Verify(context.Background()); err != nil || !rep.OK() {
		b.Fatalf("after the benchmark the chain verifies as %v (%v)", rep.Problems, err)
	}
}
