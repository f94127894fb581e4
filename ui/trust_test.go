package ui

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/state"
)

func (h *harness) verdict(server, tool string) decide.Verdict {
	h.t.Helper()
	d, _, _ := h.m.explain(server, tool, nil)
	return d.Verdict
}

// TestUntrustCommand: /trust lists, /untrust and /trust revoke take trust
// back at once and in the state file, and /grants lists what is trusted.
func TestUntrustCommand(t *testing.T) {
	cfg, _ := tasksConfig(t) // tasks not trusted at the start
	cfg.StatePath = filepath.Join(t.TempDir(), "state.json")
	h := newHarness(t, cfg)
	h.ready()
	spec, _ := h.m.mgr.Spec("tasks")
	remembered := func() bool {
		st, err := state.Load(cfg.StatePath)
		if err != nil {
			t.Fatal(err)
		}
		return st.Trusted(spec.Identity())
	}

	h.command("/trust")
	if s := h.screen(); !strings.Contains(s, "tasks: not trusted") {
		t.Errorf("/trust does not list tasks as not trusted:\n%s", s)
	}
	for _, revoke := range []string{"/untrust tasks", "/trust revoke tasks"} {
		h.command("/trust tasks")
		if h.verdict("tasks", "list_tasks") != decide.Allow || !remembered() {
			t.Fatalf("/trust tasks did not trust it")
		}
		h.command("/trust")
		if s := h.screen(); !strings.Contains(s, "tasks: trusted (/trust in this session, remembered)") {
			t.Errorf("/trust does not list the trust:\n%s", s)
		}
		h.command("/grants")
		if s := h.screen(); !strings.Contains(s, "Trusted servers") || !strings.Contains(s, "tasks  trusted") {
			t.Errorf("/grants does not list the trusted server:\n%s", s)
		}
		h.key("esc")
		h.command(revoke)
		if v := h.verdict("tasks", "list_tasks"); v != decide.Ask {
			t.Errorf("after %s: list_tasks %s, want ask", revoke, v)
		}
		if remembered() {
			t.Errorf("after %s: the state file still trusts tasks", revoke)
		}
		if s := strings.Join(strings.Fields(h.screen()), " "); !strings.Contains(s, "tasks is not trusted from now on") || !strings.Contains(s, "no longer remembers trusting it") {
			t.Errorf("after %s the screen does not say so:\n%s", revoke, s)
		}
	}
	h.command("/untrust nosuch")
	if !strings.Contains(h.screen(), `/untrust: no running server named "nosuch"`) {
		t.Errorf("no error for an unknown server:\n%s", h.screen())
	}
}

// TestUntrustConfigTrust: trust written in the config ends for the session
// and the notice says where it is written.
func TestUntrustConfigTrust(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	cfg.TrustInfo = func(string) TrustInfo { return TrustInfo{From: `"trust": true in cfg.json`, Written: true} }
	h := newHarness(t, cfg)
	h.ready()
	h.command("/trust")
	if s := h.screen(); !strings.Contains(s, `tasks: trusted ("trust": true in cfg.json)`) {
		t.Errorf("/trust does not say where the trust comes from:\n%s", s)
	}
	h.command("/untrust tasks")
	if v := h.verdict("tasks", "list_tasks"); v != decide.Ask {
		t.Errorf("after /untrust: list_tasks %s, want ask", v)
	}
	if s := strings.Join(strings.Fields(h.screen()), " "); !strings.Contains(s, `trusted again at the next start by "trust": true in cfg.json: remove it there`) {
		t.Errorf("/untrust does not say where the trust is written:\n%s", s)
	}
}

// TestTrustRefusedByConfig: "trust": false in the person's config wins
// over /trust, and the dialog does not offer trusting the server.
func TestTrustRefusedByConfig(t *testing.T) {
	cfg, _ := tasksConfig(t)
	cfg.StatePath = filepath.Join(t.TempDir(), "state.json")
	cfg.TrustInfo = func(string) TrustInfo { return TrustInfo{Distrusted: "cfg.json"} }
	h := newHarness(t, cfg)
	h.ready()
	h.command("/trust tasks")
	if s := h.screen(); !strings.Contains(s, `your config (cfg.json) says "trust": false for tasks`) {
		t.Errorf("/trust does not name the config's false:\n%s", s)
	}
	if v := h.verdict("tasks", "list_tasks"); v != decide.Ask {
		t.Errorf("after a refused /trust: list_tasks %s, want ask", v)
	}
	// Nor does the dialog offer to trust it.
	_, _, cmd := h.m.sendCall("tasks", "list_tasks", json.RawMessage(`{}`))
	h.run(cmd)
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	if q := shown[*confirmDialog](h.m).d.Question(); q.TrustLifts {
		t.Error("the dialog offers trusting a server the config says \"trust\": false for")
	}
}

// TestDialogTrustsServerOnlyDeliberately: a call that asks only because
// its server is untrusted offers trusting the server in its dialog; stray
// keys never take that offer, and ctrl+t twice trusts the server (at once
// and remembered) and runs the call.
func TestDialogTrustsServerOnlyDeliberately(t *testing.T) {
	cfg, clk := tasksConfig(t) // tasks not trusted
	cfg.StatePath = filepath.Join(t.TempDir(), "state.json")
	h := newHarness(t, cfg)
	h.ready()
	open := func() {
		h.t.Helper()
		_, _, cmd := h.m.sendCall("tasks", "list_tasks", json.RawMessage(`{}`))
		h.run(cmd)
		h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
		clk.Add(time.Second)
		if q := shown[*confirmDialog](h.m).d.Question(); !q.TrustLifts {
			t.Fatalf("list_tasks of the untrusted tasks does not ask only for its trust: %+v", q.Decision.Reasons)
		}
	}

	open()
	for _, k := range []string{"enter", "y", "t", "ctrl+t", "enter", "y"} {
		h.key(k) // ctrl+t opens the step; enter goes back
	}
	if shown[*confirmDialog](h.m) == nil || h.m.trust.trusted("tasks") {
		t.Fatal("stray keys answered the dialog or trusted the server")
	}
	h.key("esc") // denies
	h.until("the call ends", func() bool { return len(h.m.calls) == 0 })
	if h.m.trust.trusted("tasks") {
		t.Fatal("stray keys trusted the server")
	}

	open()
	h.key("ctrl+t")
	h.key("ctrl+t")
	h.until("the call ends", func() bool { return len(h.m.calls) == 0 })
	if !h.m.trust.trusted("tasks") {
		t.Fatal("ctrl+t twice did not trust the server")
	}
	st, err := state.Load(cfg.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := h.m.mgr.Spec("tasks")
	if !st.Trusted(spec.Identity()) {
		t.Error("the trust given in the dialog was not remembered")
	}
	if v := h.verdict("tasks", "list_tasks"); v != decide.Allow {
		t.Errorf("after trusting: list_tasks %s, want allow", v)
	}
}
