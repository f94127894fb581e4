package passkey

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// bound returns a page's RP (on another port than the enrolling page), a
// Verifier on the same credential file and clock, and the key enrolled.
func bound(t testing.TB) (*RP, *Verifier, *softKey, *clock) {
	t.Helper()
	_, k, clk, path := enrolled(t)
	page, err := New(Options{RPID: "localhost", Origin: "http://localhost:41234", StorePath: path, Now: clk.now, Rand: seeded(2)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(VerifierOptions{RPID: "localhost", StorePath: path, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	return page, v, k, clk
}

var nonce = bytes.Repeat([]byte{7}, 32)

func TestBoundApprovalIsVerifiedByTheNonceKeeper(t *testing.T) {
	page, v, k, _ := bound(t)
	opts, expires, err := page.BeginBound(call, nonce)
	if err != nil {
		t.Fatal(err)
	}
	resp := k.get(t, opts, "http://localhost:41234", "", uvFlags, 3)
	if err := v.Verify(call, nonce, expires, resp); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	// The same response again: the counter did not move.
	if err := v.Verify(call, nonce, expires, resp); !errors.Is(err, ErrCounterRegressed) {
		t.Fatalf("replayed response: %v, want ErrCounterRegressed", err)
	}
}

func TestBoundApprovalRefusals(t *testing.T) {
	cases := map[string]struct {
		change func(b *Binding, n *[]byte, exp *time.Time, origin *string, flags *byte, clk *clock)
		want   error
	}{
		"another call":   {func(b *Binding, _ *[]byte, _ *time.Time, _ *string, _ *byte, _ *clock) { b.ArgsHash = "5f0c34" }, ErrInvalidResponse},
		"another client": {func(b *Binding, _ *[]byte, _ *time.Time, _ *string, _ *byte, _ *clock) { b.Client = "other" }, ErrInvalidResponse},
		"another nonce": {func(_ *Binding, n *[]byte, _ *time.Time, _ *string, _ *byte, _ *clock) {
			*n = bytes.Repeat([]byte{8}, 32)
		}, ErrInvalidResponse},
		"a later expiry":   {func(_ *Binding, _ *[]byte, e *time.Time, _ *string, _ *byte, _ *clock) { *e = e.Add(time.Millisecond) }, ErrInvalidResponse},
		"expired":          {func(_ *Binding, _ *[]byte, _ *time.Time, _ *string, _ *byte, c *clock) { c.add(DefaultTTL) }, ErrCeremonyExpired},
		"foreign origin":   {func(_ *Binding, _ *[]byte, _ *time.Time, o *string, _ *byte, _ *clock) { *o = "http://evil.example" }, ErrWrongOrigin},
		"lookalike origin": {func(_ *Binding, _ *[]byte, _ *time.Time, o *string, _ *byte, _ *clock) { *o = "http://notlocalhost:1" }, ErrWrongOrigin},
		"no verification":  {func(_ *Binding, _ *[]byte, _ *time.Time, _ *string, f *byte, _ *clock) { *f = flagUP }, ErrUserNotVerified},
		"short nonce":      {func(_ *Binding, n *[]byte, _ *time.Time, _ *string, _ *byte, _ *clock) { *n = (*n)[:8] }, ErrBindingMismatch},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			page, v, k, clk := bound(t)
			opts, expires, err := page.BeginBound(call, nonce)
			if err != nil {
				t.Fatal(err)
			}
			b, n, origin, flags := call, append([]byte(nil), nonce...), "http://localhost:41234", byte(uvFlags)
			c.change(&b, &n, &expires, &origin, &flags, clk)
			resp := k.get(t, opts, origin, "", flags, 1)
			if err := v.Verify(b, n, expires, resp); !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

func TestBoundExpiryCannotBeStretched(t *testing.T) {
	_, v, k, clk := bound(t)
	// A page that makes its own challenge with an expiry an hour away.
	far := clk.now().Add(time.Hour)
	opts := []byte(`{"challenge":"` + b64.EncodeToString(challengeFor(call, nonce, far)) + `","rpId":"localhost"}`)
	resp := k.get(t, opts, "http://localhost:41234", "", uvFlags, 1)
	if err := v.Verify(call, nonce, far, resp); !errors.Is(err, ErrInvalidResponse) {
		t.Fatalf("Verify with a far expiry = %v, want ErrInvalidResponse", err)
	}
}

func TestBoundNeedsAPasskeyAndANonce(t *testing.T) {
	clk, path := newClock(), storePath(t)
	rp := newRP(t, path, clk)
	if _, _, err := rp.BeginBound(call, nonce); !errors.Is(err, ErrNoPasskeys) {
		t.Fatalf("BeginBound with none enrolled = %v, want ErrNoPasskeys", err)
	}
	page, _, _, _ := bound(t)
	if _, _, err := page.BeginBound(call, nonce[:4]); err == nil {
		t.Fatal("BeginBound took a 4-byte nonce")
	}
}

// BenchmarkVerify is what serve adds to an approval with a passkey: the
// assertion's parse and signature check, and the counter's update in the
// credential file (read, lock, atomic replace).
func BenchmarkVerify(b *testing.B) {
	page, v, k, _ := bound(b)
	opts, expires, err := page.BeginBound(call, nonce)
	if err != nil {
		b.Fatal(err)
	}
	resps := make([][]byte, b.N)
	for i := range resps {
		resps[i] = k.get(b, opts, "http://localhost:41234", "", uvFlags, uint32(i+1))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := v.Verify(call, nonce, expires, resps[i]); err != nil {
			b.Fatal(err)
		}
	}
}
