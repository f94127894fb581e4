package oauth

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Origin returns the origin of an absolute http or https URL as
// scheme://host:port, lower-cased, with the default port written out, so
// that two spellings of one origin compare equal.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	return originOf(u)
}

func originOf(u *url.URL) (string, error) {
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

// covers reports whether a token issued for resource may be used for the MCP
// endpoint at serverURL: same origin, and the endpoint's path at or below the
// resource's path (a resource identifier may name the whole origin).
func covers(resource, serverURL string) bool {
	r, err := url.Parse(resource)
	if err != nil {
		return false
	}
	s, err := url.Parse(serverURL)
	if err != nil {
		return false
	}
	ro, err1 := originOf(r)
	so, err2 := originOf(s)
	if err1 != nil || err2 != nil || ro != so {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}

// IsLoopbackHost reports whether host (no port) names this machine. It is
// the one test of "this machine" for every credential mcphost sends: an
// OAuth token (Handler), and the headers and URL credentials of a server
// entry (config) go over plain http only to a host it accepts.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
