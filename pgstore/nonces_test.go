package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// Every replica seals with one key, made once; a nonce spent by racing
// replicas is spent once; a spent nonce is kept past its state's expiry
// by SpentGrace, then deleted.
func TestRequestStatesAreSpentOnceAcrossReplicas(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	var rs []*RequestStates
	for range 4 {
		r, err := open(t, url).RequestStates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	for _, r := range rs[1:] {
		if !bytes.Equal(r.Key(), rs[0].Key()) || len(r.Key()) != 32 {
			t.Fatal("two replicas seal request states with different keys")
		}
	}
	expires := time.Now().Add(5 * time.Minute)
	for round := range 5 {
		nonce := "n" + string(rune('0'+round))
		var fresh atomic.Int32
		var wg sync.WaitGroup
		for _, r := range rs {
			wg.Go(func() {
				ok, err := r.Spend(nonce, expires)
				if err != nil {
					t.Error(err)
				}
				if ok {
					fresh.Add(1)
				}
			})
		}
		wg.Wait()
		if fresh.Load() != 1 {
			t.Fatalf("round %d: %d replicas spent one nonce, want 1", round, fresh.Load())
		}
	}
	// A state long expired: its nonce is kept SpentGrace past its expiry,
	// and deleted once that has passed.
	if ok, err := rs[0].Spend("old", time.Now().Add(-SpentGrace/2)); !ok || err != nil {
		t.Fatalf("spending a nonce: %v %v", ok, err)
	}
	if ok, _ := rs[1].Spend("old", time.Now().Add(-SpentGrace/2)); ok {
		t.Fatal("a nonce within its grace was spent twice")
	}
	s := open(t, url)
	if _, err := s.pool.Exec(ctx, `UPDATE mcphost_spent SET expires = expires - $1::interval WHERE nonce = 'old'`, SpentGrace); err != nil {
		t.Fatal(err)
	}
	if _, err := rs[2].Spend("new", expires); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM mcphost_spent WHERE nonce = 'old'`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("a nonce past its grace is still a row (%d, %v): the table would grow without end", rows, err)
	}
	if ok, err := rs[3].Spend("", expires); ok || err == nil {
		t.Fatal("a state without a nonce was spent")
	}
}

// A sealing key in the database of another length than the 32 bytes a
// replica makes (cut short, empty, or put there by something else) is
// never used: every replica refuses to start on it, saying which row to
// delete, and once it is deleted the next replica makes a key of its own.
func TestARequestStateKeyOfTheWrongLengthIsNotUsed(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	s := open(t, url)
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := s.pool.Exec(ctx, `INSERT INTO mcphost_secrets (name, value) VALUES ('request-state', $1)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, bytes.Repeat([]byte{'k'}, n)); err != nil {
			t.Fatal(err)
		}
		r, err := open(t, url).RequestStates(ctx)
		if err == nil || r != nil {
			t.Fatalf("a %d-byte key: request states %v (%v), want them refused", n, r, err)
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("is %d bytes, want 32", n)) || !strings.Contains(msg, "delete its row") {
			t.Errorf("a %d-byte key: %q, want the length and the fix", n, msg)
		}
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM mcphost_secrets WHERE name = 'request-state'`); err != nil {
		t.Fatal(err)
	}
	r, err := open(t, url).RequestStates(ctx)
	if err != nil || len(r.Key()) != 32 || bytes.Equal(r.Key(), bytes.Repeat([]byte{'k'}, 32)) {
		t.Fatalf("after the row was deleted: %v, want a new 32-byte key", err)
	}
}
