package approver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// TestAPasskeyApprovalNeedsAValidExpiry: a passkey approval whose expiry
// does not parse approves nothing, and serve's check is never asked about
// it (it would check the signature against an expiry no one gave); the
// call still waits, and an approval with a valid expiry then counts.
func TestAPasskeyApprovalNeedsAValidExpiry(t *testing.T) {
	pk := &stubPasskeys{} // says yes to anything it is asked
	w := newWorld(t, true, Options{Passkeys: pk})
	c := w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	for _, expires := range []string{"", "tomorrow", "2026-12-05 10:00:00", "1767225600"} {
		p := proof(time.Now())
		p.Expires = expires
		if err := c.AnswerVia(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}, ViaWeb, p); err != nil {
			t.Fatal(err)
		}
		if rej := next[*Rejected](t, c); rej.ID != q.ID || !strings.Contains(rej.Message, "no valid expiry") {
			t.Fatalf("a passkey approval expiring %q: rejected %+v, want one saying it has no valid expiry", expires, rej)
		}
	}
	if len(pk.calls) != 0 || w.runs("set_value") != 0 {
		t.Fatalf("the passkey check was asked %d times and the call ran %d times, want neither", len(pk.calls), w.runs("set_value"))
	}
	if err := c.AnswerVia(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}, ViaWeb, proof(time.Now().Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status != host.StatusSuccess || len(pk.calls) != 1 {
		t.Fatalf("a valid passkey approval after the refused ones: %s, check asked %d times; want success, asked once", r.Status, len(pk.calls))
	}
}

// TestAHeldCallPostedTwiceIsShownOnce: posting a held call again under the
// same id (a gate that tells it twice, a restart that posts what waits)
// shows it once — to the approvers connected and to those that connect
// later — and its answer goes where the first post said.
func TestAHeldCallPostedTwiceIsShownOnce(t *testing.T) {
	w := brokerOnly(t, Options{})
	b := w.b
	q := &host.Question{Server: "f", Tool: &client.Tool{Server: "f", Name: "set_value", Hash: "h"}, Args: json.RawMessage(`{"key":"k"}`),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T2, Class: decide.Unknown}, Scopes: []decide.Scope{decide.ScopeOnce}}
	got := make(chan string, 4)
	post := func(id, by string) {
		t.Helper()
		if err := b.Post(id, q, time.Now().Add(time.Minute), func(host.Answer) error { got <- by; return nil }); err != nil {
			t.Fatalf("Post(%s) by %s: %v", id, by, err)
		}
	}
	early := w.approver()
	post("held-1", "first")
	post("held-1", "second")
	post("held-2", "first")
	late := w.approver()
	for name, c := range map[string]*Conn{"an approver connected before": early, "an approver connected after": late} {
		for _, want := range []string{"held-1", "held-2"} {
			if q := next[*Question](t, c); q.ID != want {
				t.Fatalf("%s was shown %s, want %s (each held call once, in order)", name, q.ID, want)
			}
		}
	}
	// The next line each approver gets is held-1's withdrawal, not a
	// second showing of it; the answer went to the first post's gate.
	if err := late.Answer(&Question{ID: "held-1", Arguments: string(q.Args)}, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	if wd := next[*Withdrawn](t, early); wd.ID != "held-1" {
		t.Fatalf("withdrawn %+v, want held-1", wd)
	}
	if by := <-got; by != "first" || len(got) != 0 {
		t.Fatalf("the answer went to the %s post's gate (%d more), want the first's only", by, len(got))
	}
}

// TestAHeldCallThatCannotBeShownIsNotPosted: Post refuses, saying why, a
// held call no approver could be shown as it is, and any call once the
// broker stops; none of them reaches an approver.
func TestAHeldCallThatCannotBeShownIsNotPosted(t *testing.T) {
	w := brokerOnly(t, Options{})
	b := w.b
	c := w.approver()
	question := func(args string) *host.Question {
		return &host.Question{Server: "f", Tool: &client.Tool{Server: "f", Name: "set_value", Hash: "h"}, Args: json.RawMessage(args),
			Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T2}, Scopes: []decide.Scope{decide.ScopeOnce}}
	}
	never := func(host.Answer) error { t.Error("an answer reached a call that was never posted"); return nil }
	for _, tc := range []struct{ name, args, want string }{
		{"too large", `{"key":"` + strings.Repeat("x", MaxArguments) + `"}`, "are larger than an approver shows"},
		{"invalid UTF-8", "{\"k\":\"\xff\"}", "not valid UTF-8"},
	} {
		if err := b.Post("held-"+tc.name, question(tc.args), time.Now().Add(time.Minute), never); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("Post with arguments %s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if err := b.Post("held-ok", question(`{"key":"k"}`), time.Now().Add(time.Minute), func(host.Answer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if q := next[*Question](t, c); q.ID != "held-ok" {
		t.Fatalf("the approver was shown %s first, want held-ok (the refused posts shown to no one)", q.ID)
	}
	b.Close()
	if err := b.Post("held-late", question(`{"key":"k"}`), time.Now().Add(time.Minute), never); !errors.Is(err, ErrStopping) {
		t.Fatalf("Post after Close: %v, want ErrStopping", err)
	}
}

// TestTheLargestShownArgumentsReachAnApprover: arguments of MaxArguments
// bytes, every one an angle bracket as a client's JSON may send them, are
// held and shown to an approver exactly, answerable by their hash, not
// refused as a line too long.
func TestTheLargestShownArgumentsReachAnApprover(t *testing.T) {
	w := brokerOnly(t, Options{})
	b := w.b
	c := w.approver()
	prefix, suffix := `{"html":"`, `"}`
	args := prefix + strings.Repeat("<", MaxArguments-len(prefix)-len(suffix)) + suffix
	taken := make(chan host.Answer, 1)
	q := &host.Question{Server: "f", Tool: &client.Tool{Server: "f", Name: "write_page", Hash: "h"}, Args: json.RawMessage(args),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T2}, Scopes: []decide.Scope{decide.ScopeOnce}}
	if err := b.Post("held-big", q, time.Now().Add(time.Minute), func(a host.Answer) error { taken <- a; return nil }); err != nil {
		t.Fatalf("Post of %d bytes of arguments: %v", len(args), err)
	}
	shown := next[*Question](t, c)
	if shown.Arguments != args {
		t.Fatalf("the approver was shown %d bytes of arguments, want the %d held", len(shown.Arguments), len(args))
	}
	if err := c.Answer(shown, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-taken:
		if !a.Approve {
			t.Fatalf("the gate was given %+v, want the approval", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the approval of the largest arguments never reached the gate")
	}
}

// TestWaitingQuestionsAreBoundedInBytes: once the questions waiting take
// Options.MaxWaiting bytes, a further one is neither held nor asked, and
// says why; when a waiting one is answered there is room again.
func TestWaitingQuestionsAreBoundedInBytes(t *testing.T) {
	args := `{"v":"` + strings.Repeat("x", 4000) + `"}`
	w := brokerOnly(t, Options{MaxWaiting: 10000})
	b := w.b
	c := w.approver()
	q := &host.Question{Server: "f", Tool: &client.Tool{Server: "f", Name: "set_value", Hash: "h"}, Args: json.RawMessage(args),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T2}, Scopes: []decide.Scope{decide.ScopeOnce}}
	took := func(host.Answer) error { return nil }
	for _, id := range []string{"held-1", "held-2"} {
		if err := b.Post(id, q, time.Now().Add(time.Minute), took); err != nil {
			t.Fatalf("Post %s within the bound: %v", id, err)
		}
	}
	if err := b.Post("held-3", q, time.Now().Add(time.Minute), took); err == nil || !strings.Contains(err.Error(), "already take") {
		t.Fatalf("Post past the bound: %v, want a refusal saying the waiting calls take the room", err)
	}
	if _, err := b.Ask(context.Background(), q); !errors.Is(err, host.ErrNoPerson) || !strings.Contains(err.Error(), "already take") {
		t.Fatalf("Ask past the bound: %v, want ErrNoPerson saying the waiting calls take the room", err)
	}
	first := next[*Question](t, c)
	if second := next[*Question](t, c); second.ID != "held-2" {
		t.Fatalf("the approver was shown %s second, want held-2 (not the call refused for want of room)", second.ID)
	}
	// A second approver hears the answered call withdrawn once the broker
	// has taken it off the queue.
	c2 := w.approver()
	next[*Question](t, c2)
	next[*Question](t, c2)
	if err := c.Answer(first, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	if wd := next[*Withdrawn](t, c2); wd.ID != first.ID {
		t.Fatalf("withdrawn %+v, want %s", wd, first.ID)
	}
	if err := b.Post("held-3", q, time.Now().Add(time.Minute), took); err != nil {
		t.Fatalf("Post once an answer made room: %v", err)
	}
}
