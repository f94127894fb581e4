package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/internal/netcheck"
	"github.com/mcphost/mcphost/sanitize"
)

// addrClass is the kind of network an address belongs to, as far as
// server-controlled OAuth URLs are concerned.
type addrClass int

const (
	classPublic   addrClass = iota
	classLoopback           // this machine
	classPrivate            // RFC 1918, RFC 4193, carrier-grade NAT
	classNever              // link-local (cloud metadata), multicast, unspecified, invalid
)

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func classify(ip netip.Addr) addrClass {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid(), ip.IsUnspecified(), ip.IsMulticast(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return classNever
	case ip.IsLoopback():
		return classLoopback
	case ip.IsPrivate(), cgnat.Contains(ip):
		return classPrivate
	}
	return classPublic
}

// netGuard decides which addresses OAuth requests for one MCP server may
// reach. The metadata, registration and token URLs come from the server and
// its authorization server, so without a guard a hostile server could point
// mcphost at services on the person's own network (SSRF). Public addresses
// are always allowed; loopback and private ones only when the MCP server
// itself is on such an address (a local or in-house deployment, where its
// authorization server usually is too); link-local never.
type netGuard struct {
	serverHost string
	lookup     func(ctx context.Context, network, host string) ([]netip.Addr, error) // default net.DefaultResolver

	once    sync.Once
	allowed map[addrClass]bool
}

func (g *netGuard) allowedClasses() map[addrClass]bool {
	g.once.Do(func() {
		g.allowed = map[addrClass]bool{classPublic: true}
		if netcheck.IsLoopbackHost(g.serverHost) {
			g.allowed[classLoopback] = true
			return
		}
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(g.serverHost); err == nil {
			ips = []netip.Addr{ip}
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			lookup := g.lookup
			if lookup == nil {
				lookup = net.DefaultResolver.LookupNetIP
			}
			ips, _ = lookup(ctx, "ip", g.serverHost)
			cancel()
		}
		for _, ip := range ips {
			if c := classify(ip); c != classNever {
				g.allowed[c] = true
			}
		}
	})
	return g.allowed
}

// refusal reports a host the guard will not reach, and why.
type refusal struct {
	addr   netip.Addr
	class  addrClass
	reason string // set when there is no address to speak of
}

func (r *refusal) Error() string {
	if r.reason != "" {
		return r.reason
	}
	switch r.class {
	case classLoopback:
		return fmt.Sprintf("%s is on this machine, and the MCP server is not", r.addr)
	case classPrivate:
		return fmt.Sprintf("%s is on a private network, and the MCP server is not", r.addr)
	case classNever:
		return fmt.Sprintf("%s is link-local, multicast or unspecified (cloud metadata lives there), which OAuth requests never reach", r.addr)
	}
	return fmt.Sprintf("%s is not allowed", r.addr)
}

// allow returns a refusal unless ip may be reached.
func (g *netGuard) allow(ip netip.Addr) error {
	c := classify(ip)
	if !g.allowedClasses()[c] {
		return &refusal{addr: ip.Unmap(), class: c}
	}
	return nil
}

// check is a net.Dialer Control hook: it sees the address actually dialled,
// after name resolution, so a name that resolves to a forbidden address is
// refused too.
func (g *netGuard) check(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &refusal{reason: fmt.Sprintf("%q is not an IP address", address)}
	}
	return g.allow(ip)
}

// checkHost resolves host (unless it is an address) and refuses it when
// any of its addresses may not be reached: a name with one public and one
// private address is refused, since either may be dialled.
func (g *netGuard) checkHost(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return g.allow(ip)
	}
	lookup := g.lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	ips, err := lookup(ctx, "ip", host)
	if err != nil {
		return &refusal{reason: fmt.Sprintf("its host cannot be resolved to check its addresses: %v", err)}
	}
	if len(ips) == 0 {
		return &refusal{reason: "its host resolves to no address"}
	}
	for _, addr := range ips {
		if err := g.allow(addr); err != nil {
			return err
		}
	}
	return nil
}

// RefusedURLError reports an OAuth or metadata request that mcphost would
// not send, naming the URL and the reason.
type RefusedURLError struct {
	URL    string // redacted
	Reason string
}

func (e *RefusedURLError) Error() string {
	return fmt.Sprintf("mcphost refused to reach %s: %s", sanitize.Line(e.URL), sanitize.Line(e.Reason))
}

// guardedTransport checks every request's target host before the request
// leaves, whether it is then sent directly or handed to a proxy, and turns
// the dialer hook's refusals into errors that name the URL.
type guardedTransport struct {
	g    *netGuard
	base http.RoundTripper
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.checkHost(req.Context(), req.URL.Hostname()); err != nil {
		return nil, &RefusedURLError{URL: req.URL.Redacted(), Reason: err.Error()}
	}
	resp, err := t.base.RoundTrip(req)
	var r *refusal
	if err != nil && errors.As(err, &r) {
		return nil, &RefusedURLError{URL: req.URL.Redacted(), Reason: r.Error()}
	}
	return resp, err
}

// netOptions replace the process's proxy settings and resolver, for tests.
type netOptions struct {
	proxy  func(*http.Request) (*url.URL, error)
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// newOAuthClient returns the HTTP client for requests to authorization
// servers: guarded targets, bounded time, and at most a few redirects, none
// of which may downgrade from https.
func newOAuthClient(serverURL string) *http.Client {
	return newGuardedClient(serverURL, netOptions{})
}

func newGuardedClient(serverURL string, o netOptions) *http.Client {
	host := ""
	if u, err := url.Parse(serverURL); err == nil {
		host = u.Hostname()
	}
	g := &netGuard{serverHost: host, lookup: o.lookup}
	var base *http.Transport
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		base = t.Clone()
	} else {
		base = &http.Transport{Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 10 * time.Second}
	}
	if o.proxy != nil {
		base.Proxy = o.proxy
	}
	// Every connection is guarded except the one to a proxy the person
	// configured: the target of a proxied request was checked by
	// guardedTransport before the request reached the transport.
	var proxies sync.Map // host:port of proxies this transport used
	if p := base.Proxy; p != nil {
		base.Proxy = func(req *http.Request) (*url.URL, error) {
			u, err := p(req)
			if err == nil && u != nil {
				proxies.Store(proxyAddr(u), true)
			}
			return u, err
		}
	}
	guarded := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.check}
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if _, ok := proxies.Load(addr); ok {
			return plain.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
	}
	return &http.Client{
		Transport: &guardedTransport{g: g, base: base},
		Timeout:   60 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("oauth: too many redirects")
			}
			if via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("oauth: refusing a redirect from https to %s", req.URL.Scheme)
			}
			return nil
		},
	}
}

// proxyAddr is the host:port the transport dials for proxy u, with the
// scheme's default port written out as net/http does.
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// checkURL refuses a URL the handler's OAuth client would not reach.
func (h *Handler) checkURL(ctx context.Context, u *url.URL) error {
	gt, ok := h.hc.Transport.(*guardedTransport)
	if !ok {
		return nil
	}
	if err := gt.g.checkHost(ctx, u.Hostname()); err != nil {
		return &RefusedURLError{URL: u.Redacted(), Reason: err.Error()}
	}
	return nil
}
