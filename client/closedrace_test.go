package client

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A crashed stdio server is marked restarting as soon as anything sees its
// connection closed, never left looking ready with a dead connection: a
// call that finds the connection closed before the supervisor has noticed
// the crash marks it, and so does the supervisor the moment it drops the
// connection. The calls that follow come back not sent at once (without
// being sent), and a retry that waits for the server to be ready waits for
// the restart. The supervisor is held at each of those two points, so the
// test does not depend on who wins the race.
func TestClosedConnectionMarksRestarting(t *testing.T) {
	t.Run("a call sees it first", func(t *testing.T) {
		reached, release := make(chan struct{}, 1), make(chan struct{})
		m := New([]Spec{fixtureSpec(t, "flaky", "flaky")}, Options{Backoff: func(int) time.Duration { return time.Millisecond }})
		m.crashSeen = func(string) {
			reached <- struct{}{}
			<-release
		}
		crashThenCheck(t, m, reached, release)
	})
	t.Run("the supervisor drops the connection", func(t *testing.T) {
		var armed atomic.Bool
		reached, release := make(chan struct{}, 1), make(chan struct{})
		m := New([]Spec{fixtureSpec(t, "flaky", "flaky")}, Options{Backoff: func(int) time.Duration { return time.Millisecond },
			// The crash window's clock is read right after the connection
			// is dropped, before the restart is published.
			Now: func() time.Time {
				if armed.CompareAndSwap(true, false) {
					reached <- struct{}{}
					<-release
				}
				return time.Now()
			}})
		armed.Store(true)
		crashThenCheck(t, m, reached, release)
	})
}

func crashThenCheck(t *testing.T, m *Manager, reached chan struct{}, release chan struct{}) {
	t.Helper()
	t.Cleanup(func() { m.Close() })
	m.Start(context.Background())
	if st, _ := statusOf(m, "flaky"); st.State != StateReady {
		t.Fatalf("flaky did not start: %+v", st)
	}
	events, unsub := m.Subscribe()
	defer unsub()
	if r := m.Call(context.Background(), "flaky", "crash", nil, CallOptions{}); r.Outcome != OutcomeUnknown {
		t.Fatalf("crash: %s (%s), want unknown", r.Outcome, r.Detail)
	}
	select {
	case <-reached:
	case <-time.After(20 * time.Second):
		t.Fatal("the supervisor never saw the crash")
	}
	for i := range 2 {
		r := m.Call(context.Background(), "flaky", "read_value", []byte(`{"key":"k"}`), CallOptions{})
		if r.Outcome != OutcomeNotSent {
			t.Errorf("call %d after the crash: %s (%s), want not sent", i+1, r.Outcome, r.Detail)
		}
		if st, _ := statusOf(m, "flaky"); st.State != StateRestarting {
			t.Errorf("after call %d the server is %s, want %s: a dead connection must not look ready", i+1, st.State, StateRestarting)
		}
	}
	close(release)
	waitFor(t, events, func(e Event) bool { return e.Server == "flaky" && e.State == StateReady })
	callOK(t, m, "flaky", "read_value", `{"key":"k"}`)
}
