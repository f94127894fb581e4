package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/approver/passkey"
	"github.com/mcphost/mcphost/sanitize"
)

// The page with passkeys: when Options.PasskeyStore names the credential
// file, the page is opened at http://localhost:PORT (browsers refuse an IP
// address as a passkey's relying party), an approval on it is signed by
// an enrolled passkey over a challenge made of the call and the nonce its
// serve made for it (passkey.RP.BeginBound), and the signed response goes
// to serve with the answer, where it is checked (approver.Proof). The page
// checks nothing a serve would believe: it only carries the proof.
//
// Enrolling (GET /enroll, for `mcphost approve --enroll`) adds a passkey to
// the file. When one is enrolled already, a new one is added only after an
// assertion by an enrolled one, so a process that can open the page cannot
// enroll a key of its own beside the person's.

// RPID is the relying party id of every approval page.
const RPID = "localhost"

// maxPasskeyForm bounds the body of one passkey request.
const maxPasskeyForm = 80 << 10

// withPasskeys sets up the page's relying party once its port is known.
func (p *Page) withPasskeys() error {
	if p.o.PasskeyStore == "" {
		return nil
	}
	port := p.addr[len("127.0.0.1:"):]
	p.host = RPID + ":" + port
	rp, err := passkey.New(passkey.Options{RPID: RPID, Origin: "http://" + p.host, StorePath: p.o.PasskeyStore, Now: p.o.Now})
	if err != nil {
		return err
	}
	p.rp = rp
	return nil
}

// enrolled reports whether a passkey is enrolled, so that approvals on
// the page are signed with one.
func (p *Page) enrolled() bool {
	if p.rp == nil {
		return false
	}
	cs, err := passkey.Load(p.o.PasskeyStore)
	return err == nil && len(cs) > 0
}

// passkeyForm reads a passkey request's form and checks its CSRF token.
func (p *Page) passkeyForm(w http.ResponseWriter, r *http.Request, s *session) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxPasskeyForm)
	if err := r.ParseForm(); err != nil {
		jsonError(w, http.StatusBadRequest, "the request could not be read: "+err.Error())
		return false
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		jsonError(w, http.StatusForbidden, "the request did not carry this page's token")
		return false
	}
	if p.rp == nil {
		jsonError(w, http.StatusNotFound, "this page has no passkeys: start it with mcphost approve --web")
		return false
	}
	return true
}

// beginApproval answers POST /passkey/begin: the options the browser asks
// the authenticator with, for the waiting call named by the form's id,
// and the expiry that is part of the challenge.
func (p *Page) beginApproval(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.passkeyForm(w, r, s) {
		return
	}
	p.mu.Lock()
	i := indexOf(p.waiting, r.PostForm.Get("id"))
	var q *approver.Question
	if i >= 0 {
		q = p.waiting[i]
	}
	p.mu.Unlock()
	if q == nil {
		jsonError(w, http.StatusNotFound, "that call no longer waits")
		return
	}
	nonce, err := hex.DecodeString(q.Nonce)
	if err != nil || len(nonce) < passkey.MinNonce {
		jsonError(w, http.StatusConflict, "the serve that asked gave this call no passkey nonce (an older mcphost serve?): approve it without a passkey")
		return
	}
	options, expires, err := p.rp.BeginBound(q.Binding(), nonce)
	if err != nil {
		jsonError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, map[string]any{"options": json.RawMessage(options), "expires": expires.UTC().Format(time.RFC3339Nano)})
}

// proofOf reads the passkey proof an answer's form carries ("passkey":
// {"expires", "response"}), or nil when it carries none.
func proofOf(field string) (*approver.Proof, error) {
	if field == "" {
		return nil, nil
	}
	var pr approver.Proof
	if err := json.Unmarshal([]byte(field), &pr); err != nil || pr.Expires == "" || len(pr.Response) == 0 {
		return nil, errors.New("the passkey approval the answer carries could not be read")
	}
	return &pr, nil
}

// enrollBinding is what the confirming assertion of an enrollment signs:
// the new passkey's label, so it confirms that enrollment and no other.
func enrollBinding(label string) passkey.Binding {
	sum := sha256.Sum256([]byte(label))
	return passkey.Binding{Server: "mcphost", Tool: "enroll a passkey", DefinitionHash: "enroll v1", ArgsHash: hex.EncodeToString(sum[:])}
}

// beginEnroll answers POST /enroll/begin. With no passkey enrolled it
// starts the enrollment of one labelled by the form's label. With one
// enrolled, a first request gets the options of a confirming assertion
// ("confirm", "confirmToken"), and the second, carrying that assertion
// ("confirmResponse"), starts the enrollment only if it verifies.
func (p *Page) beginEnroll(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.passkeyForm(w, r, s) {
		return
	}
	label := r.PostForm.Get("label")
	if p.enrolled() {
		tok, resp := r.PostForm.Get("confirmToken"), r.PostForm.Get("confirmResponse")
		if tok == "" {
			options, token, err := p.rp.BeginAssert(enrollBinding(label))
			if err != nil {
				jsonError(w, http.StatusConflict, err.Error())
				return
			}
			writeJSON(w, map[string]any{"confirm": json.RawMessage(options), "confirmToken": token})
			return
		}
		if err := p.rp.FinishAssert(tok, enrollBinding(label), []byte(resp)); err != nil {
			jsonError(w, http.StatusForbidden, "a new passkey is added only with an enrolled one's approval: "+err.Error())
			return
		}
	}
	options, token, err := p.rp.BeginEnroll(label)
	if err != nil {
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, map[string]any{"options": json.RawMessage(options), "token": token})
}

// finishEnroll answers POST /enroll/finish: the authenticator's new
// credential is checked and added to the file.
func (p *Page) finishEnroll(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.passkeyForm(w, r, s) {
		return
	}
	if err := p.rp.FinishEnroll(r.PostForm.Get("token"), []byte(r.PostForm.Get("response"))); err != nil {
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	label := r.PostForm.Get("label")
	p.mu.Lock()
	p.noteLocked(fmt.Sprintf("Enrolled the passkey %q: approvals on this page are now signed with it.", sanitize.Line(label)), false)
	p.changedLocked()
	p.mu.Unlock()
	if p.o.OnEnroll != nil {
		p.o.OnEnroll(label)
	}
	writeJSON(w, map[string]any{"enrolled": label})
}

// enrollPage answers GET /enroll.
func (p *Page) enrollPage(w http.ResponseWriter, _ *http.Request, s *session) {
	if p.rp == nil {
		p.refuse(w, http.StatusNotFound, "This page has no passkeys.")
		return
	}
	p.render(w, "enroll", view{CSRF: s.csrf, Passkey: p.enrolled()})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
