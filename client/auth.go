package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcphost/mcphost/internal/netcheck"
)

// OAuth for streamable HTTP servers. The SDK's transport asks Spec.OAuth for
// a token before each request and calls its Authorize after a 401 or 403;
// the raw requests this package sends beside the SDK (rawHTTP) do the same
// through authorizeRaw and reauthorize. Whatever sets the header, a request
// whose origin is not the server's — a redirect to another host, port or
// scheme — leaves without it: go's http.Client keeps Authorization on a
// redirect to the same host name at another port, or from https to http.

// oauthFor returns the handler for spec, or nil when it has none or its
// configured headers already carry credentials of the person's choosing.
func oauthFor(spec *Spec) auth.OAuthHandler {
	if spec.OAuth == nil {
		return nil
	}
	for k := range spec.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return nil
		}
	}
	return spec.OAuth
}

// withOAuth wraps hc so that the handler's token can reach no other origin
// than the server's. hc's redirect policy stays.
func withOAuth(hc *http.Client, serverURL string, h auth.OAuthHandler) *http.Client {
	u, err := url.Parse(serverURL)
	if err != nil {
		return hc
	}
	origin, _ := netcheck.Origin(u) // "" for none: then no request carries the token
	return &http.Client{Transport: &oauthTransport{base: hc.Transport, origin: origin, handler: h}, CheckRedirect: hc.CheckRedirect}
}

// oauthTransport drops the Authorization header from any request whose
// origin is not the server's.
type oauthTransport struct {
	base    http.RoundTripper
	origin  string
	handler auth.OAuthHandler
}

func (t *oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" && !netcheck.InOrigin(req.URL, t.origin) {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	return t.base.RoundTrip(req)
}

// authorizeRaw sets the bearer token on a raw request to a server whose
// client carries an OAuth handler, as the SDK does for its own requests.
func authorizeRaw(ctx context.Context, c *http.Client, req *http.Request) error {
	t, ok := c.Transport.(*oauthTransport)
	if !ok || !netcheck.InOrigin(req.URL, t.origin) {
		return nil
	}
	ts, err := t.handler.TokenSource(ctx)
	if err != nil || ts == nil {
		return err
	}
	tok, err := ts.Token()
	if err != nil {
		return err
	}
	if tok != nil && tok.AccessToken != "" {
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return nil
}

// reauthorize handles a 401 or 403 answer to a raw request the way the SDK
// handles one to its own: the handler refreshes or logs in, and the request
// may be sent once more. It reports whether to retry; when it returns true
// or an error, resp's body has been closed.
func reauthorize(ctx context.Context, c *http.Client, req *http.Request, resp *http.Response) (bool, error) {
	t, ok := c.Transport.(*oauthTransport)
	if !ok || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return false, nil
	}
	if err := t.handler.Authorize(ctx, req, resp); err != nil {
		return false, err
	}
	return true, nil
}
