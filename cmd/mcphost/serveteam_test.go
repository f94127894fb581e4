package main

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
)

// TestManagedRouteAndTeamPageClient: the managed "approvers" become
// serve's routes; the team page's client comes from the config, its
// secret overridden by the environment; the page's base is the
// audience's origin.
func TestManagedRouteAndTeamPageClient(t *testing.T) {
	m, err := config.ParseManaged("m", []byte(`{"approvers": [{"tiers": ["T3"], "server": "prod", "group": "owners", "fourEyes": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	route := managedRoute(m)
	if r := route("prod", "drop", decide.T3); r == nil || r.Group != "owners" || !r.FourEyes {
		t.Errorf("prod/drop at T3 is routed to %+v, want owners with four eyes", r)
	}
	if r := route("prod", "drop", decide.T2); r != nil {
		t.Errorf("prod/drop at T2 is routed to %+v, want nowhere", r)
	}
	if r := managedRoute(nil)("prod", "drop", decide.T3); r != nil {
		t.Errorf("without a managed policy a call is routed to %+v", r)
	}
	st := &setup{cfg: &config.Config{Serve: &config.Serve{Auth: &config.ServeAuth{ApproveClientID: "page", ApproveClientSecret: "from-file"}}}}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if id, secret := teamPageClient(st, getenv); id != "page" || secret != "from-file" {
		t.Errorf("the page's client is %q %q, want page from-file", id, secret)
	}
	env["MCPHOST_SERVE_APPROVE_CLIENT_SECRET"] = "from-env"
	if _, secret := teamPageClient(st, getenv); secret != "from-env" {
		t.Errorf("the page's secret is %q, want the environment's", secret)
	}
	if id, _ := teamPageClient(&setup{cfg: &config.Config{}}, getenv); id != "" {
		t.Errorf("without a page client configured the page's client is %q", id)
	}
	if got := origin("https://mcp.example.com:8443/mcp"); got != "https://mcp.example.com:8443" {
		t.Errorf("origin = %q", got)
	}
}

// TestRoutedApprovalsNeedTheTeamPage: a managed policy that routes
// approvals to a group, with serve --http behind an issuer but no team
// page configured, is refused at start: a routed call could be approved
// by no one.
func TestRoutedApprovalsNeedTheTeamPage(t *testing.T) {
	e := newManagedEnv(t)
	e.managed(`{"approvers": [{"tiers": ["T3"], "group": "owners"}]}`)
	e.write("config/mcphost/config.json", `{"serve": {"auth": {"issuer": "https://login.example.com", "audience": "https://mcp.example.com/mcp"}}}`)
	code, _, stderr := e.run("--demo", "serve", "--http", "127.0.0.1:0")
	if code == exitOK || !strings.Contains(stderr, `set "approveClientId"`) {
		t.Fatalf("serve with routes and no team page: exit %d, stderr:\n%s\nwant refused, naming approveClientId", code, stderr)
	}
}
