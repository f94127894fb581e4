package oauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"
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

	once    sync.Once
	allowed map[addrClass]bool
}

func (g *netGuard) allowedClasses() map[addrClass]bool {
	g.once.Do(func() {
		g.allowed = map[addrClass]bool{classPublic: true}
		if isLoopbackHost(g.serverHost) {
			g.allowed[classLoopback] = true
			return
		}
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(g.serverHost); err == nil {
			ips = []netip.Addr{ip}
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			ips, _ = net.DefaultResolver.LookupNetIP(ctx, "ip", g.serverHost)
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
		return fmt.Errorf("oauth: refusing to dial non-IP address %q", address)
	}
	if !g.allowedClasses()[classify(ip)] {
		return fmt.Errorf("oauth: refusing to reach %s: the address is not public and the MCP server is not on that network", ip)
	}
	return nil
}

// newOAuthClient returns the HTTP client for requests to authorization
// servers: guarded dialing, bounded time, and at most a few redirects, none
// of which may downgrade from https.
func newOAuthClient(serverURL string) *http.Client {
	host := ""
	if u, err := url.Parse(serverURL); err == nil {
		host = u.Hostname()
	}
	g := &netGuard{serverHost: host}
	var base *http.Transport
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		base = t.Clone()
	} else {
		base = &http.Transport{Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 10 * time.Second}
	}
	if !proxied(base) {
		// Behind a proxy the dialled address is the proxy's, and the proxy
		// enforces its own policy.
		base.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.check}).DialContext
	}
	return &http.Client{
		Transport: base,
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

func proxied(t *http.Transport) bool {
	if t.Proxy == nil {
		return false
	}
	for _, probe := range []string{"https://example.com/", "http://example.com/"} {
		req, _ := http.NewRequest(http.MethodGet, probe, nil)
		if u, err := t.Proxy(req); err == nil && u != nil {
			return true
		}
	}
	return false
}
