package host

import (
	"sync"
	"time"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/state"
)

// StateStore is a Store kept in mcphost's state file. It reads the file once
// and writes every change through at once (under the file's lock, so other
// mcphost processes lose nothing).
type StateStore struct {
	path string
	now  func() time.Time

	mu sync.Mutex
	st *state.State
}

// OpenStateStore loads the state file at path. A corrupt file is an error
// (*state.CorruptError) and is never overwritten.
func OpenStateStore(path string, now func() time.Time) (*StateStore, error) {
	st, err := state.Load(path)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &StateStore{path: path, now: now, st: st}, nil
}

// State returns the loaded state, for reading.
func (s *StateStore) State() *state.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *StateStore) Pin(identity, tool string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Pin(identity, tool)
}

func (s *StateStore) SetPin(identity, tool, hash string) error {
	return s.update(func(st *state.State) error { st.SetPin(identity, tool, hash); return nil })
}

func (s *StateStore) PinNew(identity string, tools map[string]string) error {
	return s.update(func(st *state.State) error { st.PinNew(identity, tools); return nil })
}

func (s *StateStore) HasPins(identity string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.HasPins(identity)
}

func (s *StateStore) AlwaysGrants() []decide.Grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Grants()
}

func (s *StateStore) AddAlwaysGrant(g decide.Grant, serverName string) error {
	return s.update(func(st *state.State) error { return st.AddGrant(g, serverName) })
}

// update applies fn to the file and, when that worked, to the copy in
// memory (re-read, so changes by other processes show too).
func (s *StateStore) update(fn func(*state.State) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := state.Update(s.path, s.now, fn); err != nil {
		return err
	}
	st, err := state.Load(s.path)
	if err != nil {
		return err
	}
	s.st = st
	return nil
}

// PinStore is the pins part of a Store.
type PinStore interface {
	Pin(identity, tool string) (hash string, ok bool)
	SetPin(identity, tool, hash string) error
	PinNew(identity string, tools map[string]string) error
	HasPins(identity string) bool
}

// PinLookup is implemented by a Store (or PinStore) whose pins can fail
// to be read — a database out of reach. LookupPin tells a tool with no pin
// (ok false, err nil) from pins it could not read (err set), and
// LookupHasPins a server with no pin from the same; Pins then counts the
// definition as changed rather than as first seen, which would let a rug
// pull made while the store is down run unasked.
type PinLookup interface {
	LookupPin(identity, tool string) (hash string, ok bool, err error)
	LookupHasPins(identity string) (bool, error)
}

// lookupPin is s's LookupPin, or its Pin with no error for a store that
// cannot fail to be read.
func lookupPin(s PinStore, identity, tool string) (string, bool, error) {
	if l, ok := s.(PinLookup); ok {
		return l.LookupPin(identity, tool)
	}
	h, ok := s.Pin(identity, tool)
	return h, ok, nil
}

// lookupHasPins is s's LookupHasPins, or its HasPins with no error for a
// store that cannot fail to be read.
func lookupHasPins(s PinStore, identity string) (bool, error) {
	if l, ok := s.(PinLookup); ok {
		return l.LookupHasPins(identity)
	}
	return s.HasPins(identity), nil
}

// GrantStore is the "always" grants part of a Store.
type GrantStore interface {
	AlwaysGrants() []decide.Grant
	AddAlwaysGrant(g decide.Grant, serverName string) error
}

// LiveGrants is implemented by a Store (or GrantStore) whose always grants
// other processes change — a store replicas share. A gate reads such a
// store's always grants at every decision instead of once when it is
// made, so that a grant given or revoked through any replica holds or ends
// at once for every gate of every replica.
type LiveGrants interface {
	LiveGrants() bool
}

// liveGrants reports whether s is a LiveGrants that says so.
func liveGrants(s any) bool {
	l, ok := s.(LiveGrants)
	return ok && l.LiveGrants()
}

// SharedPins is a Store whose pins are kept in Pins (a store replicas
// share, such as PostgreSQL's) and whose always grants are kept in Grants:
// the state file of each machine, or a store replicas share (then
// SharedPins is LiveGrants).
type SharedPins struct {
	Pins   PinStore
	Grants GrantStore
}

// LiveGrants reports whether the grants are a store other processes change.
func (s SharedPins) LiveGrants() bool { return liveGrants(s.Grants) }

func (s SharedPins) Pin(identity, tool string) (string, bool) { return s.Pins.Pin(identity, tool) }
func (s SharedPins) LookupPin(identity, tool string) (string, bool, error) {
	return lookupPin(s.Pins, identity, tool)
}
func (s SharedPins) LookupHasPins(identity string) (bool, error) {
	return lookupHasPins(s.Pins, identity)
}
func (s SharedPins) SetPin(identity, tool, hash string) error {
	return s.Pins.SetPin(identity, tool, hash)
}
func (s SharedPins) PinNew(identity string, tools map[string]string) error {
	return s.Pins.PinNew(identity, tools)
}
func (s SharedPins) HasPins(identity string) bool { return s.Pins.HasPins(identity) }
func (s SharedPins) AlwaysGrants() []decide.Grant { return s.Grants.AlwaysGrants() }
func (s SharedPins) AddAlwaysGrant(g decide.Grant, serverName string) error {
	return s.Grants.AddAlwaysGrant(g, serverName)
}
