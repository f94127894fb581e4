package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/mcphost/mcphost/sanitize"
)

// ErrNoRevocation is returned by [Revoke] when the authorization server
// named no revocation endpoint: the tokens stay valid there until they
// expire.
var ErrNoRevocation = errors.New("the authorization server offers no token revocation")

// Revoke asks rec's authorization server to revoke its tokens (RFC 7009):
// the refresh token first, which servers commonly take to end the whole
// grant, then the access token. secret is the client secret of a
// pre-registered confidential client ("" to use rec's own, if any). It
// returns the first failure; the caller removes the stored record either
// way, since a token the user asked to forget must not be kept.
func Revoke(ctx context.Context, rec *Record, secret string) error {
	if rec.RevocationURL == "" {
		return ErrNoRevocation
	}
	if err := checkEndpoint(rec.RevocationURL); err != nil {
		return fmt.Errorf("revocation endpoint: %w", err)
	}
	if secret == "" {
		secret = rec.ClientSecret
	}
	hc := newOAuthClient(rec.Origin) // the same address rules as for the token endpoint
	if rec.RefreshToken != "" {
		if err := revoke(ctx, hc, rec, secret, rec.RefreshToken, "refresh_token"); err != nil {
			return err
		}
	}
	return revoke(ctx, hc, rec, secret, rec.AccessToken, "access_token")
}

func revoke(ctx context.Context, hc *http.Client, rec *Record, secret, token, hint string) error {
	req, err := clientRequest(ctx, rec.RevocationURL, url.Values{"token": {token}, "token_type_hint": {hint}}, rec, secret)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("revocation endpoint: %w", err)
	}
	defer resp.Body.Close()
	// RFC 7009 §2.2: 200 whether or not the token was still valid.
	if resp.StatusCode == http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var tr tokenResponse
	_ = json.Unmarshal(body, &tr)
	msg := fmt.Sprintf("revocation endpoint: HTTP %d", resp.StatusCode)
	if tr.Error != "" {
		msg += ": " + sanitize.Line(tr.Error)
	}
	if tr.ErrorDescription != "" {
		msg += ": " + sanitize.Line(sanitize.Truncate(tr.ErrorDescription, 200))
	}
	return errors.New(msg)
}
