package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/state"
)

// TestProjectInstructionsNeedConsentHeadless: a run does not send the
// project's AGENTS.md until a consent to this file, as it is, is in the
// state file, and says how to give it; once given it is sent; a changed
// file asks again.
func TestProjectInstructionsNeedConsentHeadless(t *testing.T) {
	work, stateDir := t.TempDir(), t.TempDir()
	agents := filepath.Join(work, "AGENTS.md")
	if err := os.WriteFile(agents, []byte("Always run the linter."), 0o644); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(stateDir, "state.json")
	m := client.New(nil, client.Options{})
	defer m.Close()
	brief := func() (host.Briefing, string) {
		t.Helper()
		store, err := host.OpenStateStore(statePath, nil)
		if err != nil {
			t.Fatal(err)
		}
		var errs bytes.Buffer
		st := &setup{store: store}
		b := st.briefing(&streams{Err: &errs, WorkDir: work}, m)()
		return b, errs.String()
	}
	b, errs := brief()
	if b.Project != "" || !strings.Contains(errs, "AGENTS.md is not sent to the model") || !strings.Contains(errs, "/instructions send") {
		t.Fatalf("without consent: project %q, stderr %q", b.Project, errs)
	}
	in, _ := config.FindInstructions(work)
	consent := func(c state.Choice) {
		if err := state.Update(statePath, nil, func(s *state.State) error { s.SetConsent(in.Key, in.Hash, c); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	consent(state.ChoiceSkipped)
	if b, _ = brief(); b.Project != "" {
		t.Fatal("sent after the person chose not to")
	}
	consent(state.ChoiceUntrusted)
	if b, errs = brief(); b.Project != "Always run the linter." || errs != "" {
		t.Fatalf("with consent: project %q, stderr %q", b.Project, errs)
	}
	if err := os.WriteFile(agents, []byte("Always run the linter. And push to main."), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ = brief(); b.Project != "" {
		t.Fatal("a changed file was sent on the old consent")
	}
}

// TestTrustListsInstructionsConsent: mcp trust lists the consent to the
// working directory's AGENTS.md as in force here, and as changed once the
// file changes, not as another project's.
func TestTrustListsInstructionsConsent(t *testing.T) {
	work, stateDir := t.TempDir(), t.TempDir()
	agents := filepath.Join(work, "AGENTS.md")
	if err := os.WriteFile(agents, []byte("Always run the linter."), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := config.FindInstructions(work)
	if err != nil || in == nil {
		t.Fatalf("FindInstructions: %v, %v", in, err)
	}
	st := &setup{cfg: &config.Config{}, stateDir: stateDir}
	if err := state.Update(st.statePath(), nil, func(s *state.State) error { s.SetConsent(in.Key, in.Hash, state.ChoiceUntrusted); return nil }); err != nil {
		t.Fatal(err)
	}
	list := func() string {
		t.Helper()
		var out bytes.Buffer
		if err := st.listTrust(context.Background(), true, &streams{Out: &out, Err: &out, WorkDir: work}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := list(); !strings.Contains(got, `"status": "in force"`) {
		t.Fatalf("consent to this directory's AGENTS.md:\n%s\nwant it in force", got)
	}
	if err := os.WriteFile(agents, []byte("Always run the linter. And push to main."), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := list(); !strings.Contains(got, `"status": "changed"`) {
		t.Fatalf("after AGENTS.md changed:\n%s\nwant the consent changed", got)
	}
}
