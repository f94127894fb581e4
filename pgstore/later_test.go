package pgstore

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/later"
)

var call = later.Call{Client: "autopilot\x001.0\x00s1", Server: "fs", Identity: "idx", Tool: "delete_file", Definition: "def1", ArgsHash: "args1", Tier: "T3"}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// replicas returns the held calls of n stores on one new database, with
// one clock (nil: the database's).
func replicas(t *testing.T, n int, c *clock) []*Later {
	t.Helper()
	url := pgtest.DB(t)
	var ids atomic.Int64
	o := later.Options{Lifetime: 10 * time.Minute, NewID: func() string { return "id" + strconv.FormatInt(ids.Add(1), 10) }}
	if c != nil {
		o.Now = c.now
	}
	var out []*Later
	for range n {
		out = append(out, open(t, url).Later(o))
	}
	return out
}

// A call held through replica A and approved through A runs once through
// B, however many retries race for it through both.
func TestHeldCallApprovedThroughOneReplicaIsTakenOnceThroughAnother(t *testing.T) {
	r := replicas(t, 2, nil)
	a, held := r[0].Hold(call)
	if !held || a.ID == "" || a.State != later.Waiting || !a.Expires.After(a.Created) {
		t.Fatalf("Hold = %+v, %v; want a new waiting approval", a, held)
	}
	if again, held := r[1].Hold(call); held || again.ID != a.ID {
		t.Fatalf("holding the same call through B: %+v, %v; want A's approval %s kept", again, held, a.ID)
	}
	if _, ok := r[1].Take(call); ok {
		t.Fatal("a call nobody approved was taken")
	}
	if _, err := r[0].Answer(a.ID, true, "web", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r[1].Answer(a.ID, false, "web", "no"); !errors.Is(err, later.ErrAnswered) {
		t.Fatalf("a second answer through B: %v, want ErrAnswered", err)
	}
	if got, ok := r[1].Get(a.ID); !ok || got.State != later.Approved || got.Via != "web" {
		t.Fatalf("B sees %+v, %v; want it approved through web", got, ok)
	}
	var taken atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if ap, ok := r[i%2].Take(call); ok {
				taken.Add(1)
				if ap.ID != a.ID || ap.State != later.Used {
					t.Errorf("Take = %+v, want %s used", ap, a.ID)
				}
			}
		})
	}
	wg.Wait()
	if n := taken.Load(); n != 1 {
		t.Fatalf("the approval was taken %d times, want once", n)
	}
	other := call
	other.ArgsHash = "args2"
	b, _ := r[1].Hold(other)
	r[1].Answer(b.ID, true, "web", "")
	for _, c := range []later.Call{{}, func() later.Call { c := other; c.Tier = "T2"; return c }(), func() later.Call { c := other; c.Client = "x"; return c }()} {
		if _, ok := r[0].Take(c); ok {
			t.Fatalf("an approval of %+v let %+v run", other, c)
		}
	}
}

// Replicas holding the same call at once keep one approval for it, round
// after round of holds started together.
func TestConcurrentHoldsKeepOneApproval(t *testing.T) {
	r := replicas(t, 2, nil)
	for round := range 20 {
		c := call
		c.ArgsHash = strconv.Itoa(round)
		var mu sync.Mutex
		ids := map[string]bool{}
		var news atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 8 {
			wg.Go(func() {
				<-start
				a, held := r[i%2].Hold(c)
				if held {
					news.Add(1)
				}
				mu.Lock()
				ids[a.ID] = true
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		if len(ids) != 1 || ids[""] || news.Load() != 1 {
			t.Fatalf("round %d: 8 holds of one call made approvals %v (%d new), want one", round, ids, news.Load())
		}
	}
}

// A denial given through one replica is told once to the retry through
// another; an unknown id is refused.
func TestDenialCrossesReplicasOnce(t *testing.T) {
	r := replicas(t, 2, nil)
	a, _ := r[0].Hold(call)
	if _, err := r[1].Answer(a.ID, false, "approve", "not today"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r[0].Take(call); ok {
		t.Fatal("a denied call was taken")
	}
	if d, ok := r[0].Denial(call); !ok || d.Reason != "not today" {
		t.Fatalf("Denial = %+v, %v; want the person's reason", d, ok)
	}
	if _, ok := r[1].Denial(call); ok {
		t.Fatal("the denial was told twice")
	}
	if _, err := r[1].Answer("nope", true, "web", ""); !errors.Is(err, later.ErrUnknown) {
		t.Fatalf("answering an unknown id: %v, want ErrUnknown", err)
	}
}

// The lifetime holds on the one clock of every replica: past it an
// approval is neither answered nor taken.
func TestLifetimeOnTheSharedClock(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	r := replicas(t, 2, c)
	a, _ := r[0].Hold(call)
	if !a.Expires.Equal(c.now().Add(10 * time.Minute)) {
		t.Fatalf("expires %v, want ten minutes after %v", a.Expires, c.now())
	}
	c.add(10 * time.Minute)
	if _, err := r[1].Answer(a.ID, true, "web", ""); !errors.Is(err, later.ErrExpired) {
		t.Fatalf("answering an expired call: %v, want ErrExpired", err)
	}
	b, _ := r[0].Hold(call)
	if b.ID == a.ID {
		t.Fatal("an expired call kept its approval id")
	}
	if _, err := r[1].Answer(b.ID, true, "web", ""); err != nil {
		t.Fatal(err)
	}
	c.add(10*time.Minute - time.Microsecond)
	if _, ok := r[1].Get(b.ID); !ok {
		t.Fatal("an approval just inside its lifetime is gone")
	}
	c.add(time.Microsecond)
	if _, ok := r[0].Take(call); ok {
		t.Fatal("an expired approval was taken")
	}
}

// With no injected clock the database's is the one clock: a call held now
// is live, and its lifetime counts from the database's time.
func TestDatabaseClock(t *testing.T) {
	r := replicas(t, 1, nil)
	before := time.Now().Add(-time.Minute)
	a, _ := r[0].Hold(call)
	if a.Created.Before(before) || a.Expires.Sub(a.Created) != 10*time.Minute {
		t.Fatalf("held at %v until %v; want now, for ten minutes", a.Created, a.Expires)
	}
	if w := r[0].Waiting(); len(w) != 1 || w[0].ID != a.ID {
		t.Fatalf("Waiting = %+v, want the held call", w)
	}
}

// A waiter through one replica hears an answer given through another.
func TestAnsweredHearsAnotherReplica(t *testing.T) {
	r := replicas(t, 2, nil)
	a, _ := r[0].Hold(call)
	ch := r[0].Answered(a.ID)
	if ch == nil {
		t.Fatal("Answered of a held call is nil")
	}
	if r[0].Answered("nope") != nil {
		t.Fatal("Answered of an unknown id is not nil")
	}
	if _, err := r[1].Answer(a.ID, true, "web", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("the answer through the other replica was never heard")
	}
	select {
	case <-r[1].Answered(a.ID):
	default:
		t.Fatal("Answered of an answered call is not closed")
	}
}

// Drop forgets only a call no one answered; the held calls are bounded,
// the oldest unanswered making room, and an approval given is kept.
func TestDropAndBound(t *testing.T) {
	url := pgtest.DB(t)
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	l := open(t, url).Later(later.Options{Max: 3, Now: c.now})
	first, _ := l.Hold(call)
	l.Answer(first.ID, true, "web", "")
	l.Drop(first.ID)
	if _, ok := l.Get(first.ID); !ok {
		t.Fatal("Drop forgot an approval a person gave")
	}
	var ids []string
	for i := range 4 {
		c.add(time.Second)
		x := call
		x.ArgsHash = strconv.Itoa(i)
		a, _ := l.Hold(x)
		ids = append(ids, a.ID)
	}
	if _, ok := l.Get(first.ID); !ok {
		t.Fatal("holding more calls pushed out an approval already given")
	}
	if _, ok := l.Get(ids[0]); ok {
		t.Fatal("the oldest unanswered call was kept past the bound")
	}
	if w := l.Waiting(); len(w) != 2 || w[0].ID != ids[2] {
		t.Fatalf("waiting %+v; want the two newest", w)
	}
	l.Drop(ids[3])
	if _, ok := l.Get(ids[3]); ok {
		t.Fatal("Drop kept a call no one answered")
	}
}

// What the replica that held a call describes of it is read back through
// every replica while the call waits; a description larger than MaxShown
// is refused, and an answered call's is not changed.
func TestAHeldCallsDescriptionCrossesReplicas(t *testing.T) {
	r := replicas(t, 2, nil)
	a, _ := r[0].Hold(call)
	if err := r[0].Describe(a.ID, []byte(`{"text":"delete_file /srv/x"}`)); err != nil {
		t.Fatal(err)
	}
	if got, ok := r[1].Get(a.ID); !ok || string(got.Shown) != `{"text":"delete_file /srv/x"}` {
		t.Fatalf("through B: %q %v, want A's description", got.Shown, ok)
	}
	if w := r[1].Waiting(); len(w) != 1 || string(w[0].Shown) != `{"text":"delete_file /srv/x"}` {
		t.Fatalf("B's waiting calls: %+v, want the one with A's description", w)
	}
	if err := r[0].Describe(a.ID, make([]byte, MaxShown+1)); err == nil {
		t.Fatal("a description larger than MaxShown was kept")
	}
	if _, err := r[1].Answer(a.ID, true, "web", ""); err != nil {
		t.Fatal(err)
	}
	if err := r[0].Describe(a.ID, []byte(`{"text":"changed"}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := r[1].Get(a.ID); string(got.Shown) != `{"text":"delete_file /srv/x"}` {
		t.Fatalf("an answered call's description became %q", got.Shown)
	}
}

// TestStillWaitingNamesOnlyTheCallsThatWait: of the ids asked about, the
// answer names those still waiting through any replica, not an answered
// one or one never held; a closed store says it cannot tell.
func TestStillWaitingNamesOnlyTheCallsThatWait(t *testing.T) {
	r := replicas(t, 2, nil)
	waits, _ := r[0].Hold(call)
	other := call
	other.ArgsHash = "args2"
	answered, _ := r[0].Hold(other)
	if _, err := r[1].Answer(answered.ID, true, "web", ""); err != nil {
		t.Fatal(err)
	}
	got, err := r[1].StillWaiting([]string{waits.ID, answered.ID, "never"})
	if err != nil || len(got) != 1 || !got[waits.ID] {
		t.Fatalf("StillWaiting = %v, %v; want only %s", got, err, waits.ID)
	}
	r[1].s.Close()
	if got, err := r[1].StillWaiting([]string{waits.ID}); err == nil {
		t.Fatalf("a closed store said %v, want an error", got)
	}
}
