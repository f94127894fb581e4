package oauth

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNetGuard(t *testing.T) {
	for _, tc := range []struct {
		server string // the MCP server's host
		addr   string // an address an OAuth request dials
		ok     bool
	}{
		{"mcp.example.com", "93.184.216.34:443", true},
		{"mcp.example.com", "[2606:2800:220:1::]:443", true},
		{"127.0.0.1", "127.0.0.1:8080", true},
		{"localhost", "[::1]:8080", true},
		{"127.0.0.1", "10.0.0.1:443", false},
		{"10.1.2.3", "10.0.0.1:443", true},
		{"10.1.2.3", "127.0.0.1:443", false},
		{"127.0.0.1", "169.254.169.254:80", false}, // cloud metadata, always refused
		{"169.254.169.254", "169.254.169.254:80", false},
		{"127.0.0.1", "[::ffff:169.254.169.254]:80", false},
		{"127.0.0.1", "[fe80::1]:80", false},
		{"127.0.0.1", "0.0.0.0:80", false},
		{"127.0.0.1", "224.0.0.1:80", false},
		{"127.0.0.1", "100.64.0.1:80", false},
		{"127.0.0.1", "192.168.1.1:80", false},
		{"127.0.0.1", "not-an-ip:80", false},
	} {
		g := &netGuard{serverHost: tc.server}
		if tc.server == "mcp.example.com" {
			// Resolve nothing in a test: a public name's guard allows public
			// addresses only.
			g.once.Do(func() { g.allowed = map[addrClass]bool{classPublic: true} })
		}
		err := g.check("tcp", tc.addr, nil)
		if (err == nil) != tc.ok {
			t.Errorf("server %s dialing %s: %v, want ok %v", tc.server, tc.addr, err, tc.ok)
		}
	}
	if c := classify(netip.MustParseAddr("::ffff:127.0.0.1")); c != classLoopback {
		t.Errorf("classify(::ffff:127.0.0.1) = %v, want loopback", c)
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		resource, server string
		ok               bool
	}{
		{"https://a.example/mcp", "https://a.example/mcp", true},
		{"https://a.example/mcp", "https://a.example:443/mcp", true},
		{"https://A.example/mcp", "https://a.example/mcp/", true},
		{"https://a.example", "https://a.example/mcp", true},
		{"https://a.example/", "https://a.example/team/mcp", true},
		{"https://a.example/mcp", "https://a.example/mcp/sub", true},
		{"https://a.example/mcp", "https://a.example/mcpx", false},
		{"https://a.example/mcp", "https://a.example/other", false},
		{"https://a.example/mcp", "http://a.example/mcp", false},
		{"https://a.example/mcp", "https://a.example:8443/mcp", false},
		{"https://a.example/mcp", "https://b.example/mcp", false},
		{"https://a.example/mcp", "https://a.example.evil/mcp", false},
		{"", "https://a.example/mcp", false},
	} {
		if got := covers(tc.resource, tc.server); got != tc.ok {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.resource, tc.server, got, tc.ok)
		}
	}
}

func TestStoreFileNames(t *testing.T) {
	s := NewStore(t.TempDir())
	for _, name := range []string{"remote", "team.api-1", "0_a.b-c", strings.Repeat("x", 64)} {
		if got := filepath.Base(s.path(name)); got != name+".json" {
			t.Errorf("path(%q) = %s, want %s.json", name, got, name)
		}
	}
	seen := map[string]string{}
	for _, name := range []string{"..", "../x", "a/b", "Remote", "remote ", ".hidden", "", "-x", "_x", "é", strings.Repeat("x", 65)} {
		p := s.path(name)
		if filepath.Dir(p) != s.Dir() || !strings.HasPrefix(filepath.Base(p), "h-") {
			t.Errorf("path(%q) = %s, want a hashed name in the store", name, p)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("%q and %q share %s", name, other, p)
		}
		seen[p] = name
	}
	// A file for one name is not read as another's.
	r := &Record{Server: "Remote", Origin: "https://a.example:443", Resource: "https://a.example/mcp", AccessToken: "t"}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load("Remote"); err != nil || got == nil {
		t.Fatalf("Load(Remote) = %v, %v", got, err)
	}
	if got, _ := s.Load("remote"); got != nil {
		t.Error("Load(remote) returned Remote's record")
	}
}

func TestPlainHTTPServerNeverGetsAToken(t *testing.T) {
	s := NewStore(t.TempDir())
	r := &Record{Server: "remote", Origin: "http://mcp.example.com:80", Resource: "http://mcp.example.com/mcp",
		AccessToken: "t", Expiry: time.Now().Add(time.Hour)}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(Config{Server: "remote", URL: "http://mcp.example.com/mcp", Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if ts, err := h.TokenSource(t.Context()); ts != nil || err != nil {
		t.Errorf("TokenSource for plain http = %v, %v; want none", ts, err)
	}
	// The same on this machine is allowed (local development).
	r = &Record{Server: "local", Origin: "http://127.0.0.1:8080", Resource: "http://127.0.0.1:8080/mcp", AccessToken: "t", Expiry: time.Now().Add(time.Hour)}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	h, _ = NewHandler(Config{Server: "local", URL: "http://127.0.0.1:8080/mcp", Store: s})
	ts, err := h.TokenSource(t.Context())
	if err != nil || ts == nil {
		t.Fatalf("TokenSource on loopback = %v, %v", ts, err)
	}
	if tok, err := ts.Token(); err != nil || tok.AccessToken != "t" {
		t.Errorf("Token = %v, %v", tok, err)
	}
}

func TestRecordFreshness(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		expiry time.Time
		fresh  bool
	}{
		{time.Time{}, true},
		{now.Add(time.Hour), true},
		{now.Add(expiryMargin - time.Second), false},
		{now.Add(-time.Second), false},
	} {
		r := &Record{AccessToken: "t", Expiry: tc.expiry}
		if got := r.fresh(now); got != tc.fresh {
			t.Errorf("fresh with expiry %v = %v, want %v", tc.expiry, got, tc.fresh)
		}
	}
}
