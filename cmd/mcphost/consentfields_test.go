package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/ui/dialog"
)

// consentViews are what a person is shown about the project server srv
// before consenting: the interactive dialog (drawn tall enough that
// nothing scrolls away), the headless message, and what `mcphost servers`
// lists, all built the way loadSetup builds them.
func consentViews(srv config.Server) (dialogText, headless, servers string) {
	ps := pendingServer{srv: srv, spec: specFromConfig(srv), key: consentKey(srv), hash: consentHash(srv)}
	st := &setup{pending: []pendingServer{ps}}
	req := st.projectServers()[0].ConsentRequest()
	d := dialog.NewConsent(req, dialog.Options{Width: 200, Height: 400, NoColor: true})
	var b strings.Builder
	writeEntry(&b, srv)
	return ansi.Strip(d.View()), ps.needsConsent(false), b.String()
}

// TestConsentShowsEveryField changes each field of config.Server in turn
// (its OAuth client's too), as TestConsentHashCoversEveryField does, and
// expects what the person is shown to change with it: in the consent
// dialog, in the headless message and in `mcphost servers`. A field the
// hash covers cannot be added to config.Server without being shown.
func TestConsentShowsEveryField(t *testing.T) {
	base := config.Server{Name: "linter", Transport: config.TransportStdio, Command: "python3", Args: []string{"linter.py"},
		Source: config.SourceProject, File: "/repo/a/.mcp.json", Cwd: "/repo/a", OAuth: &config.OAuthClient{},
		ProtocolVersion: config.DefaultProtocolVersion}
	d0, h0, s0 := consentViews(base)
	var walk func(prefix string, typ reflect.Type, get func(*config.Server) reflect.Value)
	walk = func(prefix string, typ reflect.Type, get func(*config.Server) reflect.Value) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := prefix + f.Name
			if !f.IsExported() {
				continue // not covered by the consent hash (TestConsentHashCoversEveryField names why)
			}
			if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
				walk(name+".", f.Type.Elem(), func(s *config.Server) reflect.Value { return get(s).Field(i).Elem() })
			}
			if name == notConsented {
				continue // not covered by the consent hash either
			}
			s := base
			o := *base.OAuth
			s.OAuth = &o
			perturb(t, name, get(&s).Field(i))
			d, h, sv := consentViews(s)
			if d == d0 {
				t.Errorf("changing config.Server field %s does not change the consent dialog: the consent covers it, so it must be shown", name)
			}
			if h == h0 && name != "Name" && name != "File" {
				t.Errorf("changing config.Server field %s does not change the headless consent message", name)
			}
			if sv == s0 && name != "Name" && name != "File" {
				t.Errorf("changing config.Server field %s does not change what mcphost servers shows of the entry", name)
			}
		}
	}
	walk("", reflect.TypeFor[config.Server](), func(s *config.Server) reflect.Value { return reflect.ValueOf(s).Elem() })
}

// The fields that matter most are named with their values, and secrets
// are not: the dialog lists alwaysLoad, tasks, protocol version, timeouts
// and OAuth; the headless message hides environment values when the entry
// reads the person's environment.
func TestConsentFieldsRead(t *testing.T) {
	srv := config.Server{Name: "linter", Transport: config.TransportStdio, Command: "sh", Source: config.SourceProject,
		File: "/repo/.mcp.json", Cwd: "/repo", AlwaysLoad: []string{"lint"}, Tasks: "auto", ProtocolVersion: "2026-07-28",
		CallTimeout: 90e9, Env: map[string]string{"TOKEN": "s3cr3t"}, Vars: []string{"TOKEN"},
		OAuth: &config.OAuthClient{ClientID: "cid", ClientSecret: "oauth-s3cr3t", Scopes: []string{"read"}}}
	d, h, _ := consentViews(srv)
	for _, want := range []string{`alwaysLoad: "lint"`, `tasks: "auto"`, `protocolVersion: "2026-07-28"`, "callTimeout: 1m30s",
		"startTimeout: (not set: mcphost's default)", `oauth.clientId: "cid"`, "oauth.clientSecret: (set, hidden)", `oauth.scopes: "read"`} {
		if !strings.Contains(d, want) {
			t.Errorf("the dialog does not show %q:\n%s", want, d)
		}
	}
	for _, want := range []string{`alwaysLoad "lint"`, `tasks "auto"`, `protocolVersion "2026-07-28"`, "callTimeout 1m30s", `env "TOKEN" (values hidden here`} {
		if !strings.Contains(h, want) {
			t.Errorf("the headless message does not show %q:\n%s", want, h)
		}
	}
	if strings.Contains(d+h, "oauth-s3cr3t") || strings.Contains(h, "s3cr3t") {
		t.Errorf("a secret is shown:\n%s\n%s", d, h)
	}
}
