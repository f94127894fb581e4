package passkey

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// padded is response with spaces after it, n bytes in all: JSON that
// parses as response does, only larger.
func padded(t *testing.T, response []byte, n int) []byte {
	t.Helper()
	if len(response) > n {
		t.Fatalf("the response is %d bytes already, more than %d", len(response), n)
	}
	return append(append([]byte(nil), response...), bytes.Repeat([]byte(" "), n-len(response))...)
}

// TestBindingMustNameTheWholeCallWithinBounds: no ceremony begins, and no
// bound assertion verifies, for a binding with a field missing (the client
// aside: a call may have none) or one longer than maxField, even when the
// response signs exactly that binding's challenge.
func TestBindingMustNameTheWholeCallWithinBounds(t *testing.T) {
	long := strings.Repeat("x", maxField+1)
	cases := map[string]struct {
		change func(*Binding)
		want   string // in the refusal
	}{
		"no server":            {func(b *Binding) { b.Server = "" }, "has no server"},
		"no tool":              {func(b *Binding) { b.Tool = "" }, "has no tool"},
		"no definition hash":   {func(b *Binding) { b.DefinitionHash = "" }, "has no definition hash"},
		"no argument hash":     {func(b *Binding) { b.ArgsHash = "" }, "has no argument hash"},
		"a long client":        {func(b *Binding) { b.Client = long }, "client is 4097 bytes, more than 4096"},
		"a long server":        {func(b *Binding) { b.Server = long }, "server is 4097 bytes"},
		"a long tool":          {func(b *Binding) { b.Tool = long }, "tool is 4097 bytes"},
		"a long argument hash": {func(b *Binding) { b.ArgsHash = long }, "argument hash is 4097 bytes"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			page, v, k, clk := bound(t)
			b := call
			c.change(&b)
			if _, _, err := page.BeginAssert(b); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("BeginAssert = %v, want a refusal saying %q", err, c.want)
			}
			if _, _, err := page.BeginBound(b, nonce); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("BeginBound = %v, want a refusal saying %q", err, c.want)
			}
			// A page that makes the challenge of that binding itself and
			// has it signed: the serve's own check refuses it all the same.
			expires := clk.now().Add(time.Minute)
			opts := []byte(`{"challenge":"` + b64.EncodeToString(challengeFor(b, nonce, expires)) + `","rpId":"localhost"}`)
			resp := k.get(t, opts, "http://localhost:41234", "", uvFlags, 1)
			if err := v.Verify(b, nonce, expires, resp); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Verify = %v, want a refusal saying %q", err, c.want)
			}
		})
	}
	t.Run("no client, fields of the largest size", func(t *testing.T) {
		page, v, k, _ := bound(t)
		b := Binding{Server: strings.Repeat("s", maxField), Tool: "t", DefinitionHash: "d", ArgsHash: strings.Repeat("a", maxField)}
		opts, expires, err := page.BeginBound(b, nonce)
		if err != nil {
			t.Fatalf("BeginBound = %v, want a ceremony", err)
		}
		if err := v.Verify(b, nonce, expires, k.get(t, opts, "http://localhost:41234", "", uvFlags, 1)); err != nil {
			t.Fatalf("Verify = %v, want nil", err)
		}
	})
}

// TestOversizedResponsesRefused: a browser's response larger than
// maxResponse is refused before it is parsed, in every ceremony, though it
// would verify; one of exactly maxResponse bytes is taken.
func TestOversizedResponsesRefused(t *testing.T) {
	tooLarge := func(t *testing.T, what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInvalidResponse) || !strings.Contains(err.Error(), "65537 bytes, more than 65536") {
			t.Fatalf("%s of %d bytes = %v, want ErrInvalidResponse naming the size", what, maxResponse+1, err)
		}
	}
	t.Run("enrollment", func(t *testing.T) {
		clk, path := newClock(), storePath(t)
		rp, k := newRP(t, path, clk), newSoftKey(t)
		opts, tok, err := rp.BeginEnroll("laptop")
		if err != nil {
			t.Fatal(err)
		}
		tooLarge(t, "FinishEnroll", rp.FinishEnroll(tok, padded(t, k.create(t, opts, testOrigin, "", uvFlags), maxResponse+1)))
		if cs, err := Load(path); err != nil || len(cs) != 0 {
			t.Fatalf("after an oversized enrollment the file holds %d credentials (%v), want none", len(cs), err)
		}
		opts, tok, err = rp.BeginEnroll("laptop")
		if err != nil {
			t.Fatal(err)
		}
		if err := rp.FinishEnroll(tok, padded(t, k.create(t, opts, testOrigin, "", uvFlags), maxResponse)); err != nil {
			t.Fatalf("FinishEnroll of %d bytes = %v, want nil", maxResponse, err)
		}
	})
	t.Run("approval", func(t *testing.T) {
		rp, k, _, _ := enrolled(t)
		opts, tok, err := rp.BeginAssert(call)
		if err != nil {
			t.Fatal(err)
		}
		tooLarge(t, "FinishAssert", rp.FinishAssert(tok, call, padded(t, k.get(t, opts, testOrigin, "", uvFlags, 1), maxResponse+1)))
		opts, tok, err = rp.BeginAssert(call)
		if err != nil {
			t.Fatal(err)
		}
		if err := rp.FinishAssert(tok, call, padded(t, k.get(t, opts, testOrigin, "", uvFlags, 2), maxResponse)); err != nil {
			t.Fatalf("FinishAssert of %d bytes = %v, want nil", maxResponse, err)
		}
	})
	t.Run("bound approval", func(t *testing.T) {
		page, v, k, _ := bound(t)
		opts, expires, err := page.BeginBound(call, nonce)
		if err != nil {
			t.Fatal(err)
		}
		tooLarge(t, "Verify", v.Verify(call, nonce, expires, padded(t, k.get(t, opts, "http://localhost:41234", "", uvFlags, 1), maxResponse+1)))
		if err := v.Verify(call, nonce, expires, padded(t, k.get(t, opts, "http://localhost:41234", "", uvFlags, 2), maxResponse)); err != nil {
			t.Fatalf("Verify of %d bytes = %v, want nil", maxResponse, err)
		}
	})
}
