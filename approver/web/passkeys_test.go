package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/approver"
)

// TestThePageAnswersAsTheWebPage: an answer given on the page goes to
// serve saying it came from the page, and without a passkey proof when
// the form carries none.
func TestThePageAnswersAsTheWebPage(t *testing.T) {
	h := start(t, Options{})
	q := question("q1")
	h.p.Apply(q)
	h.login()
	h.post(h.form(q, "once"), nil)
	got := h.src.sent()
	if len(got) != 1 || got[0].via != approver.ViaWeb || got[0].proof != nil || !got[0].a.Approve {
		t.Fatalf("sent = %+v; want one approval via the web page, without a proof", got)
	}
}

// TestAPasskeyProofGoesWithTheAnswer: the page carries the passkey proof
// of an approval to serve as it came; one it cannot read sends nothing and
// the call still waits.
func TestAPasskeyProofGoesWithTheAnswer(t *testing.T) {
	h := start(t, Options{})
	q := question("q1")
	h.p.Apply(q)
	h.login()
	bad := h.form(q, "once")
	bad.Set("passkey", `{"expires":""}`)
	h.post(bad, nil)
	if got := h.src.sent(); len(got) != 0 || len(h.p.Waiting()) != 1 {
		t.Fatalf("an unreadable proof sent %+v and left %d waiting; want nothing sent, the call waiting", got, len(h.p.Waiting()))
	}
	f := h.form(q, "once")
	f.Set("passkey", `{"expires":"2026-12-05T20:00:00.123Z","response":{"id":"abc"}}`)
	h.post(f, nil)
	got := h.src.sent()
	if len(got) != 1 || got[0].proof == nil || got[0].proof.Expires != "2026-12-05T20:00:00.123Z" || string(got[0].proof.Response) != `{"id":"abc"}` {
		t.Fatalf("sent = %+v; want the approval with its proof as given", got)
	}
}

// TestARefusedAnswerWaitsAgain: when serve refuses the page's answer (a
// passkey that did not verify, say), the call is shown again, since it
// still waits there.
func TestARefusedAnswerWaitsAgain(t *testing.T) {
	h := start(t, Options{})
	q := question("q1")
	h.p.Apply(q)
	h.login()
	h.post(h.form(q, "once"), nil)
	if n := len(h.p.Waiting()); n != 0 {
		t.Fatalf("%d calls shown after the answer, want 0", n)
	}
	h.p.Apply(&approver.Rejected{Type: approver.TypeRejected, ID: "q1", Message: "the passkey approval was refused"})
	if w := h.p.Waiting(); len(w) != 1 || w[0].ID != "q1" {
		t.Fatalf("after serve refused the answer the page shows %d calls, want q1 again", len(w))
	}
	// A refusal of a call the page never answered shows nothing new.
	h.p.Apply(&approver.Rejected{Type: approver.TypeRejected, ID: "other", Message: "x"})
	if n := len(h.p.Waiting()); n != 1 {
		t.Fatalf("%d calls shown, want 1", n)
	}
}

// TestAPasskeyPageIsOpenedByName: with passkeys the link names localhost
// (browsers refuse an address as a passkey's relying party), the page
// answers at that name and its own address, and an Origin must be the
// Host's own.
func TestAPasskeyPageIsOpenedByName(t *testing.T) {
	h := start(t, Options{PasskeyStore: filepath.Join(t.TempDir(), "passkeys.json")})
	u, err := url.Parse(h.p.Link())
	if err != nil {
		t.Fatal(err)
	}
	port := h.p.Addr()[strings.LastIndexByte(h.p.Addr(), ':')+1:]
	if u.Host != "localhost:"+port {
		t.Fatalf("link %q; want it at localhost:%s", h.p.Link(), port)
	}
	q := question("q1")
	h.p.Apply(q)
	h.login()
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"localhost:" + port, "http://localhost:" + port, http.StatusSeeOther},
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port, http.StatusSeeOther},
		{"localhost:" + port, "http://127.0.0.1:" + port, http.StatusForbidden},
		{"127.0.0.1:" + port, "http://localhost:" + port, http.StatusForbidden},
		{"evil.localhost:" + port, "http://evil.localhost:" + port, http.StatusMisdirectedRequest},
	} {
		resp, _ := h.post(url.Values{"csrf": {h.csrf}, "id": {"nope"}, "action": {"deny"}}, func(r *http.Request) {
			r.Host = c.host
			r.Header.Set("Origin", c.origin)
		})
		if resp.StatusCode != c.want {
			t.Errorf("Host %s Origin %s: %s, want %d", c.host, c.origin, resp.Status, c.want)
		}
	}
	// No passkey is enrolled: approvals are not signed, and the page says
	// nothing of passkeys.
	if _, body := h.get("/", nil); strings.Contains(body, "data-passkey") {
		t.Fatal("the page asks for passkeys with none enrolled")
	}
	if resp, body := h.get("/enroll", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="enroll-form"`) {
		t.Fatalf("GET /enroll: %s", resp.Status)
	}
}

// TestEnrollingNeedsTheToken: the passkey requests need the session's
// CSRF token like every answer.
func TestEnrollingNeedsTheToken(t *testing.T) {
	h := start(t, Options{PasskeyStore: filepath.Join(t.TempDir(), "passkeys.json")})
	h.p.Apply(question("q1"))
	h.login()
	for _, path := range []string{"/enroll/begin", "/enroll/finish", "/passkey/begin"} {
		req := mustReq(t, "POST", "http://"+h.p.Addr()+path, url.Values{"csrf": {"0000"}, "label": {"x"}, "id": {"q1"}}.Encode())
		req.AddCookie(h.cookie)
		if resp, _ := h.do(req); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with a wrong token: %s, want 403", path, resp.Status)
		}
	}
	req := mustReq(t, "POST", "http://"+h.p.Addr()+"/enroll/begin", url.Values{"csrf": {h.csrf}, "label": {"laptop"}}.Encode())
	req.AddCookie(h.cookie)
	resp, body := h.do(req)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"token"`) || !strings.Contains(body, `"challenge"`) {
		t.Fatalf("enroll begin with the token: %s %s", resp.Status, body)
	}
}

// TestASecondPasskeyNeedsTheFirst: with a passkey enrolled, enrolling
// another starts with an assertion by an enrolled one, and one that does
// not verify enrolls nothing; approvals on the page are then signed.
func TestASecondPasskeyNeedsTheFirst(t *testing.T) {
	store := filepath.Join(t.TempDir(), "passkeys.json")
	enrolled := `{"version":1,"passkeys":[{"id":"AQID","publicKey":"BAUG","signCount":0,"aaguid":"","enrolledAt":"2026-12-01T10:00:00Z","label":"laptop","userHandle":"BwgJ"}]}`
	if err := os.WriteFile(store, []byte(enrolled), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, Options{PasskeyStore: store})
	h.p.Apply(question("q1"))
	h.login()
	if _, body := h.get("/", nil); !strings.Contains(body, `data-passkey="on"`) {
		t.Fatal("with a passkey enrolled the page does not sign approvals")
	}
	begin := func(f url.Values) (int, string) {
		f.Set("csrf", h.csrf)
		req := mustReq(t, "POST", "http://"+h.p.Addr()+"/enroll/begin", f.Encode())
		req.AddCookie(h.cookie)
		resp, body := h.do(req)
		return resp.StatusCode, body
	}
	code, body := begin(url.Values{"label": {"phone"}})
	if code != http.StatusOK || !strings.Contains(body, `"confirm"`) || strings.Contains(body, `"token"`) {
		t.Fatalf("enroll begin with a passkey enrolled: %d %s; want the options of a confirming assertion only", code, body)
	}
	var c struct{ ConfirmToken string }
	if err := json.Unmarshal([]byte(body), &c); err != nil || c.ConfirmToken == "" {
		t.Fatalf("no confirm token in %s", body)
	}
	code, body = begin(url.Values{"label": {"phone"}, "confirmToken": {c.ConfirmToken}, "confirmResponse": {`{"id":"AQID"}`}})
	if code != http.StatusForbidden || strings.Contains(body, `"token"`) {
		t.Fatalf("enroll begin with a forged confirmation: %d %s; want 403 and no enrollment", code, body)
	}
}
