package serve

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/mcphost/mcphost/audit"
)

// TeamStore keeps the team page's logins under way and its browser
// sessions: each an opaque value under a kind ("login", "session") and a
// key, until its expiry. With replicas on one store (pgstore.TeamPage)
// every replica knows them, so a login's callback, or a browser's next
// request, may reach any replica behind any load balancer.
//
// Put adds or replaces a value, and keeps at most max of its kind (the one
// closest to its end goes first). Take returns an unexpired value and
// removes it, once (a login's state is used once). Get returns an
// unexpired value. Drop removes one. An error means the store could not
// be reached: the page then refuses, it never lets a request through.
type TeamStore interface {
	Put(kind, key string, value []byte, expires time.Time, max int) error
	Take(kind, key string, now time.Time) ([]byte, bool, error)
	Get(kind, key string, now time.Time) ([]byte, bool, error)
	Drop(kind, key string) error
}

// The kinds the team page keeps.
const (
	teamKindLogin   = "login"
	teamKindSession = "session"
)

// teamLoginRec is a login the browser holding Binding started, as the
// store keeps it; teamSessionRec a session.
type teamLoginRec struct {
	Binding  string    `json:"binding"`
	Nonce    string    `json:"nonce"`
	Verifier string    `json:"verifier"`
	Expires  time.Time `json:"expires"`
}

type teamSessionRec struct {
	Person  audit.Person `json:"person"`
	ID      string       `json:"id"`
	Groups  []string     `json:"groups,omitempty"`
	CSRF    string       `json:"csrf"`
	Expires time.Time    `json:"expires"`
}

func (r teamSessionRec) session() *teamSession {
	return &teamSession{who: &teamApprover{person: r.Person, id: r.ID, groups: r.Groups}, csrf: r.CSRF, expires: r.Expires}
}

func sessionRec(s *teamSession) teamSessionRec {
	return teamSessionRec{Person: s.who.person, ID: s.who.id, Groups: s.who.groups, CSRF: s.csrf, Expires: s.expires}
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v) // plain structs of strings and times: cannot fail
	return b
}

// memTeamStore is the TeamStore of a serve without a store: its memory.
type memTeamStore struct {
	mu sync.Mutex
	m  map[string]map[string]memTeamEntry
}

type memTeamEntry struct {
	value   []byte
	expires time.Time
}

func newMemTeamStore() *memTeamStore { return &memTeamStore{m: map[string]map[string]memTeamEntry{}} }

func (s *memTeamStore) Put(kind, key string, value []byte, expires time.Time, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m[kind]
	if m == nil {
		m = map[string]memTeamEntry{}
		s.m[kind] = m
	}
	if _, ok := m[key]; !ok {
		makeRoom(m, func(e memTeamEntry) time.Time { return e.expires }, time.Now(), max)
	}
	m[key] = memTeamEntry{value: value, expires: expires}
	return nil
}

func (s *memTeamStore) Take(kind, key string, now time.Time) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[kind][key]
	delete(s.m[kind], key)
	if !ok || now.After(e.expires) {
		return nil, false, nil
	}
	return e.value, true, nil
}

func (s *memTeamStore) Get(kind, key string, now time.Time) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[kind][key]
	if !ok || now.After(e.expires) {
		return nil, false, nil
	}
	return e.value, true, nil
}

func (s *memTeamStore) Drop(kind, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m[kind], key)
	return nil
}
