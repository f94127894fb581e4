package approver

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver/passkey"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// TestAnswersComeThroughApprove: an approver's answer is recorded as given
// in mcphost approve, whatever the approver's side of it held, and the
// session grant it gives names that way to the calls it lets run.
func TestAnswersComeThroughApprove(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if err := c.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeSession, Via: audit.ChannelWebPasskey}); err != nil {
		t.Fatal(err)
	}
	first := result(t, res)
	if first.Status != host.StatusSuccess || first.Via != audit.ChannelApprove {
		t.Fatalf("approved call: %s via %q, want success via approve", first.Status, first.Via)
	}
	second := result(t, w.call(context.Background(), "set_value", `{"key":"k2","value":"v"}`))
	if second.Status != host.StatusSuccess || second.Via != audit.ChannelGrant || second.Grant == nil ||
		second.Grant.Via != audit.ChannelApprove || second.Grant.CallID != first.CallID {
		t.Fatalf("call under the grant: %s via %q grant %+v; want success via grant, given in approve for %s", second.Status, second.Via, second.Grant, first.CallID)
	}
}

// stubPasskeys is a passkey check that records what serve asked it and
// answers err: the assertion itself is checked by package passkey (and
// by a real browser's virtual authenticator in the page's test); here
// what matters is that the broker asks it with the question's own
// binding and nonce, and believes only its nil.
type stubPasskeys struct {
	err   error
	calls []stubCall
}

type stubCall struct {
	b       passkey.Binding
	nonce   string
	expires time.Time
	resp    string
}

func (s *stubPasskeys) Verify(b passkey.Binding, nonce []byte, expires time.Time, response []byte) error {
	s.calls = append(s.calls, stubCall{b, hex.EncodeToString(nonce), expires, string(response)})
	return s.err
}

func proof(expires time.Time) *Proof {
	return &Proof{Expires: expires.Format(time.RFC3339Nano), Response: json.RawMessage(`{"id":"x"}`)}
}

// TestThePageIsRecordedAsTheWebPage: an answer the approval page sends
// says so, and the call is recorded as approved on the web page.
func TestThePageIsRecordedAsTheWebPage(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if err := c.AnswerVia(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}, ViaWeb, nil); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status != host.StatusSuccess || r.Via != audit.ChannelWeb {
		t.Fatalf("approved on the page: %s via %q, want success via web", r.Status, r.Via)
	}
}

// TestAPasskeyApprovalIsCheckedByServe: an approval with a passkey
// assertion counts as the page's with a passkey only when serve's own
// check of it, against the question's binding and the nonce serve made,
// passes; a refused one approves nothing and the call still waits.
func TestAPasskeyApprovalIsCheckedByServe(t *testing.T) {
	pk := &stubPasskeys{err: errors.New("signature does not verify")}
	w := newWorld(t, true, Options{Passkeys: pk})
	c := w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if len(q.Nonce) != 64 || q.Definition == "" {
		t.Fatalf("question nonce %q definition %q: want a 32-byte nonce and the definition hash", q.Nonce, q.Definition)
	}
	exp := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	if err := c.AnswerVia(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}, ViaWeb, proof(exp)); err != nil {
		t.Fatal(err)
	}
	rej := next[*Rejected](t, c)
	if rej.ID != q.ID || !strings.Contains(rej.Message, "signature does not verify") {
		t.Fatalf("rejected = %+v", rej)
	}
	if w.runs("set_value") != 0 {
		t.Fatal("a refused passkey approval ran the call")
	}
	pk.err = nil
	if err := c.AnswerVia(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}, ViaWeb, proof(exp)); err != nil {
		t.Fatal(err)
	}
	r := result(t, res)
	if r.Status != host.StatusSuccess || r.Via != audit.ChannelWebPasskey || w.runs("set_value") != 1 {
		t.Fatalf("verified passkey approval: %s via %q, %d runs; want one success via web+passkey", r.Status, r.Via, w.runs("set_value"))
	}
	if len(pk.calls) != 2 {
		t.Fatalf("verifier asked %d times, want 2", len(pk.calls))
	}
	got := pk.calls[1]
	if got.b != q.Binding() || got.nonce != q.Nonce || !got.expires.Equal(exp) || got.resp != `{"id":"x"}` {
		t.Fatalf("verifier asked with %+v; want the question's binding %+v, nonce %s, expiry %v", got, q.Binding(), q.Nonce, exp)
	}
}

// TestAPasskeyApprovalNeedsAServeThatChecksIt: a serve without a passkey
// check takes no answer that carries one, and no answer names a channel
// the protocol does not have.
func TestAPasskeyApprovalNeedsAServeThatChecksIt(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if err := c.AnswerVia(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}, ViaWeb, proof(time.Now().Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if rej := next[*Rejected](t, c); !strings.Contains(rej.Message, "cannot check passkeys") {
		t.Fatalf("rejected = %+v", rej)
	}
	if err := c.AnswerVia(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}, "chat", nil); err != nil {
		t.Fatal(err)
	}
	if rej := next[*Rejected](t, c); !strings.Contains(rej.Message, "no approver's channel") {
		t.Fatalf("rejected = %+v", rej)
	}
	if w.runs("set_value") != 0 {
		t.Fatal("a refused answer ran the call")
	}
	if err := c.Answer(q, host.Answer{Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status == host.StatusSuccess {
		t.Fatalf("denied call: %s", r.Status)
	}
}
