package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/http/httpproxy"
)

// recorder is an HTTP server that counts what reaches it: a stand-in for a
// proxy (it answers every request, CONNECT included, without going
// anywhere) or for a service on the person's network.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.Host+req.URL.Path)
		r.mu.Unlock()
		if req.Method == http.MethodConnect {
			w.WriteHeader(http.StatusForbidden) // no tunnel: the request was counted
			return
		}
		io.WriteString(w, "reached")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// proxyEnv is what HTTPS_PROXY=proxy HTTP_PROXY=proxy NO_PROXY=10.0.0.0/8
// make of a request, without touching the process's environment. As with
// the real variables, loopback destinations never go through the proxy.
func proxyEnv(proxy string) func(*http.Request) (*url.URL, error) {
	f := (&httpproxy.Config{HTTPProxy: proxy, HTTPSProxy: proxy, NoProxy: "10.0.0.0/8"}).ProxyFunc()
	return func(req *http.Request) (*url.URL, error) { return f(req.URL) }
}

// noDNS is the tests' resolver: a few names, nothing from the network.
func noDNS(_ context.Context, _, host string) ([]netip.Addr, error) {
	names := map[string][]string{
		"localhost":     {"127.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"intranet.test": {"10.0.0.7"},
		"mixed.test":    {"93.184.216.34", "192.168.1.1"},
	}
	var out []netip.Addr
	for _, a := range names[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if out == nil {
		return nil, fmt.Errorf("no DNS in tests: %s", host)
	}
	return out, nil
}

// TestGuardHoldsBehindAProxy: an OAuth client for a public MCP server
// refuses loopback, link-local and private targets without a proxy and with
// one — those Go then sends directly (loopback, NO_PROXY) and those it would
// hand to the proxy — and the proxy never sees a request or CONNECT for
// them. A public target does go through the proxy, so the proxy is live.
func TestGuardHoldsBehindAProxy(t *testing.T) {
	proxy := newRecorder(t)
	local := newRecorder(t) // a loopback-only service on the person's machine
	localURL, _ := url.Parse(local.URL)
	direct := newGuardedClient("https://93.184.216.34/mcp", netOptions{proxy: func(*http.Request) (*url.URL, error) { return nil, nil }, lookup: noDNS})
	hc := newGuardedClient("https://93.184.216.34/mcp", netOptions{proxy: proxyEnv(proxy.URL), lookup: noDNS})

	for _, tc := range []struct {
		target, want string
	}{
		{local.URL + "/.well-known/oauth-authorization-server", "on this machine"},     // direct: loopback
		{"http://localhost:" + localURL.Port() + "/register", "on this machine"},       // direct, by name
		{"http://169.254.169.254/latest/meta-data/", "link-local"},                     // proxied, plain
		{"https://169.254.169.254/.well-known/oauth-protected-resource", "link-local"}, // proxied, CONNECT
		{"https://[fe80::1]/token", "link-local"},                                      // proxied, CONNECT
		{"http://192.168.1.1/register", "private network"},                             // proxied
		{"https://10.0.0.1/token", "private network"},                                  // direct: NO_PROXY
		{"https://unresolvable.invalid/token", "cannot be resolved"},                   // proxied, unknown name
	} {
		for name, c := range map[string]*http.Client{"without a proxy": direct, "with a proxy": hc} {
			resp, err := c.Get(tc.target)
			if err == nil {
				resp.Body.Close()
				t.Errorf("GET %s %s: reached (HTTP %d), want refused", tc.target, name, resp.StatusCode)
				continue
			}
			u, _ := url.Parse(tc.target)
			if !strings.Contains(err.Error(), "refused to reach "+u.Redacted()) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("GET %s %s: %v\nwant the URL and %q", tc.target, name, err, tc.want)
			}
		}
	}
	if got := proxy.requests(); len(got) != 0 {
		t.Errorf("the proxy received %q for refused targets", got)
	}
	if got := local.requests(); len(got) != 0 {
		t.Errorf("the loopback service received %q", got)
	}

	// A public target is handed to the proxy (which answers itself).
	resp, err := hc.Get("http://93.184.216.34/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatalf("GET a public target through the proxy: %v", err)
	}
	resp.Body.Close()
	if got := proxy.requests(); len(got) != 1 || got[0] != "GET 93.184.216.34/.well-known/oauth-authorization-server" {
		t.Errorf("the proxy received %q, want the one public request", got)
	}
}

// TestGuardDialerRefusesDirectConnections: the dialer itself refuses a
// forbidden address, whatever a name resolved to when it was checked, and
// lets the configured proxy through.
func TestGuardDialerRefusesDirectConnections(t *testing.T) {
	proxy := newRecorder(t)
	local := newRecorder(t)
	hc := newGuardedClient("https://93.184.216.34/mcp", netOptions{proxy: proxyEnv(proxy.URL), lookup: noDNS})
	tr := hc.Transport.(*guardedTransport).base.(*http.Transport)
	addr := strings.TrimPrefix(local.URL, "http://")
	if c, err := tr.DialContext(t.Context(), "tcp", addr); err == nil {
		c.Close()
		t.Errorf("dialling %s for a public server succeeded, want refused", addr)
	}
	// A name that resolves to a forbidden address later than it was checked.
	rebound := newGuardedClient("https://93.184.216.34/mcp", netOptions{
		proxy: func(*http.Request) (*url.URL, error) { return nil, nil },
		lookup: func(context.Context, string, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		},
	})
	_, port, _ := net.SplitHostPort(addr)
	if resp, err := rebound.Get("http://localhost:" + port + "/"); err == nil {
		resp.Body.Close()
		t.Error("a name checked as public but dialled on loopback was reached")
	} else if !strings.Contains(err.Error(), "on this machine") {
		t.Errorf("rebound name: %v, want the loopback refusal", err)
	}
	if got := local.requests(); len(got) != 0 {
		t.Errorf("the loopback service received %q", got)
	}
	// The proxy's own address is not subject to the guard.
	resp, err := hc.Get("http://93.184.216.34/")
	if err != nil {
		t.Fatalf("through the loopback proxy: %v", err)
	}
	resp.Body.Close()
}

// TestGuardLetsALoopbackServerUseLoopback: the MCP server on this machine
// (tests, local development) may use an authorization server on this
// machine, through a proxy setting or not; link-local stays refused.
func TestGuardLetsALoopbackServerUseLoopback(t *testing.T) {
	proxy := newRecorder(t)
	local := newRecorder(t)
	hc := newGuardedClient("http://127.0.0.1:1/mcp", netOptions{proxy: proxyEnv(proxy.URL), lookup: noDNS})
	resp, err := hc.Get(local.URL + "/x")
	if err != nil {
		t.Fatalf("loopback server, loopback target: %v", err)
	}
	resp.Body.Close()
	if resp, err := hc.Get("http://169.254.169.254/"); err == nil {
		resp.Body.Close()
		t.Error("a loopback server's client reached 169.254.169.254")
	}
	if got := proxy.requests(); len(got) != 0 {
		t.Errorf("the proxy received %q", got)
	}
}

// hostileAS is an MCP server on loopback that is its own authorization
// server, with metadata pointing wherever the test says. It records every
// request.
type hostileAS struct {
	*recorder
	prmURL string         // the challenge's resource_metadata; "" for this server's own
	meta   map[string]any // authorization server metadata; nil answers 404
}

func newHostileAS(t *testing.T, configure func(h *hostileAS, base string)) *hostileAS {
	h := &hostileAS{recorder: &recorder{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+h.prmURL+`"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, h.URL+"/mcp", h.URL)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		if h.meta == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(h.meta)
	})
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Method+" "+r.URL.Path)
		h.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	h.prmURL = h.URL + "/.well-known/oauth-protected-resource/mcp"
	configure(h, h.URL)
	return h
}

func (h *hostileAS) posted() []string {
	var out []string
	for _, s := range h.requests() {
		if strings.HasPrefix(s, "POST ") && s != "POST /mcp" {
			out = append(out, s)
		}
	}
	return out
}

func loginTo(t *testing.T, serverURL string, n netOptions) error {
	t.Helper()
	cfg := Config{Server: "remote", URL: serverURL, Store: NewStore(t.TempDir()), net: n}
	_, err := Login(t.Context(), cfg, LoginOptions{Prompt: func(context.Context, string) error {
		t.Error("the person was asked to log in")
		return errors.New("no")
	}})
	if err == nil {
		t.Fatal("Login succeeded")
	}
	return err
}

// TestLoginChecksMetadataURLsBeforeRegistering: a server whose metadata
// names a forbidden URL gets no registration posted, and the error names
// the URL and the reason — also when the SDK drops the refusal on its way
// to a fallback, and also behind a proxy, which then sees nothing.
func TestLoginChecksMetadataURLsBeforeRegistering(t *testing.T) {
	asMeta := func(base string) map[string]any {
		return map[string]any{
			"issuer":                           base,
			"authorization_endpoint":           base + "/authorize",
			"token_endpoint":                   base + "/token",
			"registration_endpoint":            base + "/register",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		}
	}
	for _, tc := range []struct {
		name      string
		configure func(h *hostileAS, base string)
		want      []string
	}{
		{"refused protected resource metadata", func(h *hostileAS, base string) {
			h.prmURL = "https://metadata.test/.well-known/oauth-protected-resource"
		}, []string{"https://metadata.test/.well-known/oauth-protected-resource", "169.254.169.254 is link-local", "publishes no usable metadata"}},
		{"no authorization server metadata", func(h *hostileAS, base string) {}, []string{"publishes no usable metadata", "/.well-known/oauth-authorization-server (HTTP 404)"}},
		{"token endpoint on link-local", func(h *hostileAS, base string) {
			h.meta = asMeta(base)
			h.meta["token_endpoint"] = "https://metadata.test/token"
		}, []string{"token_endpoint", "https://metadata.test/token", "169.254.169.254 is link-local"}},
		{"registration endpoint on a private network", func(h *hostileAS, base string) {
			h.meta = asMeta(base)
			h.meta["registration_endpoint"] = "https://intranet.test/register"
		}, []string{"registration_endpoint", "https://intranet.test/register", "10.0.0.7 is on a private network"}},
		{"registration endpoint with one private address", func(h *hostileAS, base string) {
			h.meta = asMeta(base)
			h.meta["registration_endpoint"] = "https://mixed.test/register"
		}, []string{"registration_endpoint", "https://mixed.test/register", "192.168.1.1 is on a private network"}},
		{"registration endpoint over plain http", func(h *hostileAS, base string) {
			h.meta = asMeta(base)
			h.meta["registration_endpoint"] = "http://93.184.216.34/register"
		}, []string{"registration_endpoint", "neither https nor on this machine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := newRecorder(t)
			h := newHostileAS(t, tc.configure)
			err := loginTo(t, h.URL+"/mcp", netOptions{proxy: proxyEnv(proxy.URL), lookup: noDNS})
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			if p := h.posted(); len(p) != 0 {
				t.Errorf("posted %q before the metadata was checked", p)
			}
			if got := proxy.requests(); len(got) != 0 {
				t.Errorf("the proxy received %q", got)
			}
		})
	}
}
