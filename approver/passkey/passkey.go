package passkey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"
)

// Errors a ceremony is refused with; the returned error wraps one of them
// and says more.
var (
	ErrUnknownCeremony   = errors.New("no such passkey ceremony")
	ErrCeremonyUsed      = errors.New("passkey ceremony already used")
	ErrCeremonyExpired   = errors.New("passkey ceremony expired")
	ErrBindingMismatch   = errors.New("passkey approval was made for another call")
	ErrWrongOrigin       = errors.New("passkey response came from another origin")
	ErrUserNotVerified   = errors.New("authenticator did not verify the user")
	ErrUnknownCredential = errors.New("passkey is not enrolled")
	ErrCounterRegressed  = errors.New("passkey signature counter went back (cloned authenticator?)")
	ErrNoPasskeys        = errors.New("no passkey is enrolled")
	ErrAlreadyEnrolled   = errors.New("passkey is already enrolled")
	ErrInvalidResponse   = errors.New("passkey response is not valid")
)

// DefaultTTL is how long a ceremony may be finished after it began.
const DefaultTTL = 2 * time.Minute

const (
	maxResponse   = 64 << 10 // bytes of a browser's response JSON
	maxField      = 4096     // bytes of one binding field
	maxLabel      = 64       // characters of a credential's label
	maxCeremonies = 256      // unexpired ceremonies of each kind
	nonceSize     = 32
)

// Options configure an RP. RPID, Origin and StorePath are required.
type Options struct {
	// RPID is the WebAuthn relying party id: "localhost" or a name under
	// .localhost. Browsers do not accept IP addresses as RP IDs, so the page
	// must be opened by name.
	RPID string
	// Origin is the page's origin, e.g. "http://localhost:8377"; every
	// response must come from exactly this origin. Its host must be RPID.
	Origin string
	// StorePath is the credential file, e.g. $XDG_STATE_HOME/mcphost/passkeys.json.
	StorePath string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rand is the source of challenges, nonces, tokens and user handles;
	// nil means crypto/rand.
	Rand io.Reader
	// TTL is a ceremony's lifetime; zero means DefaultTTL.
	TTL time.Duration
}

// Binding names the one call an assertion approves. All fields are compared
// byte for byte; Client may be empty (a call with no client identity), the
// others may not.
type Binding struct {
	Client, Server, Tool, DefinitionHash, ArgsHash string
}

// RP is the WebAuthn relying party of one approval page. Its methods may be
// called concurrently. Ceremonies live in memory: they end with the process.
type RP struct {
	opts Options
	wa   *webauthn.WebAuthn

	randMu sync.Mutex // Options.Rand need not be safe for concurrent use

	mu      sync.Mutex
	enrolls map[string]*enrollment
	asserts map[string]*assertion
}

type enrollment struct {
	session webauthn.SessionData
	user    user
	label   string
	expires time.Time
	used    bool
}

type assertion struct {
	session   webauthn.SessionData
	binding   Binding
	nonce     []byte
	challenge []byte
	expires   time.Time
	used      bool
}

// New checks o and returns an RP.
func New(o Options) (*RP, error) {
	if err := checkRP(o.RPID, o.Origin); err != nil {
		return nil, err
	}
	if o.StorePath == "" {
		return nil, errors.New("passkey: no credential file given (Options.StorePath)")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  o.RPID,
		RPDisplayName:         "mcphost",
		RPOrigins:             []string{o.Origin},
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
			UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: o.TTL, TimeoutUVD: o.TTL},
			Registration: webauthn.TimeoutConfig{Timeout: o.TTL, TimeoutUVD: o.TTL},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	return &RP{opts: o, wa: wa, enrolls: map[string]*enrollment{}, asserts: map[string]*assertion{}}, nil
}

// checkRP accepts only loopback names: the page is served on loopback.
func checkRP(rpID, origin string) error {
	if rpID == "" {
		return errors.New(`passkey: no RP ID given; use "localhost"`)
	}
	if net.ParseIP(rpID) != nil {
		return fmt.Errorf(`passkey: RP ID %q is an IP address, which browsers refuse for passkeys; open the page at http://localhost:PORT and use "localhost"`, rpID)
	}
	if rpID != "localhost" && !strings.HasSuffix(rpID, ".localhost") {
		return fmt.Errorf(`passkey: RP ID %q is not a loopback name; use "localhost"`, rpID)
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("passkey: origin %q is not of the form http://localhost:PORT", origin)
	}
	if !strings.EqualFold(u.Hostname(), rpID) {
		return fmt.Errorf("passkey: origin %q is not on the RP ID %q", origin, rpID)
	}
	return nil
}

// user is the WebAuthn user entity of one credential. Each enrolled
// credential has its own random handle, so that enrolling on a second
// machine never replaces the first machine's discoverable credential on the
// same authenticator.
type user struct {
	handle []byte
	label  string
	creds  []webauthn.Credential
}

func (u user) WebAuthnID() []byte                         { return u.handle }
func (u user) WebAuthnName() string                       { return "mcphost approvals" }
func (u user) WebAuthnDisplayName() string                { return u.label }
func (u user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

func (c Credential) webauthn() webauthn.Credential {
	ts := make([]protocol.AuthenticatorTransport, len(c.Transports))
	for i, t := range c.Transports {
		ts[i] = protocol.AuthenticatorTransport(t)
	}
	var aaguid []byte
	if id, err := uuid.Parse(c.AAGUID); err == nil {
		aaguid = id[:]
	}
	return webauthn.Credential{
		ID:            c.ID,
		PublicKey:     c.PublicKey,
		Transport:     ts,
		Flags:         webauthn.CredentialFlags{UserVerified: true, BackupEligible: c.BackupEligible},
		Authenticator: webauthn.Authenticator{AAGUID: aaguid, SignCount: c.SignCount},
	}
}

func (r *RP) random(n int) ([]byte, error) {
	b := make([]byte, n)
	r.randMu.Lock()
	defer r.randMu.Unlock()
	if _, err := io.ReadFull(r.opts.Rand, b); err != nil {
		return nil, fmt.Errorf("passkey: read random bytes: %w", err)
	}
	return b, nil
}

func (r *RP) token() (string, error) {
	b, err := r.random(32)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// prune drops expired ceremonies and refuses a new one when too many wait.
// The caller holds r.mu.
func (r *RP) prune(now time.Time) error {
	for t, c := range r.enrolls {
		if !now.Before(c.expires) {
			delete(r.enrolls, t)
		}
	}
	for t, c := range r.asserts {
		if !now.Before(c.expires) {
			delete(r.asserts, t)
		}
	}
	if len(r.enrolls) >= maxCeremonies || len(r.asserts) >= maxCeremonies {
		return fmt.Errorf("passkey: %d ceremonies are already waiting; finish them or let them expire", maxCeremonies)
	}
	return nil
}

func checkLabel(label string) error {
	if label == "" {
		return errors.New("passkey: give the passkey a label, such as the device's name")
	}
	if !utf8.ValidString(label) || utf8.RuneCountInString(label) > maxLabel {
		return fmt.Errorf("passkey: the label must be valid text of at most %d characters", maxLabel)
	}
	for _, c := range label {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
			return fmt.Errorf("passkey: the label contains the control or format character %U; use plain text", c)
		}
	}
	return nil
}

// BeginEnroll starts registering a passkey labelled label. It returns the
// options for navigator.credentials.create, as the JSON of
// PublicKeyCredentialCreationOptions (give it to
// PublicKeyCredential.parseCreationOptionsFromJSON), and the token that
// FinishEnroll takes.
func (r *RP) BeginEnroll(label string) (options []byte, token string, err error) {
	if err := checkLabel(label); err != nil {
		return nil, "", err
	}
	cs, err := Load(r.opts.StorePath)
	if err != nil {
		return nil, "", err
	}
	handle, err := r.random(32)
	if err != nil {
		return nil, "", err
	}
	challenge, err := r.random(nonceSize)
	if err != nil {
		return nil, "", err
	}
	tok, err := r.token()
	if err != nil {
		return nil, "", err
	}
	u := user{handle: handle, label: label}
	exclude := make([]protocol.CredentialDescriptor, len(cs))
	for i, c := range cs {
		wc := c.webauthn()
		exclude[i] = wc.Descriptor()
	}
	creation, session, err := r.wa.BeginRegistration(u,
		func(o *protocol.PublicKeyCredentialCreationOptions) error { o.Challenge = challenge; return nil },
		webauthn.WithExclusions(exclude),
		webauthn.WithRegistrationOrigin(r.opts.Origin),
	)
	if err != nil {
		return nil, "", fmt.Errorf("passkey: begin enrollment: %w", err)
	}
	options, err = json.Marshal(creation.Response)
	if err != nil {
		return nil, "", fmt.Errorf("passkey: begin enrollment: %w", err)
	}
	now := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.prune(now); err != nil {
		return nil, "", err
	}
	r.enrolls[tok] = &enrollment{session: *session, user: u, label: label, expires: now.Add(r.opts.TTL)}
	return options, tok, nil
}

// FinishEnroll verifies the browser's response to BeginEnroll's options
// (the JSON of the PublicKeyCredential, as its toJSON gives it) and adds the
// credential to the file. The token is spent by the first call.
func (r *RP) FinishEnroll(token string, response []byte) error {
	r.mu.Lock()
	c, ok := r.enrolls[token]
	used := ok && c.used
	if ok {
		c.used = true
	}
	r.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("%w: the enrollment token is unknown or expired; start the enrollment again", ErrUnknownCeremony)
	case used:
		return fmt.Errorf("%w: this enrollment was already finished; start the enrollment again", ErrCeremonyUsed)
	case !r.opts.Now().Before(c.expires):
		return fmt.Errorf("%w: the enrollment took longer than %s; start it again", ErrCeremonyExpired, r.opts.TTL)
	case len(response) > maxResponse:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidResponse, len(response), maxResponse)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidResponse, describe(err))
	}
	if got := parsed.Response.CollectedClientData.Origin; got != r.opts.Origin {
		return fmt.Errorf("%w: the response names %q, the page is %q", ErrWrongOrigin, got, r.opts.Origin)
	}
	if !parsed.Response.AttestationObject.AuthData.Flags.HasUserVerified() {
		return fmt.Errorf("%w: enroll with an authenticator that asks for a PIN or biometric", ErrUserNotVerified)
	}
	cred, err := r.wa.CreateCredential(c.user, c.session, parsed)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidResponse, describe(err))
	}
	transports := make([]string, len(cred.Transport))
	for i, t := range cred.Transport {
		transports[i] = string(t)
	}
	var aaguid string
	if id, err := uuid.FromBytes(cred.Authenticator.AAGUID); err == nil {
		aaguid = id.String()
	}
	entry := Credential{
		ID:             cred.ID,
		PublicKey:      cred.PublicKey,
		SignCount:      cred.Authenticator.SignCount,
		AAGUID:         aaguid,
		Transports:     transports,
		EnrolledAt:     r.opts.Now().UTC().Truncate(time.Second),
		Label:          c.label,
		UserHandle:     c.user.handle,
		BackupEligible: cred.Flags.BackupEligible,
	}
	return updateStore(r.opts.StorePath, func(cs []Credential) ([]Credential, error) {
		if find(cs, entry.ID) >= 0 {
			return nil, fmt.Errorf("%w: this authenticator's credential is in the file already", ErrAlreadyEnrolled)
		}
		return append(cs, entry), nil
	})
}

// describe gives the detail of a library error, which its Error() leaves out.
func describe(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		msg := pe.Details
		if msg == "" {
			msg = pe.Type
		}
		if info := strings.TrimSuffix(pe.DevInfo, ": <nil>"); info != "" {
			msg += " (" + info + ")"
		}
		return msg
	}
	return err.Error()
}

func (b Binding) check() error {
	for _, f := range []struct{ name, v string }{
		{"client", b.Client}, {"server", b.Server}, {"tool", b.Tool},
		{"definition hash", b.DefinitionHash}, {"argument hash", b.ArgsHash},
	} {
		if len(f.v) > maxField {
			return fmt.Errorf("passkey: the call's %s is %d bytes, more than %d", f.name, len(f.v), maxField)
		}
		if f.v == "" && f.name != "client" {
			return fmt.Errorf("passkey: the call has no %s; a passkey approval must name the whole call", f.name)
		}
	}
	return nil
}

// differs says in which fields b and o differ, or returns "".
func (b Binding) differs(o Binding) string {
	var d []string
	if b.Client != o.Client {
		d = append(d, "client")
	}
	if b.Server != o.Server {
		d = append(d, "server")
	}
	if b.Tool != o.Tool {
		d = append(d, "tool")
	}
	if b.DefinitionHash != o.DefinitionHash {
		d = append(d, "definition hash")
	}
	if b.ArgsHash != o.ArgsHash {
		d = append(d, "argument hash")
	}
	switch len(d) {
	case 0:
		return ""
	case 1:
		return d[0] + " is not the same"
	}
	return strings.Join(d, ", ") + " are not the same"
}

// challengeFor is SHA-256 over a domain string, each binding field with its
// length (so no two bindings encode alike), the nonce and the expiry.
func challengeFor(b Binding, nonce []byte, expires time.Time) []byte {
	h := sha256.New()
	h.Write([]byte("mcphost passkey approval v1\x00"))
	for _, f := range []string{b.Client, b.Server, b.Tool, b.DefinitionHash, b.ArgsHash} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(f))))
		h.Write([]byte(f))
	}
	h.Write(nonce)
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(expires.UnixNano())))
	return h.Sum(nil)
}

// BeginAssert starts the approval of the call b. It returns the options for
// navigator.credentials.get, as the JSON of
// PublicKeyCredentialRequestOptions (for
// PublicKeyCredential.parseRequestOptionsFromJSON), listing every enrolled
// credential, and the token FinishAssert takes.
func (r *RP) BeginAssert(b Binding) (options []byte, token string, err error) {
	if err := b.check(); err != nil {
		return nil, "", err
	}
	cs, err := Load(r.opts.StorePath)
	if err != nil {
		return nil, "", err
	}
	if len(cs) == 0 {
		return nil, "", fmt.Errorf("%w: enroll a passkey before approving with one", ErrNoPasskeys)
	}
	nonce, err := r.random(nonceSize)
	if err != nil {
		return nil, "", err
	}
	tok, err := r.token()
	if err != nil {
		return nil, "", err
	}
	now := r.opts.Now()
	expires := now.Add(r.opts.TTL)
	challenge := challengeFor(b, nonce, expires)
	allow := make([]protocol.CredentialDescriptor, len(cs))
	for i, c := range cs {
		wc := c.webauthn()
		allow[i] = wc.Descriptor()
	}
	req, session, err := r.wa.BeginDiscoverableLogin(
		webauthn.WithChallenge(challenge),
		webauthn.WithAllowedCredentials(allow),
		webauthn.WithUserVerification(protocol.VerificationRequired),
		webauthn.WithLoginOrigin(r.opts.Origin),
	)
	if err != nil {
		return nil, "", fmt.Errorf("passkey: begin approval: %w", err)
	}
	options, err = json.Marshal(req.Response)
	if err != nil {
		return nil, "", fmt.Errorf("passkey: begin approval: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.prune(now); err != nil {
		return nil, "", err
	}
	r.asserts[tok] = &assertion{session: *session, binding: b, nonce: nonce, challenge: challenge, expires: expires}
	return options, tok, nil
}

// FinishAssert verifies the browser's response (the JSON of the
// PublicKeyCredential) to BeginAssert's options for the call b, and records
// the credential's new signature counter. It returns nil only when every
// check in the package comment holds. The token is spent by the first call,
// whatever its outcome.
func (r *RP) FinishAssert(token string, b Binding, response []byte) error {
	r.mu.Lock()
	c, ok := r.asserts[token]
	used := ok && c.used
	if ok {
		c.used = true // spent by its first attempt, whatever the outcome
	}
	r.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("%w: the approval token is unknown or expired; ask for the approval again", ErrUnknownCeremony)
	case used:
		return fmt.Errorf("%w: this passkey approval was already given or tried; ask for it again", ErrCeremonyUsed)
	}
	if !r.opts.Now().Before(c.expires) {
		return fmt.Errorf("%w: the approval took longer than %s; ask for it again", ErrCeremonyExpired, r.opts.TTL)
	}
	if d := b.differs(c.binding); d != "" {
		return fmt.Errorf("%w: the %s", ErrBindingMismatch, d)
	}
	if len(response) > maxResponse {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidResponse, len(response), maxResponse)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidResponse, describe(err))
	}
	if origin := parsed.Response.CollectedClientData.Origin; origin != r.opts.Origin {
		return fmt.Errorf("%w: the response names %q, the page is %q", ErrWrongOrigin, origin, r.opts.Origin)
	}
	return verifyParsed(r.wa, r.opts.StorePath, c.session, parsed)
}

// verifyParsed checks a parsed assertion whose origin was checked against
// the ceremony's session (challenge, RP ID, allowed credentials): the
// user-verified flag, an enrolled credential, its signature, and a
// counter that moved forward, which it records.
func verifyParsed(wa *webauthn.WebAuthn, storePath string, session webauthn.SessionData, parsed *protocol.ParsedCredentialAssertionData) error {
	if !parsed.Response.AuthenticatorData.Flags.HasUserVerified() {
		return fmt.Errorf("%w: the authenticator must ask for a PIN or biometric", ErrUserNotVerified)
	}
	cs, err := Load(storePath)
	if err != nil {
		return err
	}
	i := find(cs, parsed.RawID)
	if i < 0 {
		return fmt.Errorf("%w: the authenticator answered with a credential this mcphost does not know", ErrUnknownCredential)
	}
	all := make([]webauthn.Credential, len(cs))
	for j, e := range cs {
		all[j] = e.webauthn()
	}
	session.UserID = cs[i].UserHandle
	if _, err := wa.ValidateLogin(user{handle: cs[i].UserHandle, label: cs[i].Label, creds: all}, session, parsed); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidResponse, describe(err))
	}
	count := parsed.Response.AuthenticatorData.Counter
	return updateStore(storePath, func(cs []Credential) ([]Credential, error) {
		i := find(cs, parsed.RawID)
		if i < 0 {
			return nil, fmt.Errorf("%w: the credential was removed during the approval", ErrUnknownCredential)
		}
		stored := cs[i].SignCount
		if count <= stored && (count != 0 || stored != 0) {
			return nil, fmt.Errorf("%w: %q signed with counter %d, but %d was seen before", ErrCounterRegressed, cs[i].Label, count, stored)
		}
		cs[i].SignCount = count
		return cs, nil
	})
}
