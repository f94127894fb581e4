// Package later keeps the calls that waited for a person and found none:
// each is held under an approval id for its lifetime, can be approved or
// denied by a person through an approver, and once approved lets the same
// call — the same client, server, tool, definition and arguments — run
// exactly once when it is retried. The store is pure: time and ids are
// injected, and it does no I/O, so it keeps its calls in memory only: a
// process that restarts starts with none held.
package later

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"sync"
	"time"
)

// DefaultLifetime is how long a held call waits for its approval, and how
// long an approval waits for the retry.
const DefaultLifetime = 10 * time.Minute

// Call is what makes two calls the same call: an approval given for one
// lets only a call equal to it run.
type Call struct {
	Client     string // the client's identity (name, version, session), "" for mcphost's own
	Server     string // the server's config name
	Identity   string // the server's identity (what it runs or where)
	Tool       string // the raw tool name
	Definition string // the tool's definition hash
	ArgsHash   string // decide.ArgsHash of the arguments
	// Tier is the tier the call was decided at ("T3"): an approval given
	// for one tier does not run the call once it is decided at another.
	Tier string
}

// State is where a held call stands. The zero value is Waiting.
type State int

const (
	Waiting  State = iota // no one has answered yet
	Approved              // a person approved it; the retry has not come
	Denied                // a person denied it
	Used                  // the approved call ran; the approval is spent
)

func (s State) String() string {
	switch s {
	case Approved:
		return "approved"
	case Denied:
		return "denied"
	case Used:
		return "used"
	}
	return "waiting"
}

// Approval is one held call.
type Approval struct {
	ID      string
	Call    Call
	Created time.Time
	Expires time.Time
	State   State
	// Via is the channel the answer came through; Reason the person's
	// words when they denied.
	Via, Reason string
	// Shown is what a person approving the call is shown of it, as the
	// holder described it to a store that replicas share (pgstore), so a
	// replica that did not hold it can show it too; nil when not kept.
	// It comes from the store: the reader bounds and sanitizes it.
	Shown []byte
}

// Errors of Answer.
var (
	ErrUnknown  = errors.New("no call waits under this approval id: it was never given, or it expired and was forgotten")
	ErrExpired  = errors.New("the approval id expired: the call must be made again to be held anew")
	ErrAnswered = errors.New("the call was already answered")
)

// Options configure a Store.
type Options struct {
	// Lifetime is how long a held call lives (default DefaultLifetime).
	Lifetime time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NewID returns a fresh, unguessable approval id (default 16 random
	// bytes in hex).
	NewID func() string
	// Max bounds how many calls are held at once (default DefaultMax):
	// holding one more forgets the oldest that no one has answered yet, so
	// a client that makes call after call cannot grow the store without
	// limit nor push out an approval already given.
	Max int
}

// DefaultMax is how many calls a Store holds at most by default.
const DefaultMax = 256

// Store holds calls waiting for approval. It is safe for concurrent use.
type Store struct {
	o    Options
	mu   sync.Mutex
	m    map[string]*Approval
	done map[string]chan struct{} // closed when the held call is answered
}

// New returns an empty store.
func New(o Options) *Store {
	if o.Lifetime <= 0 {
		o.Lifetime = DefaultLifetime
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = randomID
	}
	if o.Max <= 0 {
		o.Max = DefaultMax
	}
	return &Store{o: o, m: map[string]*Approval{}, done: map[string]chan struct{}{}}
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Lifetime is how long a held call lives.
func (s *Store) Lifetime() time.Duration { return s.o.Lifetime }

// forget drops what has expired. s.mu is held.
func (s *Store) forget(now time.Time) {
	for id, a := range s.m {
		if !now.Before(a.Expires) {
			delete(s.m, id)
			delete(s.done, id)
		}
	}
}

// Hold keeps c waiting for a person and returns its approval. A call
// already waiting (not yet answered, not expired) keeps its approval, so a
// model that retries before anyone answered does not pile up ids; held
// reports whether the approval is new.
func (s *Store) Hold(c Call) (a Approval, held bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	s.forget(now)
	for _, x := range s.m {
		if x.Call == c && x.State == Waiting {
			return *x, false
		}
	}
	if len(s.m) >= s.o.Max {
		var oldest *Approval
		for _, x := range s.m {
			if x.State == Waiting && (oldest == nil || x.Created.Before(oldest.Created) || x.Created.Equal(oldest.Created) && x.ID < oldest.ID) {
				oldest = x
			}
		}
		if oldest != nil {
			delete(s.m, oldest.ID)
			delete(s.done, oldest.ID)
		}
	}
	n := &Approval{ID: s.o.NewID(), Call: c, Created: now, Expires: now.Add(s.o.Lifetime)}
	s.m[n.ID] = n
	s.done[n.ID] = make(chan struct{})
	return *n, true
}

// Drop forgets the held call id while no one has answered it, as if it had
// never been held (its record could not be written), and reports whether
// it did; an answered one is kept.
func (s *Store) Drop(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.m[id]; ok && a.State == Waiting {
		delete(s.m, id)
		delete(s.done, id)
		return true
	}
	return false
}

// Answer records a person's answer to the held call id, given through the
// channel via. Only a waiting, unexpired call can be answered, and only
// once. An approval lives on for the rest of the held call's lifetime.
func (s *Store) Answer(id string, approve bool, via, reason string) (Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[id]
	if !ok {
		return Approval{}, ErrUnknown
	}
	if now := s.o.Now(); !now.Before(a.Expires) {
		s.forget(now) // this one and every other that expired
		return Approval{}, ErrExpired
	}
	if a.State != Waiting {
		return *a, ErrAnswered
	}
	a.State, a.Via, a.Reason = Denied, via, reason
	if approve {
		a.State, a.Reason = Approved, ""
	}
	if ch, ok := s.done[id]; ok {
		close(ch)
		delete(s.done, id)
	}
	return *a, nil
}

// Take spends the approval of a call equal to c, if there is one that is
// approved and not expired: it reports true exactly once per approval,
// however many retries race for it.
func (s *Store) Take(c Call) (Approval, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	s.forget(now)
	for _, a := range s.m {
		if a.Call == c && a.State == Approved {
			a.State = Used
			return *a, true
		}
	}
	return Approval{}, false
}

// Denial returns the denial of a call equal to c that a person denied and
// that has not expired, so a retry hears the person's reason; it is spent
// with the reading.
func (s *Store) Denial(c Call) (Approval, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(s.o.Now())
	for id, a := range s.m {
		if a.Call == c && a.State == Denied {
			delete(s.m, id)
			return *a, true
		}
	}
	return Approval{}, false
}

// Answered returns a channel closed once the held call id is answered
// (already closed when it was); nil when no call is held under id (a nil
// channel never receives: the waiter's own deadline ends its wait).
func (s *Store) Answered(id string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.done[id]; ok {
		return ch
	}
	if _, ok := s.m[id]; ok {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return nil
}

// Get returns the held call id, if it is there and has not expired.
func (s *Store) Get(id string) (Approval, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(s.o.Now())
	a, ok := s.m[id]
	if !ok {
		return Approval{}, false
	}
	return *a, true
}

// Waiting lists the calls still waiting for an answer, oldest first.
func (s *Store) Waiting() []Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(s.o.Now())
	var out []Approval
	for _, a := range s.m {
		if a.State == Waiting {
			out = append(out, *a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}
