package pgstore

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// The team page's state is one for every replica: a value put through one
// is read through another; taken once, whichever takes first; dropped for
// all; gone when expired; bounded per kind; and its key never stored.
func TestTeamPageStateIsSharedAndUsedOnce(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, url).TeamPage(), open(t, url).TeamPage()
	now := time.Now()
	if err := a.Put("session", "secret-sid", []byte("alice"), now.Add(time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get("session", "secret-sid", now); err != nil || !ok || string(v) != "alice" {
		t.Fatalf("B reads %q %v %v, want what A put", v, ok, err)
	}
	if _, ok, _ := b.Get("session", "secret-sid", now.Add(2*time.Hour)); ok {
		t.Fatal("an expired session is still read")
	}
	var raw int
	if err := open(t, url).pool.QueryRow(t.Context(), `SELECT count(*) FROM mcphost_team WHERE key = $1`, []byte("secret-sid")).Scan(&raw); err != nil || raw != 0 {
		t.Fatalf("the database holds the raw key (%d rows, %v)", raw, err)
	}
	if err := b.Drop("session", "secret-sid"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Get("session", "secret-sid", now); ok {
		t.Fatal("a session dropped through B is still read through A")
	}

	if err := a.Put("login", "state-1", []byte("L"), now.Add(time.Minute), 10); err != nil {
		t.Fatal(err)
	}
	var got atomic.Int32
	var wg sync.WaitGroup
	for _, p := range []*TeamPage{a, b, a, b} {
		wg.Go(func() {
			if v, ok, err := p.Take("login", "state-1", now); err == nil && ok && bytes.Equal(v, []byte("L")) {
				got.Add(1)
			}
		})
	}
	wg.Wait()
	if got.Load() != 1 {
		t.Fatalf("a login's state was taken %d times, want once", got.Load())
	}

	for i, k := range []string{"k1", "k2", "k3"} {
		if err := a.Put("login", k, []byte(k), now.Add(time.Duration(i+1)*time.Minute), 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := b.Get("login", "k1", now); ok {
		t.Fatal("past its bound, the value closest to its end is kept")
	}
	for _, k := range []string{"k2", "k3"} {
		if _, ok, _ := b.Get("login", k, now); !ok {
			t.Fatalf("%s was dropped, want only k1", k)
		}
	}
}

// An expired login is taken away but not handed back.
func TestAnExpiredTeamLoginIsNotTaken(t *testing.T) {
	p := open(t, pgtest.DB(t)).TeamPage()
	now := time.Now()
	if err := p.Put("login", "old", []byte("L"), now.Add(time.Minute), 10); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := p.Take("login", "old", now.Add(2*time.Minute)); err != nil || ok {
		t.Fatalf("an expired login was taken (%v, %v)", ok, err)
	}
}
