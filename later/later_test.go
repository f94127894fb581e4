package later

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

func newStore(t *testing.T) (*Store, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var n atomic.Int64
	return New(Options{Lifetime: 10 * time.Minute, Now: c.now, NewID: func() string { return "id" + strconv.FormatInt(n.Add(1), 10) }}), c
}

var call = Call{Client: "autopilot 1.0 s1", Server: "fs", Identity: "idx", Tool: "delete_file", Definition: "def1", ArgsHash: "args1"}

func TestTakeOnlyTheSameApprovedCall(t *testing.T) {
	foreign := []struct {
		name string
		edit func(c *Call)
	}{
		{"another client", func(c *Call) { c.Client = "other 1.0 s2" }},
		{"another server", func(c *Call) { c.Server = "fs2" }},
		{"another server identity", func(c *Call) { c.Identity = "idy" }},
		{"another tool", func(c *Call) { c.Tool = "write_file" }},
		{"a changed definition", func(c *Call) { c.Definition = "def2" }},
		{"other arguments", func(c *Call) { c.ArgsHash = "args2" }},
	}
	for _, f := range foreign {
		t.Run(f.name, func(t *testing.T) {
			s, _ := newStore(t)
			a, _ := s.Hold(call)
			if _, err := s.Answer(a.ID, true, "approve", ""); err != nil {
				t.Fatal(err)
			}
			other := call
			f.edit(&other)
			if _, ok := s.Take(other); ok {
				t.Fatalf("an approval of %+v let %+v run", call, other)
			}
			if _, ok := s.Take(call); !ok {
				t.Fatal("the same call found no approval after a foreign one was refused")
			}
		})
	}
}

func TestWaitingCallIsNotTaken(t *testing.T) {
	s, _ := newStore(t)
	s.Hold(call)
	if _, ok := s.Take(call); ok {
		t.Fatal("a call nobody approved was taken")
	}
	a, _ := s.Hold(call)
	if _, err := s.Answer(a.ID, false, "approve", "not now"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Take(call); ok {
		t.Fatal("a denied call was taken")
	}
	d, ok := s.Denial(call)
	if !ok || d.Reason != "not now" {
		t.Fatalf("Denial = %+v, %v; want the person's reason", d, ok)
	}
}

func TestHoldKeepsOneWaitingApproval(t *testing.T) {
	s, _ := newStore(t)
	a, held := s.Hold(call)
	b, held2 := s.Hold(call)
	if !held || held2 || a.ID != b.ID {
		t.Fatalf("Hold twice = %q %v, %q %v; want one id, new only the first time", a.ID, held, b.ID, held2)
	}
	if got := s.Waiting(); len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("Waiting = %+v, want just %q", got, a.ID)
	}
}

func TestAnsweredIsClosedByTheAnswer(t *testing.T) {
	s, _ := newStore(t)
	a, _ := s.Hold(call)
	ch := s.Answered(a.ID)
	select {
	case <-ch:
		t.Fatal("Answered is closed before any answer")
	default:
	}
	if _, err := s.Answer(a.ID, true, "web", ""); err != nil {
		t.Fatal(err)
	}
	<-ch
	<-s.Answered(a.ID) // answered before the wait began: closed already
	if s.Answered("forged") != nil {
		t.Fatal("Answered of an unknown id is not nil")
	}
}

func TestExpiry(t *testing.T) {
	s, c := newStore(t)
	a, _ := s.Hold(call)
	c.add(10 * time.Minute)
	if _, err := s.Answer(a.ID, true, "approve", ""); !errors.Is(err, ErrExpired) {
		t.Fatalf("answer after the lifetime: err = %v, want ErrExpired", err)
	}

	a, _ = s.Hold(call)
	if _, err := s.Answer(a.ID, true, "approve", ""); err != nil {
		t.Fatal(err)
	}
	c.add(10*time.Minute - time.Nanosecond)
	c.add(time.Nanosecond)
	if _, ok := s.Take(call); ok {
		t.Fatal("an approval was taken after its lifetime")
	}
	if _, ok := s.Get(a.ID); ok {
		t.Fatal("an expired approval is still there")
	}
}

func TestTakeJustBeforeExpiry(t *testing.T) {
	s, c := newStore(t)
	a, _ := s.Hold(call)
	if _, err := s.Answer(a.ID, true, "approve", ""); err != nil {
		t.Fatal(err)
	}
	c.add(10*time.Minute - time.Nanosecond)
	if _, ok := s.Take(call); !ok {
		t.Fatal("an approval within its lifetime was not taken")
	}
}

func TestAnswerForgedReusedAndTwice(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.Answer("forged", true, "approve", ""); !errors.Is(err, ErrUnknown) {
		t.Fatalf("forged id: err = %v, want ErrUnknown", err)
	}
	a, _ := s.Hold(call)
	if _, err := s.Answer(a.ID, true, "approve", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Answer(a.ID, false, "web", "no"); !errors.Is(err, ErrAnswered) {
		t.Fatalf("second answer: err = %v, want ErrAnswered", err)
	}
	if _, ok := s.Take(call); !ok {
		t.Fatal("the approved call was not taken")
	}
	if _, ok := s.Take(call); ok {
		t.Fatal("a used approval ran the call a second time")
	}
	if _, err := s.Answer(a.ID, true, "approve", ""); !errors.Is(err, ErrAnswered) {
		t.Fatalf("approving a used approval again: err = %v, want ErrAnswered", err)
	}
}

func TestTakeOnceUnderConcurrency(t *testing.T) {
	s, _ := newStore(t)
	a, _ := s.Hold(call)
	if _, err := s.Answer(a.ID, true, "approve", ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var taken atomic.Int64
	for range 16 {
		wg.Go(func() {
			if _, ok := s.Take(call); ok {
				taken.Add(1)
			}
		})
	}
	wg.Wait()
	if n := taken.Load(); n != 1 {
		t.Fatalf("16 simultaneous retries took the approval %d times, want 1", n)
	}
}

func TestHoldIsBoundedAndKeepsApprovals(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var n atomic.Int64
	s := New(Options{Max: 3, Now: c.now, NewID: func() string { return "id" + strconv.FormatInt(n.Add(1), 10) }})
	approved, _ := s.Hold(call)
	if _, err := s.Answer(approved.ID, true, "approve", ""); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 5 {
		other := call
		other.ArgsHash = "other" + strconv.Itoa(i)
		c.add(time.Second)
		a, _ := s.Hold(other)
		ids = append(ids, a.ID)
	}
	if w := s.Waiting(); len(w) != 2 || w[0].ID != ids[3] || w[1].ID != ids[4] {
		t.Fatalf("Waiting = %+v, want the two newest of five held past a bound of three", w)
	}
	if _, ok := s.Take(call); !ok {
		t.Fatal("an approval given was pushed out by calls held after it")
	}
}

// Drop forgets a call no one has answered, and never an approval given.
func TestDropForgetsOnlyAWaitingCall(t *testing.T) {
	s, _ := newStore(t)
	a, _ := s.Hold(call)
	s.Drop(a.ID)
	if _, ok := s.Get(a.ID); ok {
		t.Fatal("a dropped waiting call is still held")
	}
	b, _ := s.Hold(call)
	if _, err := s.Answer(b.ID, true, "approve", ""); err != nil {
		t.Fatal(err)
	}
	s.Drop(b.ID)
	if _, ok := s.Take(call); !ok {
		t.Fatal("dropping an answered call lost the person's approval")
	}
}
