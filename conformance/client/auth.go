package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/mcphost/mcphost/oauth"
)

// contextVar names the variable in which the suite passes a scenario's own
// data as JSON. For auth/pre-registration it is the client the suite
// registered ahead of time.
const contextVar = "MCP_CONFORMANCE_CONTEXT"

// loginTimeout bounds a login's wait for its loopback redirect. The suite's
// authorization server redirects at once, so a login still waiting after
// this long has gone wrong.
const loginTimeout = 10 * time.Second

// scenarioContext is the part of MCP_CONFORMANCE_CONTEXT the client uses.
type scenarioContext struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// ToolCalls are the calls http-custom-headers asks for.
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
	// protocol is the version the suite tests (protocolVar).
	protocol string
}

func parseContext(raw string) (scenarioContext, error) {
	var sc scenarioContext
	if raw == "" {
		return sc, nil
	}
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return sc, fmt.Errorf("%s: %w", contextVar, err)
	}
	return sc, nil
}

// client is the pre-registered client the context names, or nil, in which
// case mcphost registers itself dynamically, as it does for a server whose
// configuration names no client.
func (sc scenarioContext) client() *oauth.ClientConfig {
	if sc.ClientID == "" {
		return nil
	}
	return &oauth.ClientConfig{ClientID: sc.ClientID, ClientSecret: sc.ClientSecret}
}

// clientMetadataURL is the client ID metadata document URL the suite
// expects of a client (auth/basic-cimd). The suite's authorization servers
// take it as a client ID without fetching it.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// tokens is a token store in a fresh directory, as mcphost's state
// directory is for a new user. Its cleanup removes it.
func tokens() (store *oauth.Store, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "mcphost-conformance-")
	if err != nil {
		return nil, nil, fmt.Errorf("token store: %w", err)
	}
	return oauth.NewStore(filepath.Join(dir, "tokens")), func() { os.RemoveAll(dir) }, nil
}

// oauthConfig is the server's OAuth configuration, as mcphost's commands
// build it for a streamable HTTP server: without Login, a handler uses
// and refreshes the stored token but cannot log in.
func oauthConfig(serverURL string, store *oauth.Store, sc scenarioContext) oauth.Config {
	return oauth.Config{
		Server:            serverName,
		URL:               serverURL,
		Store:             store,
		Client:            sc.client(),
		ClientMetadataURL: clientMetadataURL,
	}
}

// withLogin lets cfg's handler log in whenever the server asks, as
// `mcphost auth login` does, with visit in the part of the person at the
// browser.
func withLogin(cfg oauth.Config, stderr io.Writer) oauth.Config {
	browser := &http.Client{Timeout: loginTimeout}
	cfg.Login = &oauth.LoginOptions{
		Prompt: func(ctx context.Context, authURL string) error {
			fmt.Fprintf(stderr, "client: logging in to %s\n", serverName)
			return visit(ctx, browser, authURL)
		},
		Timeout: loginTimeout,
	}
	return cfg
}

// visit does what a person's browser does with an authorization URL once
// the person consents: it opens the URL and follows the authorization
// server's redirect back to the login's loopback callback, which takes the
// code from there. The suite's authorization servers consent at once.
func visit(ctx context.Context, browser *http.Client, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := browser.Do(req)
	if err != nil {
		return fmt.Errorf("open the authorization URL: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	// A login waits for its callback: without a redirect away from the
	// authorization server, it would wait in vain until loginTimeout.
	if start, end := req.URL, resp.Request.URL; end.Host == start.Host {
		return fmt.Errorf("the authorization server answered HTTP %d at %s instead of redirecting back", resp.StatusCode, redacted(end))
	}
	return nil
}

// redacted is u without its query, which carries the login's state.
func redacted(u *url.URL) string {
	v := *u
	v.RawQuery = ""
	return v.Redacted()
}
