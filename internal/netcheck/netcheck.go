// Package netcheck holds the two network tests every guard in mcphost
// shares, so that a credential, a listen address and a browser's request
// are all held to one rule: whether a host is this machine
// ([IsLoopbackHost]), and whether two URLs are one origin ([Origin],
// [SameOrigin], [InOrigin], [OriginMatchesHost]).
//
// "This machine" is decided from the name or address alone, never by a DNS
// lookup: a name that merely resolves to a loopback address does not count,
// since the network's resolver could answer otherwise the next time.
package netcheck

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// IsLoopbackHost reports whether host names this machine by itself: the
// name "localhost" in any case, or a loopback address literal (127.0.0.0/8,
// ::1, or 127.x written IPv4-mapped as ::ffff:127.x), brackets allowed. It
// is the test for a URL's host that credentials go to over plain http, and
// for a listen address's host (split from its port).
//
// A name under ".localhost" is not this machine here, though RFC 6761
// reserves it for loopback: Go's own resolver does not keep such names
// local (without the C library's myhostname it asks DNS for them), so the
// connection could go wherever the network's resolver says. Nor is
// "localhost." with its root dot, or an address with a zone.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Origin returns u's origin as scheme://host:port: scheme and host
// lower-cased, the scheme's default port written out (80 for http, 443 for
// https), an IPv6 host in brackets, so that two spellings of one origin are
// one string. Stored OAuth records keep this form. A scheme other than http
// and https, or no host, is an error.
func Origin(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch scheme {
	case "https":
		if port == "" {
			port = "443"
		}
	case "http":
		if port == "" {
			port = "80"
		}
	default:
		return "", fmt.Errorf("URL scheme %q is not http or https", u.Scheme)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", fmt.Errorf("URL %q has no host", u.Redacted())
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// InOrigin reports whether u's origin is origin, as Origin writes it. A URL
// without an origin is in none, and no URL is in the empty origin.
func InOrigin(u *url.URL, origin string) bool {
	o, err := Origin(u)
	return err == nil && o == origin
}

// SameOrigin reports whether a and b have one origin (scheme, host and
// port, as Origin compares them); false when either has none.
func SameOrigin(a, b *url.URL) bool {
	o, _ := Origin(a) // "" for none, which no URL is in
	return InOrigin(b, o)
}

// OriginMatchesHost reports whether a browser's Origin header names the
// host and port a request was sent to (its Host header, hostport): the
// Origin must be an http or https origin with a host; host names compare
// without case; a side without a port has its default port, the Origin's
// scheme's for both, since the browser leaves the port out of both for the
// same reason. The scheme itself is not compared: a server behind a
// TLS-ending proxy cannot tell which one the browser used.
func OriginMatchesHost(origin, hostport string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	o, err := Origin(u)
	if err != nil {
		return false
	}
	return InOrigin(&url.URL{Scheme: u.Scheme, Host: hostport}, o)
}
