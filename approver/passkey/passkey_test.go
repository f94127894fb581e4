package passkey

import (
	"bytes"
	"encoding/json"
	"errors"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/state"
)

const (
	testOrigin = "http://localhost:8377"
	uvFlags    = flagUP | flagUV
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)} }
func storePath(t testing.TB) string  { return filepath.Join(t.TempDir(), "mcphost", "passkeys.json") }
func seeded(seed uint64) *mathrand.ChaCha8 {
	var s [32]byte
	s[0] = byte(seed)
	return mathrand.NewChaCha8(s)
}

var call = Binding{Client: "vscode 1.99 (pid 4242)", Server: "3b7a11", Tool: "delete_branch", DefinitionHash: "9e1d22", ArgsHash: "5f0c33"}

func newRP(t testing.TB, path string, clk *clock) *RP {
	t.Helper()
	rp, err := New(Options{RPID: "localhost", Origin: testOrigin, StorePath: path, Now: clk.now, Rand: seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// enrolled returns an RP with one passkey enrolled from k.
func enrolled(t testing.TB) (*RP, *softKey, *clock, string) {
	t.Helper()
	clk, path := newClock(), storePath(t)
	rp, k := newRP(t, path, clk), newSoftKey(t)
	opts, tok, err := rp.BeginEnroll("laptop")
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishEnroll(tok, k.create(t, opts, testOrigin, "", uvFlags)); err != nil {
		t.Fatalf("FinishEnroll: %v", err)
	}
	return rp, k, clk, path
}

func TestEnrollThenAssert(t *testing.T) {
	rp, k, _, path := enrolled(t)

	cs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || !bytes.Equal(cs[0].ID, k.id) || cs[0].Label != "laptop" || cs[0].SignCount != 0 ||
		cs[0].AAGUID != "adce0002-0000-0000-0000-000000000000" || len(cs[0].Transports) != 1 ||
		!cs[0].EnrolledAt.Equal(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)) || !bytes.Equal(cs[0].UserHandle, k.handle) {
		t.Fatalf("stored credentials = %+v", cs)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credential file mode = %v, %v; want 0600", fi.Mode(), err)
	}

	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 7)); err != nil {
		t.Fatalf("FinishAssert: %v", err)
	}
	if cs, _ := Load(path); cs[0].SignCount != 7 {
		t.Fatalf("sign count = %d, want 7", cs[0].SignCount)
	}
}

func TestAssertForAnotherCallFails(t *testing.T) {
	other := map[string]func(*Binding){
		"client":          func(b *Binding) { b.Client = "claude-code" },
		"server":          func(b *Binding) { b.Server = "3b7a12" },
		"tool":            func(b *Binding) { b.Tool = "delete_branches" },
		"definition hash": func(b *Binding) { b.DefinitionHash = "9e1d23" },
		"argument hash":   func(b *Binding) { b.ArgsHash = "5f0c34" },
	}
	for field, change := range other {
		t.Run(field, func(t *testing.T) {
			rp, k, _, _ := enrolled(t)
			opts, tok, err := rp.BeginAssert(call)
			if err != nil {
				t.Fatal(err)
			}
			b := call
			change(&b)
			err = rp.FinishAssert(tok, b, k.get(t, opts, testOrigin, "", uvFlags, 1))
			if !errors.Is(err, ErrBindingMismatch) || !strings.Contains(err.Error(), field) {
				t.Fatalf("FinishAssert for a changed %s = %v, want ErrBindingMismatch naming the %[1]s", field, err)
			}
		})
	}

	// A signature made for one call's challenge does not approve another
	// call's ceremony, even when presented with that call's own binding.
	t.Run("signature of another ceremony", func(t *testing.T) {
		rp, k, _, _ := enrolled(t)
		optsA, _, err := rp.BeginAssert(call)
		if err != nil {
			t.Fatal(err)
		}
		b := call
		b.ArgsHash = "other"
		_, tokB, err := rp.BeginAssert(b)
		if err != nil {
			t.Fatal(err)
		}
		err = rp.FinishAssert(tokB, b, k.get(t, optsA, testOrigin, "", uvFlags, 1))
		if !errors.Is(err, ErrInvalidResponse) {
			t.Fatalf("FinishAssert with another ceremony's signature = %v, want ErrInvalidResponse", err)
		}
	})
}

func TestChallengeEncodingIsUnambiguous(t *testing.T) {
	nonce, exp := make([]byte, 32), time.Unix(1, 0)
	a := challengeFor(Binding{Client: "a", Server: "bc", Tool: "t", DefinitionHash: "d", ArgsHash: "x"}, nonce, exp)
	b := challengeFor(Binding{Client: "ab", Server: "c", Tool: "t", DefinitionHash: "d", ArgsHash: "x"}, nonce, exp)
	if bytes.Equal(a, b) {
		t.Fatal("two bindings that differ only in where a field ends have the same challenge")
	}
	if bytes.Equal(challengeFor(call, nonce, exp), challengeFor(call, nonce, exp.Add(time.Second))) {
		t.Fatal("the expiry does not enter the challenge")
	}
}

func TestReusedCeremonyFails(t *testing.T) {
	rp, k, _, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 1)); err != nil {
		t.Fatal(err)
	}
	err = rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 2))
	if !errors.Is(err, ErrCeremonyUsed) {
		t.Fatalf("second FinishAssert = %v, want ErrCeremonyUsed", err)
	}
	// A failed attempt spends the ceremony as well.
	opts, tok, err = rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", flagUP, 3)); !errors.Is(err, ErrUserNotVerified) {
		t.Fatal(err)
	}
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 3)); !errors.Is(err, ErrCeremonyUsed) {
		t.Fatalf("FinishAssert after a failed attempt = %v, want ErrCeremonyUsed", err)
	}
	if err := rp.FinishAssert("no-such-token", call, nil); !errors.Is(err, ErrUnknownCeremony) {
		t.Fatalf("FinishAssert with an unknown token = %v, want ErrUnknownCeremony", err)
	}
}

func TestConcurrentFinishAssertRunsOnce(t *testing.T) {
	rp, k, _, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	// Counter 0, as a passkey without a counter signs: the counter check
	// cannot stand in for single use here.
	resp := k.get(t, opts, testOrigin, "", uvFlags, 0)
	const n = 8
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = rp.FinishAssert(tok, call, resp)
		}()
	}
	start.Done()
	done.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrCeremonyUsed):
			t.Errorf("FinishAssert = %v, want nil or ErrCeremonyUsed", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d concurrent FinishAssert calls succeeded, want exactly 1", ok, n)
	}
}

func TestExpiredCeremonyFails(t *testing.T) {
	rp, k, clk, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(DefaultTTL)
	err = rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 1))
	if !errors.Is(err, ErrCeremonyExpired) {
		t.Fatalf("FinishAssert after %s = %v, want ErrCeremonyExpired", DefaultTTL, err)
	}

	// One tick before the expiry it is accepted.
	opts, tok, err = rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(DefaultTTL - time.Nanosecond)
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 1)); err != nil {
		t.Fatalf("FinishAssert just before the expiry: %v", err)
	}

	// An enrollment expires too.
	opts, tok, err = rp.BeginEnroll("phone")
	if err != nil {
		t.Fatal(err)
	}
	clk.add(DefaultTTL)
	if err := rp.FinishEnroll(tok, newSoftKey(t).create(t, opts, testOrigin, "", uvFlags)); !errors.Is(err, ErrCeremonyExpired) {
		t.Fatalf("FinishEnroll after %s = %v, want ErrCeremonyExpired", DefaultTTL, err)
	}
}

func TestUserVerificationRequired(t *testing.T) {
	rp, k, _, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	err = rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", flagUP, 1))
	if !errors.Is(err, ErrUserNotVerified) {
		t.Fatalf("FinishAssert without UV = %v, want ErrUserNotVerified", err)
	}

	rp2 := newRP(t, storePath(t), newClock())
	opts, tok, err = rp2.BeginEnroll("key")
	if err != nil {
		t.Fatal(err)
	}
	if err := rp2.FinishEnroll(tok, newSoftKey(t).create(t, opts, testOrigin, "", flagUP)); !errors.Is(err, ErrUserNotVerified) {
		t.Fatalf("FinishEnroll without UV = %v, want ErrUserNotVerified", err)
	}
}

func TestWrongOriginFails(t *testing.T) {
	for _, origin := range []string{"http://localhost:8378", "https://localhost:8377", "http://evil.localhost:8377", "http://127.0.0.1:8377"} {
		t.Run(origin, func(t *testing.T) {
			rp, k, _, _ := enrolled(t)
			opts, tok, err := rp.BeginAssert(call)
			if err != nil {
				t.Fatal(err)
			}
			if err := rp.FinishAssert(tok, call, k.get(t, opts, origin, "", uvFlags, 1)); !errors.Is(err, ErrWrongOrigin) {
				t.Fatalf("FinishAssert from %s = %v, want ErrWrongOrigin", origin, err)
			}
			opts, tok, err = rp.BeginEnroll("phone")
			if err != nil {
				t.Fatal(err)
			}
			if err := rp.FinishEnroll(tok, newSoftKey(t).create(t, opts, origin, "", uvFlags)); !errors.Is(err, ErrWrongOrigin) {
				t.Fatalf("FinishEnroll from %s = %v, want ErrWrongOrigin", origin, err)
			}
		})
	}
}

func TestWrongRPIDFails(t *testing.T) {
	rp, k, _, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "example.com", uvFlags, 1)); !errors.Is(err, ErrInvalidResponse) {
		t.Fatalf("FinishAssert signed for another RP ID = %v, want ErrInvalidResponse", err)
	}
}

func TestBadSignatureFails(t *testing.T) {
	rp, k, _, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	// The enrolled credential id with another key: the signature does not verify.
	forger := newSoftKey(t)
	forger.id, forger.handle = k.id, k.handle
	if err := rp.FinishAssert(tok, call, forger.get(t, opts, testOrigin, "", uvFlags, 1)); !errors.Is(err, ErrInvalidResponse) {
		t.Fatalf("FinishAssert with a forged signature = %v, want ErrInvalidResponse", err)
	}
}

func TestUnknownCredentialFails(t *testing.T) {
	rp, _, _, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	stranger := newSoftKey(t)
	stranger.handle = []byte("someone")
	if err := rp.FinishAssert(tok, call, stranger.get(t, opts, testOrigin, "", uvFlags, 1)); !errors.Is(err, ErrUnknownCredential) {
		t.Fatalf("FinishAssert with an unknown credential = %v, want ErrUnknownCredential", err)
	}
}

func TestCounterRegressionFails(t *testing.T) {
	rp, k, _, path := enrolled(t)
	assert := func(counter uint32) error {
		t.Helper()
		opts, tok, err := rp.BeginAssert(call)
		if err != nil {
			t.Fatal(err)
		}
		return rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, counter))
	}
	// A passkey that keeps no counter signs 0 every time.
	for range 2 {
		if err := assert(0); err != nil {
			t.Fatalf("counter 0 after 0: %v", err)
		}
	}
	if err := assert(5); err != nil {
		t.Fatal(err)
	}
	for _, c := range []uint32{5, 4, 0} {
		if err := assert(c); !errors.Is(err, ErrCounterRegressed) {
			t.Fatalf("counter %d after 5 = %v, want ErrCounterRegressed", c, err)
		}
	}
	if cs, _ := Load(path); cs[0].SignCount != 5 {
		t.Fatalf("sign count after refused assertions = %d, want 5", cs[0].SignCount)
	}
	if err := assert(6); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptStoreReportedNotOverwritten(t *testing.T) {
	clk, path := newClock(), storePath(t)
	rp, k := newRP(t, path, clk), newSoftKey(t)
	// Begin while the file is fine, then damage it before the finish.
	opts, tok, err := rp.BeginEnroll("laptop")
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte("{\"version\": 1,\n \"passkeys\": [ {\"id\": 42} ]}\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *state.CorruptError
	if err := rp.FinishEnroll(tok, k.create(t, opts, testOrigin, "", uvFlags)); !errors.As(err, &ce) || ce.Line != 2 {
		t.Fatalf("FinishEnroll over a corrupt file = %v, want *state.CorruptError at line 2", err)
	}
	if _, _, err := rp.BeginAssert(call); !errors.As(err, &ce) {
		t.Fatalf("BeginAssert over a corrupt file = %v, want *state.CorruptError", err)
	}
	if _, _, err := rp.BeginEnroll("phone"); !errors.As(err, &ce) {
		t.Fatalf("BeginEnroll over a corrupt file = %v, want *state.CorruptError", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Fatalf("the corrupt file was rewritten:\n%s", got)
	}
	if err := os.WriteFile(path, []byte(`{"version": 2, "passkeys": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var ve *state.VersionError
	if _, err := Load(path); !errors.As(err, &ve) {
		t.Fatalf("Load of a newer format = %v, want *state.VersionError", err)
	}
}

func TestNewRefusesNonLoopbackRP(t *testing.T) {
	for _, o := range []Options{
		{RPID: "127.0.0.1", Origin: "http://127.0.0.1:8377"},
		{RPID: "example.com", Origin: "https://example.com"},
		{RPID: "localhost", Origin: "http://example.com:8377"},
		{RPID: "localhost", Origin: "http://localhost:8377/approve"},
		{RPID: "", Origin: testOrigin},
	} {
		o.StorePath = "passkeys.json"
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", o)
		}
	}
}

func TestBeginAssertRefusesPartialBindingAndNoPasskey(t *testing.T) {
	rp := newRP(t, storePath(t), newClock())
	if _, _, err := rp.BeginAssert(call); !errors.Is(err, ErrNoPasskeys) {
		t.Fatalf("BeginAssert with nothing enrolled = %v, want ErrNoPasskeys", err)
	}
	b := call
	b.ArgsHash = ""
	if _, _, err := rp.BeginAssert(b); err == nil {
		t.Fatal("BeginAssert without an argument hash succeeded")
	}
	if _, _, err := rp.BeginEnroll("bad\u202elabel"); err == nil {
		t.Fatal("BeginEnroll with a bidi control in the label succeeded")
	}
}

func TestEnrollTwiceRefused(t *testing.T) {
	rp, k, _, _ := enrolled(t)
	opts, tok, err := rp.BeginEnroll("again")
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishEnroll(tok, k.create(t, opts, testOrigin, "", uvFlags)); !errors.Is(err, ErrAlreadyEnrolled) {
		t.Fatalf("enrolling the same credential again = %v, want ErrAlreadyEnrolled", err)
	}
}

func TestChallengeIsTheCallsHash(t *testing.T) {
	rp, _, clk, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	c := rp.asserts[tok]
	if len(c.nonce) != 32 || !c.expires.Equal(clk.now().Add(DefaultTTL)) {
		t.Fatalf("nonce of %d bytes, expiry %v; want 32 bytes and now+%s", len(c.nonce), c.expires, DefaultTTL)
	}
	want := b64.EncodeToString(challengeFor(call, c.nonce, c.expires))
	if got := parseOptions(t, opts).Challenge; got != want {
		t.Fatalf("options challenge = %s, want SHA-256 of the binding, nonce and expiry %s", got, want)
	}
	_, tok2, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(rp.asserts[tok2].nonce, c.nonce) || tok2 == tok {
		t.Fatal("two ceremonies for the same call share a nonce or a token")
	}
}

func TestEnrollCeremonySingleUse(t *testing.T) {
	rp := newRP(t, storePath(t), newClock())
	opts, tok, err := rp.BeginEnroll("laptop")
	if err != nil {
		t.Fatal(err)
	}
	k := newSoftKey(t)
	if err := rp.FinishEnroll(tok, k.create(t, opts, testOrigin, "", uvFlags)); err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishEnroll(tok, newSoftKey(t).create(t, opts, testOrigin, "", uvFlags)); !errors.Is(err, ErrCeremonyUsed) {
		t.Fatalf("second FinishEnroll = %v, want ErrCeremonyUsed", err)
	}
}

func TestUserHandleOfAnotherCredentialFails(t *testing.T) {
	rp, k, _, _ := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	k.handle = []byte("another user")
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 1)); !errors.Is(err, ErrInvalidResponse) {
		t.Fatalf("FinishAssert with another user handle = %v, want ErrInvalidResponse", err)
	}
}

func TestCorruptStoreDuringAssertion(t *testing.T) {
	rp, k, _, path := enrolled(t)
	opts, tok, err := rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte("{\"version\": 1, \"passkeys\": [\n")
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *state.CorruptError
	if err := rp.FinishAssert(tok, call, k.get(t, opts, testOrigin, "", uvFlags, 1)); !errors.As(err, &ce) {
		t.Fatalf("FinishAssert over a corrupt file = %v, want *state.CorruptError", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Fatalf("the corrupt file was rewritten:\n%s", got)
	}
}

func TestOptionsAskForUserVerification(t *testing.T) {
	rp, _, _, _ := enrolled(t)
	var enroll struct {
		RP                     struct{ ID string }
		AuthenticatorSelection struct{ ResidentKey, UserVerification string }
		Attestation            string
	}
	opts, _, err := rp.BeginEnroll("phone")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(opts, &enroll); err != nil {
		t.Fatal(err)
	}
	if s := enroll.AuthenticatorSelection; s.UserVerification != "required" || s.ResidentKey != "preferred" ||
		enroll.Attestation != "none" || enroll.RP.ID != "localhost" {
		t.Fatalf("creation options = %s; want user verification required, resident key preferred, attestation none, rp id localhost", opts)
	}
	var assert struct{ RPID, UserVerification string }
	opts, _, err = rp.BeginAssert(call)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(opts, &assert); err != nil {
		t.Fatal(err)
	}
	if assert.UserVerification != "required" || assert.RPID != "localhost" {
		t.Fatalf("request options = %s; want user verification required, rp id localhost", opts)
	}
}
