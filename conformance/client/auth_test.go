package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/oauth/oauthtest"
)

func newStore(t *testing.T) *oauth.Store {
	t.Helper()
	store, cleanup, err := tokens()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return store
}

// The first session logs in when the server asks; the second, like every
// later mcphost command, uses the stored token and does not log in.
func TestRunScenarioLogsInOnceThenReusesToken(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthServerOptions{})
	srv := oauthtest.NewMCPServer(t, as, oauthtest.MCPServerOptions{})
	var stderr strings.Builder
	if err := runScenario(t.Context(), srv.URL, newStore(t), scenarioContext{}, call("echo", `{"text":"hi"}`), &stderr); err != nil {
		t.Fatalf("runScenario: %v\n%s", err, stderr.String())
	}
	var codes int
	for _, r := range as.TokenRequests() {
		if r.GrantType == "authorization_code" && r.Error == "" {
			codes++
		}
	}
	if codes != 1 {
		t.Errorf("%d authorization codes exchanged, want 1: %+v", codes, as.TokenRequests())
	}
	var calls int
	for _, s := range srv.Seen() {
		if s.RPCMethod == "tools/call" && s.Bearer != "" {
			calls++
		}
	}
	if calls != 2 {
		t.Errorf("%d tools/call with a token, want 2 (one per session)", calls)
	}
}

func TestRunScenarioUsesPreregisteredClient(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthServerOptions{Clients: map[string]string{"suite-client": "suite-secret"}, NoRegistration: true})
	srv := oauthtest.NewMCPServer(t, as, oauthtest.MCPServerOptions{})
	sc, err := parseContext(`{"name":"auth/pre-registration","client_id":"suite-client","client_secret":"suite-secret"}`)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if err := runScenario(t.Context(), srv.URL, newStore(t), sc, call("echo", `{"text":"hi"}`), &stderr); err != nil {
		t.Fatalf("runScenario: %v\n%s", err, stderr.String())
	}
	if reqs := as.TokenRequests(); len(reqs) == 0 || reqs[0].ClientID != "suite-client" {
		t.Errorf("token requests = %+v, want them by suite-client", reqs)
	}
}

func TestParseContext(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		client string // "" for none
		bad    bool
	}{
		{raw: ""},
		{raw: `{"name":"auth/metadata-default"}`},
		{raw: `{"client_id":"c","client_secret":"s"}`, client: "c"},
		{raw: `{"client_id":`, bad: true},
	} {
		sc, err := parseContext(tc.raw)
		if (err != nil) != tc.bad {
			t.Errorf("parseContext(%q) error = %v, want error: %v", tc.raw, err, tc.bad)
			continue
		}
		got := ""
		if c := sc.client(); c != nil {
			got = c.ClientID
		}
		if got != tc.client {
			t.Errorf("parseContext(%q) client = %q, want %q", tc.raw, got, tc.client)
		}
	}
}

// An authorization server that does not redirect back would leave the
// login waiting for its callback: visit says so at once instead.
func TestVisitWithoutRedirect(t *testing.T) {
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "log in first", http.StatusUnauthorized)
	}))
	defer as.Close()
	err := visit(context.Background(), as.Client(), as.URL+"/authorize?state=secret-state")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "secret-state") {
		t.Errorf("visit = %v, want an HTTP 401 error without the query", err)
	}
}
