package netcheck

import (
	"net/url"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"localhost", true}, {"example.com", false},
		{"LocalHost", true}, {"localhost.", false}, // the root dot is a name for DNS
		{"127.0.0.1", true}, {"128.0.0.1", false},
		{"127.255.255.254", true}, {"126.255.255.255", false},
		{"::1", true}, {"::2", false},
		{"[::1]", true}, {"[::1", false},
		{"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", false},
		{"[::ffff:127.0.0.1]", true}, {"::1%lo", false}, // a zone is not an address of this machine alone
		{"localhost", true}, {"app.localhost", false}, // Go's resolver asks DNS for it
		{"127.0.0.1", true}, {"127.0.0.1.nip.io", false}, // resolves to loopback, but by DNS
		{"[127.0.0.1]", true}, {"0.0.0.0", false}, // every interface
		{"::1", true}, {"::", false},
		{"localhost", true}, {"", false},
		{"127.0.0.1", true}, {"localhost:8765", false}, // a host, not host:port
	} {
		if got := IsLoopbackHost(c.host); got != c.ok {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
}

func TestOrigin(t *testing.T) {
	for _, c := range []struct {
		url, want string // want "" for an error
	}{
		{"https://a.example/mcp", "https://a.example:443"},
		{"HTTPS://A.Example:443/x", "https://a.example:443"},
		{"http://a.example", "http://a.example:80"},
		{"http://a.example:8080/", "http://a.example:8080"},
		{"http://[::1]:8765/mcp", "http://[::1]:8765"},
		{"http://[::1]/mcp", "http://[::1]:80"},
		{"http://user:pw@a.example/", "http://a.example:80"},
		{"ws://a.example/", ""},
		{"file:///etc/passwd", ""},
		{"http:///no-host", ""},
		{"/relative", ""},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Origin(u)
		if (err != nil) != (c.want == "") || got != c.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", c.url, got, err, c.want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		ok   bool
	}{
		{"https://a.example/x", "https://a.example:443/y", true}, {"https://a.example/x", "http://a.example/x", false},
		{"https://A.EXAMPLE/", "https://a.example/", true}, {"https://a.example/", "https://a.example:8443/", false},
		{"http://a.example/", "http://a.example:80/", true}, {"http://a.example/", "http://a.example:443/", false},
		{"http://[::1]:8765/", "http://[0:0::1]:8765/", false}, // two spellings of an address are not folded
		{"http://[::1]:8765/a", "http://[::1]:8765/b", true}, {"http://[::1]:8765/", "http://127.0.0.1:8765/", false},
		{"https://a.example/", "https://a.example/", true}, {"https://a.example/", "https://a.example.evil/", false},
		{"https://a.example/", "https://a.example/", true}, {"ftp://a.example/", "ftp://a.example/", false}, // no origin, no match
		{"https://a.example/", "https://a.example/", true}, {"http:///x", "http:///x", false},
	} {
		a, _ := url.Parse(c.a)
		b, _ := url.Parse(c.b)
		if got := SameOrigin(a, b); got != c.ok {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", c.a, c.b, got, c.ok)
		}
		if got := SameOrigin(b, a); got != c.ok {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", c.b, c.a, got, c.ok)
		}
	}
}

func TestInOrigin(t *testing.T) {
	for _, c := range []struct {
		url, origin string
		ok          bool
	}{
		{"https://a.example/mcp", "https://a.example:443", true}, {"https://a.example/mcp", "https://a.example", false},
		{"https://a.example:443/", "https://a.example:443", true}, {"http://a.example/", "https://a.example:443", false},
		{"https://a.example/", "https://a.example:443", true}, {"ftp://a.example/", "", false}, // "" is no origin
		{"https://a.example/", "https://a.example:443", true}, {"https://a.example/", "", false},
	} {
		u, _ := url.Parse(c.url)
		if got := InOrigin(u, c.origin); got != c.ok {
			t.Errorf("InOrigin(%q, %q) = %v, want %v", c.url, c.origin, got, c.ok)
		}
	}
}

func TestOriginMatchesHost(t *testing.T) {
	for _, c := range []struct {
		origin, host string
		ok           bool
	}{
		{"http://127.0.0.1:8765", "127.0.0.1:8765", true}, {"http://evil.example:8765", "127.0.0.1:8765", false}, // DNS rebinding: the page's own origin
		{"http://localhost:8765", "localhost:8765", true}, {"http://127.0.0.1:9999", "127.0.0.1:8765", false}, // another local page
		{"https://LOCALHOST:8765", "localhost:8765", true}, {"null", "127.0.0.1:8765", false},
		{"http://[::1]:8765", "[::1]:8765", true}, {"file://", "127.0.0.1:8765", false},
		{"http://a.example", "a.example", true}, {"ws://127.0.0.1:8765", "127.0.0.1:8765", false},
		{"http://a.example", "a.example:80", true}, {"https://a.example", "a.example:80", false},
		{"https://a.example:443", "a.example", true}, {"http://a.example", "a.example:443", false},
		{"http://127.0.0.1:8765", "127.0.0.1:8765", true}, {"http://127.0.0.1:8765", "", false},
		{"http://127.0.0.1:8765", "127.0.0.1:8765", true}, {"127.0.0.1:8765", "127.0.0.1:8765", false},
	} {
		if got := OriginMatchesHost(c.origin, c.host); got != c.ok {
			t.Errorf("OriginMatchesHost(%q, %q) = %v, want %v", c.origin, c.host, got, c.ok)
		}
	}
}
