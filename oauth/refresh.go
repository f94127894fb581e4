package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/netcheck"
	"github.com/mcphost/mcphost/sanitize"
	"golang.org/x/oauth2"
)

// refreshError is an error response from the token endpoint (RFC 6749 §5.2).
type refreshError struct {
	Status      int
	Code        string
	Description string
}

func (e *refreshError) Error() string {
	msg := fmt.Sprintf("token endpoint: HTTP %d", e.Status)
	if e.Code != "" {
		msg += ": " + sanitize.Line(e.Code)
	}
	if e.Description != "" {
		msg += ": " + sanitize.Line(sanitize.Truncate(e.Description, 200))
	}
	return msg
}

// needsLogin reports whether the refresh token is dead, so that only a new
// login helps.
func (e *refreshError) needsLogin() bool {
	switch e.Code {
	case "invalid_grant", "invalid_client", "unauthorized_client":
		return true
	}
	return false
}

type tokenResponse struct {
	AccessToken      string      `json:"access_token"`
	TokenType        string      `json:"token_type"`
	RefreshToken     string      `json:"refresh_token"`
	ExpiresIn        json.Number `json:"expires_in"`
	Scope            string      `json:"scope"`
	Error            string      `json:"error"`
	ErrorDescription string      `json:"error_description"`
}

// refresh trades rec's refresh token for a new access token. It is written
// here rather than left to oauth2.Config because a refresh request must
// carry the resource parameter too (RFC 8707 §2.2), which oauth2's refresher
// cannot add.
func refresh(ctx context.Context, hc *http.Client, rec *Record, secret string, now time.Time) (*Record, error) {
	if err := checkEndpoint(rec.TokenURL); err != nil {
		return nil, fmt.Errorf("token endpoint: %w", err)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rec.RefreshToken}}
	if rec.Resource != "" {
		form.Set("resource", rec.Resource)
	}
	req, err := clientRequest(ctx, rec.TokenURL, form, rec, secret)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("token endpoint: %w", err)
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK {
		return nil, &refreshError{Status: resp.StatusCode, Code: tr.Error, Description: tr.ErrorDescription}
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/json" {
		return nil, fmt.Errorf("token endpoint: unexpected content type %q", sanitize.Line(ct))
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("token endpoint: malformed response: %v", jsonErr)
	}
	if tr.Error != "" {
		return nil, &refreshError{Status: resp.StatusCode, Code: tr.Error, Description: tr.ErrorDescription}
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("token endpoint: the response has no access token")
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return nil, fmt.Errorf("token endpoint: token type %q is not Bearer", sanitize.Line(tr.TokenType))
	}
	next := *rec
	next.AccessToken = tr.AccessToken
	next.TokenType = "Bearer"
	if tr.RefreshToken != "" { // otherwise the old one stays valid (RFC 6749 §6)
		next.RefreshToken = tr.RefreshToken
	}
	next.Expiry = time.Time{}
	if secs, err := tr.ExpiresIn.Int64(); err == nil && secs > 0 {
		next.Expiry = now.Add(time.Duration(secs) * time.Second)
	}
	if tr.Scope != "" {
		next.Scopes = strings.Fields(tr.Scope)
	}
	next.Obtained = now
	return &next, nil
}

// clientRequest is a form POST to an authorization server endpoint,
// authenticated as rec's client: with HTTP Basic when there is a secret and
// the server did not ask for it in the body, else with client_id (and
// client_secret) in the form.
func clientRequest(ctx context.Context, endpoint string, form url.Values, rec *Record, secret string) (*http.Request, error) {
	basic := secret != "" && oauth2.AuthStyle(rec.AuthStyle) != oauth2.AuthStyleInParams
	if !basic {
		form.Set("client_id", rec.ClientID)
		if secret != "" {
			form.Set("client_secret", secret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		// RFC 6749 §2.3.1: form-encode both before joining them.
		req.SetBasicAuth(url.QueryEscape(rec.ClientID), url.QueryEscape(secret))
	}
	return req, nil
}

// checkEndpoint refuses to send credentials anywhere but https, or http on
// this machine.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http" && netcheck.IsLoopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%q is neither https nor on this machine", sanitize.Line(u.Redacted()))
}
