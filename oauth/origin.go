package oauth

import (
	"net/url"
	"strings"

	"github.com/mcphost/mcphost/internal/netcheck"
)

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
	if !netcheck.SameOrigin(r, s) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}
