package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreWritten compares servers by what they hold, leaving out the
// values as written, which TestShown checks.
var ignoreWritten = cmpopts.IgnoreUnexported(Server{})

// An entry shown where others can read it shows every value that read the
// environment as the file wrote it, in every field that is expanded, and
// never the variable's value; the entry itself keeps the values.
func TestShown(t *testing.T) {
	const secret = "s3cr3t-value"
	getenv := func(k string) string {
		if k == "SECRET" {
			return secret
		}
		return ""
	}
	src := `{"mcpServers": {
  "cli": {"command": "run", "args": ["--token", "${SECRET}", "--x=$${LIT}", "plain"], "env": {"TOKEN": "${SECRET}", "MODE": "fast", "D": "${UNSET:-dflt}"}},
  "web": {"url": "https://h.example/${SECRET}/mcp", "headers": {"Authorization": "Bearer ${SECRET}", "X-Plain": "p"},
          "oauth": {"clientId": "id", "clientSecret": "${SECRET}"}}
}}`
	for _, src0 := range []Source{SourceUser, SourceProject} {
		r, err := parse("f.json", []byte(src), src0, getenv)
		if err != nil {
			t.Fatal(err)
		}
		cli, _ := r.cfg.Server("cli")
		web, _ := r.cfg.Server("web")
		if cli.Args[1] != secret || cli.Env["TOKEN"] != secret || web.Headers["Authorization"] != "Bearer "+secret || web.OAuth.ClientSecret != secret {
			t.Fatalf("the entry lost its values: %+v %+v", cli, web)
		}
		shownCLI, shownWeb := cli.Shown(), web.Shown()
		for _, s := range []Server{shownCLI, shownWeb} {
			if text := fmt.Sprintf("%+v %+v", s, oauthOf(s)); strings.Contains(text, secret) {
				t.Errorf("%s source: shown entry %q shows the variable's value: %s", src0, s.Name, text)
			}
		}
		wantCLI := cli
		wantCLI.Args = []string{"--token", "${SECRET}", "--x=${LIT}", "plain"}
		wantCLI.Env = map[string]string{"TOKEN": "${SECRET}", "MODE": "fast", "D": "${UNSET:-dflt}"}
		if diff := cmp.Diff(wantCLI, shownCLI, ignoreWritten); diff != "" {
			t.Errorf("shown stdio entry (-want +got):\n%s", diff)
		}
		wantWeb := web
		wantWeb.URL = "https://h.example/${SECRET}/mcp"
		wantWeb.Headers = map[string]string{"Authorization": "Bearer ${SECRET}", "X-Plain": "p"}
		wantWeb.OAuth = &OAuthClient{ClientID: "id", ClientSecret: "${SECRET}"}
		if diff := cmp.Diff(wantWeb, shownWeb, ignoreWritten); diff != "" {
			t.Errorf("shown http entry (-want +got):\n%s", diff)
		}
		// The copy shares nothing with the entry, which still holds the values.
		if cli.Args[1] != secret || cli.Env["TOKEN"] != secret || web.Headers["Authorization"] != "Bearer "+secret || web.OAuth.ClientSecret != secret || web.URL != "https://h.example/"+secret+"/mcp" {
			t.Errorf("Shown changed the entry it was called on: %+v %+v", cli, web)
		}
	}
}

// oauthOf is s's OAuth client, or a zero one, for printing.
func oauthOf(s Server) OAuthClient {
	if s.OAuth == nil {
		return OAuthClient{}
	}
	return *s.OAuth
}
