package passkey

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// A bound assertion is one whose nonce another process keeps: the serve
// that holds the call makes a nonce for it, the page asks the
// authenticator to sign a challenge made of the call, that nonce and an
// expiry ([RP.BeginBound]), and the serve checks the signed response
// itself ([Verifier.Verify]) before it counts the approval. The page is
// then only a messenger: a page, or any process of the person, that
// forges or replays a response is refused by the serve.

// MinNonce is the fewest bytes a bound assertion's nonce may have.
const MinNonce = 16

// BeginBound starts the approval of the call b with a nonce the caller
// keeps (the serve's, for that call). It returns the options for
// navigator.credentials.get, as BeginAssert does, and the expiry that is
// part of the challenge: the response, the binding, the nonce and that
// expiry go to [Verifier.Verify]. Nothing is kept in r.
func (r *RP) BeginBound(b Binding, nonce []byte) (options []byte, expires time.Time, err error) {
	if err := b.check(); err != nil {
		return nil, time.Time{}, err
	}
	if len(nonce) < MinNonce {
		return nil, time.Time{}, fmt.Errorf("passkey: the call's nonce is %d bytes, fewer than %d", len(nonce), MinNonce)
	}
	cs, err := Load(r.opts.StorePath)
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(cs) == 0 {
		return nil, time.Time{}, fmt.Errorf("%w: enroll one with mcphost approve --enroll", ErrNoPasskeys)
	}
	expires = r.opts.Now().Add(r.opts.TTL).Truncate(time.Millisecond)
	allow := make([]protocol.CredentialDescriptor, len(cs))
	for i, c := range cs {
		wc := c.webauthn()
		allow[i] = wc.Descriptor()
	}
	req, _, err := r.wa.BeginDiscoverableLogin(
		webauthn.WithChallenge(challengeFor(b, nonce, expires)),
		webauthn.WithAllowedCredentials(allow),
		webauthn.WithUserVerification(protocol.VerificationRequired),
		webauthn.WithLoginOrigin(r.opts.Origin),
	)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("passkey: begin approval: %w", err)
	}
	options, err = json.Marshal(req.Response)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("passkey: begin approval: %w", err)
	}
	return options, expires, nil
}

// VerifierOptions configure a Verifier.
type VerifierOptions struct {
	// RPID is the relying party id the page used: "localhost" or a name
	// under .localhost.
	RPID string
	// StorePath is the credential file the page's RP enrolls into.
	StorePath string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// TTL is the longest a bound ceremony may last; zero means DefaultTTL.
	// An expiry further away than TTL (and a second of clock skew) is
	// refused: the page cannot stretch a challenge's life.
	TTL time.Duration
}

// Verifier checks bound assertions in the process that keeps their
// nonces. Its methods may be called concurrently; it keeps no ceremony:
// the caller makes each nonce once and forgets it once answered.
type Verifier struct{ o VerifierOptions }

// NewVerifier checks o and returns a Verifier.
func NewVerifier(o VerifierOptions) (*Verifier, error) {
	if err := checkRP(o.RPID, "http://"+o.RPID); err != nil {
		return nil, err
	}
	if o.StorePath == "" {
		return nil, errors.New("passkey: no credential file given (VerifierOptions.StorePath)")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	return &Verifier{o: o}, nil
}

// Enrolled reports whether any passkey is enrolled (an unreadable file is
// its error).
func (v *Verifier) Enrolled() (bool, error) {
	cs, err := Load(v.o.StorePath)
	return len(cs) > 0, err
}

// Verify returns nil only when response (the JSON of the browser's
// PublicKeyCredential) is an assertion, with user verification, by an
// enrolled credential, of the challenge made of b, nonce and expires, from
// a page whose origin is on the RP ID (any port: the page's port is not
// known here, and browsers bind the RP ID to the name, not the port),
// before expires, with a signature counter that moved forward. Every
// refusal wraps one of the package's Err values.
func (v *Verifier) Verify(b Binding, nonce []byte, expires time.Time, response []byte) error {
	if err := b.check(); err != nil {
		return err
	}
	if len(nonce) < MinNonce {
		return fmt.Errorf("%w: the call's nonce is %d bytes, fewer than %d", ErrBindingMismatch, len(nonce), MinNonce)
	}
	now := v.o.Now()
	if !now.Before(expires) {
		return fmt.Errorf("%w: the approval took longer than %s; approve again", ErrCeremonyExpired, v.o.TTL)
	}
	if expires.Sub(now) > v.o.TTL+time.Second {
		return fmt.Errorf("%w: the approval says it lasts until %s, longer than a passkey approval may", ErrInvalidResponse, expires.UTC().Format(time.RFC3339))
	}
	if len(response) > maxResponse {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidResponse, len(response), maxResponse)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidResponse, describe(err))
	}
	origin := parsed.Response.CollectedClientData.Origin
	if !onRPID(origin, v.o.RPID) {
		return fmt.Errorf("%w: the response names %q, which is not a page on %q", ErrWrongOrigin, origin, v.o.RPID)
	}
	wa, err := webauthn.New(&webauthn.Config{RPID: v.o.RPID, RPDisplayName: "mcphost", RPOrigins: []string{origin}})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWrongOrigin, err)
	}
	session := webauthn.SessionData{
		Challenge:        base64.RawURLEncoding.EncodeToString(challengeFor(b, nonce, expires)),
		RelyingPartyID:   v.o.RPID,
		UserVerification: protocol.VerificationRequired,
	}
	return verifyParsed(wa, v.o.StorePath, session, parsed)
}

// onRPID reports whether origin is a page whose host is rpID or a name
// under it, over http or https, on any port.
func onRPID(origin, rpID string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == rpID || strings.HasSuffix(h, "."+rpID)
}
