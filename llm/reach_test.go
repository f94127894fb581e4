package llm

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

// TestUnreachableServerSaysWhatToCheck: a model server that cannot be
// reached is named with what to check, not as a bare transport error.
func TestUnreachableServerSaysWhatToCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now: the connection is refused
	// A credential in the URL is not repeated in the error.
	m, err := New("openai-compatible:local", Options{BaseURL: "http://me:s3cret@" + ln.Addr().String() + "/v1", Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Stream(context.Background(), &Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, func(Event) {})
	want := "openai-compatible: cannot reach " + base + "/chat/completions: is the server behind --base-url running? (dial tcp "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want an error starting %q", err, want)
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "me:") {
		t.Errorf("%v names the URL's credential", err)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%v does not wrap the connection's failure", err)
	}
}

func TestReachHint(t *testing.T) {
	for _, tc := range []struct{ provider, base, want string }{
		{"openai", "http://gpu.local:8000/v1", "is the server behind --base-url running?"},
		{"ollama", "", "is Ollama running (ollama serve)?"},
		{"anthropic", "", "check the network connection"},
	} {
		if got := reachHint(tc.provider, tc.base); got != tc.want {
			t.Errorf("reachHint(%q, %q) = %q, want %q", tc.provider, tc.base, got, tc.want)
		}
	}
	// A connection that was made is not unreachable.
	if _, ok := unreachable(&net.OpError{Op: "read", Err: syscall.ECONNRESET}); ok {
		t.Error("a reset connection counts as unreachable")
	}
}
