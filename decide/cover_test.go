package decide_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/decide"
)

// coverRow is one call against one grant: what a grant a person gave
// covers, and what must still ask. Allow and ask rows stand side by side.
type coverRow struct {
	name    string
	trusted bool
	hints   string // see hintsOf
	def     string // "" pinned and unchanged, "chg" changed since pinned
	args    string
	taint   bool // the session is tainted now
	newP    bool // Input.NewPaths
	grant   string
	mode    decide.Mode
	want    string // "VERDICT TIER CLASS"
	codes   string // reason codes that must appear, in this order
}

// grantOf reads a grant: "SCOPE[/TIER][+tainted][=ARGS]" for tool,
// "other:..." for another tool, or "" for none.
func grantOf(t *testing.T, s, tool string) []decide.Grant {
	if s == "" {
		return nil
	}
	g := decide.Grant{Server: "id:fs", Tool: tool, DefinitionHash: "h1"}
	if rest, ok := strings.CutPrefix(s, "other:"); ok {
		g.Tool, s = "other_tool", rest
	}
	s, args, hasArgs := strings.Cut(s, "=")
	if hasArgs {
		g.ArgsHash = decide.ArgsHash(json.RawMessage(args))
	}
	s, g.Tainted = strings.CutSuffix(s, "+tainted")
	s, tier, hasTier := strings.Cut(s, "/")
	if hasTier {
		if err := g.Tier.UnmarshalText([]byte(tier)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Scope.UnmarshalText([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return []decide.Grant{g}
}

// coverTool is the tool a row calls: one named as a read for the rows
// whose tool claims to read, else one named as a write.
func (r coverRow) tool() string {
	if strings.HasPrefix(r.hints, "t") {
		return "search_docs"
	}
	return "write_file"
}

func (r coverRow) input(t *testing.T) decide.Input {
	present, malformed, h := hintsOf(r.hints)
	in := decide.Input{
		Server:   decide.Server{Name: "fs", Identity: "id:fs", Trusted: r.trusted},
		Tool:     decide.Tool{Name: r.tool(), Present: present, Malformed: malformed, Declared: h, DefinitionHash: "h1", PinnedHash: "h1"},
		Args:     json.RawMessage(r.args),
		Session:  decide.Session{Grants: grantOf(t, r.grant, r.tool()), SawOpenWorldOutput: r.taint, SawPrivateRead: r.taint},
		Mode:     r.mode,
		NewPaths: r.newP,
	}
	if r.def == "chg" {
		in.Tool.DefinitionHash = "h2"
		for i := range in.Session.Grants {
			in.Session.Grants[i].DefinitionHash = "h2" // a grant for the new definition, not yet accepted
		}
	}
	if r.args == "" {
		in.Args = json.RawMessage(`{"path":"notes/new.md"}`)
	}
	return in
}

const (
	taint = true
	newP  = true
)

var coverTable = []coverRow{
	// An open-world read in a tainted session: a grant the person gave
	// with the taint warning in front of them covers the tool's later
	// reads; one given before the taint does not.
	{"tainted read, grant given in taint", tr, "t--t", "", "", taint, false, "session/T1+tainted", I, "allow T1 read", "read-only open-world tainted-session grant:session"},
	{"tainted read, grant given before taint", tr, "t--t", "", "", taint, false, "session/T1", I, "ask T1 read", "open-world tainted-session"},
	{"tainted read, legacy grant without tier", tr, "t--t", "", "", taint, false, "session", I, "ask T1 read", "tainted-session"},
	{"tainted read, args grant given in taint", tr, "t--t", "", `{"q":"x"}`, taint, false, `args/T1+tainted={"q":"x"}`, I, "allow T1 read", "tainted-session grant:args"},
	{"tainted read, args grant for other args", tr, "t--t", "", `{"q":"y"}`, taint, false, `args/T1+tainted={"q":"x"}`, I, "ask T1 read", "tainted-session"},
	{"tainted read, grant for another tool", tr, "t--t", "", "", taint, false, "other:session/T1+tainted", I, "ask T1 read", "tainted-session"},
	{"tainted read, definition changed", tr, "t--t", "chg", "", taint, false, "session/T1+tainted", I, "ask T3 unknown", "definition-changed"},
	{"tainted read, protected path", tr, "t--t", "", `{"path":"/home/u/.config/mcphost/config.json"}`, taint, false, "session/T3+tainted", I, "ask T3 read", "protected-path"},
	{"tainted read, headless", tr, "t--t", "", "", taint, false, "session/T1+tainted", H, "allow T1 read", "grant:session"},
	{"untainted read, grant given in taint", tr, "t--t", "", "", false, false, "session/T1+tainted", I, "allow T1 read", "grant:session"},
	{"tainted additive write, grant given in taint", tr, "ff-t", "", "", taint, false, "session/T1+tainted", I, "ask T1 additive", "tainted-session"},
	{"tainted destructive write, grant given in taint", tr, "ft-t", "", "", taint, false, "session/T3+tainted", I, "ask T3 destructive", "tainted-session"},
	{"tainted untrusted call, grant given in taint", un, "t--t", "", "", taint, false, "session/T3+tainted", I, "ask T3 unknown", "untrusted-server tainted-session"},
	{"closed-world destructive, tainted, grant", tr, "ft-f", "", "", taint, false, "session/T2", I, "allow T2 destructive", "grant:session"},

	// An idempotent destructive call that names only new paths asks at
	// T1; anything else keeps its tier.
	{"new paths", tr, "fttf", "", "", false, newP, "", I, "ask T1 destructive", "destructive idempotent closed-world new-paths"},
	{"existing path", tr, "fttf", "", "", false, false, "", I, "ask T2 destructive", "destructive"},
	{"new paths, not idempotent", tr, "ftff", "", "", false, newP, "", I, "ask T2 destructive", "destructive"},
	{"new paths, idempotent by default only", tr, "ft-f", "", "", false, newP, "", I, "ask T2 destructive", "destructive"},
	{"new paths, open world", tr, "fttt", "", "", false, newP, "", I, "ask T3 destructive", "open-world"},
	{"new paths, untrusted", un, "fttf", "", "", false, newP, "", I, "ask T3 unknown", "untrusted-server"},
	{"new paths, no annotations", tr, "none", "", "", false, newP, "", I, "ask T3 unknown", "no-annotations"},
	{"new paths, definition changed", tr, "fttf", "chg", "", false, newP, "", I, "ask T3 unknown", "definition-changed"},
	{"new paths, protected", tr, "fttf", "", `{"path":"/home/u/.config/mcphost/new.json"}`, false, newP, "session/T3", I, "ask T3 destructive", "new-paths protected-path"},
	{"new paths, headless", tr, "fttf", "", "", false, newP, "", H, "deny T1 destructive", "new-paths needs-approval"},

	// A grant covers calls at the tier it was given at, or below.
	{"grant at T1 covers a new-paths call", tr, "fttf", "", "", false, newP, "session/T1", I, "allow T1 destructive", "new-paths grant:session"},
	{"grant at T1 does not cover an overwrite", tr, "fttf", "", "", false, false, "session/T1", I, "ask T2 destructive", "destructive"},
	{"always grant at T1 does not cover an overwrite", tr, "fttf", "", "", false, false, "always/T1", I, "ask T2 destructive", "destructive"},
	{"args grant at T1 does not cover an overwrite", tr, "fttf", "", "", false, false, `args/T1={"path":"notes/new.md"}`, I, "ask T2 destructive", "destructive"},
	{"grant at T2 covers T2", tr, "fttf", "", "", false, false, "session/T2", I, "allow T2 destructive", "grant:session"},
	{"grant at T2 covers a new-paths call", tr, "fttf", "", "", false, newP, "session/T2", I, "allow T1 destructive", "grant:session"},
	{"grant without a tier is bounded by its scope", tr, "fttf", "", "", false, false, "session", I, "allow T2 destructive", "grant:session"},
}

func TestGrantCoverage(t *testing.T) {
	p := policies(t)[""]
	for _, r := range coverTable {
		t.Run(r.name, func(t *testing.T) {
			d := p.Decide(r.input(t))
			got := fmt.Sprintf("%s %s %s", d.Verdict, d.Tier, d.Class)
			if got != r.want {
				t.Errorf("got %s, want %s (reasons %v)", got, r.want, codes(d))
			}
			if missing := subsequence(codes(d), strings.Fields(r.codes)); missing != "" {
				t.Errorf("reasons %v lack %q (in order %q)", codes(d), missing, r.codes)
			}
			checkShape(t, d)
		})
	}
}

// The grant a person gives carries the tier and the taint of the question
// they answered, so that it covers no riskier call and, in a tainted
// session, only what they approved knowing of the taint.
func TestNewGrant(t *testing.T) {
	p := policies(t)[""]
	args := json.RawMessage(`{"path":"notes/new.md"}`)
	tainted := coverRow{trusted: tr, hints: "t--t", taint: taint, mode: I}.input(t)
	lowered := coverRow{trusted: tr, hints: "fttf", newP: newP, mode: I}.input(t)
	cases := []struct {
		in    decide.Input
		scope decide.Scope
		want  decide.Grant
	}{
		{tainted, decide.ScopeSession, decide.Grant{Scope: decide.ScopeSession, Server: "id:fs", Tool: "search_docs", DefinitionHash: "h1", Tier: decide.T1, Tainted: true}},
		{lowered, decide.ScopeSession, decide.Grant{Scope: decide.ScopeSession, Server: "id:fs", Tool: "write_file", DefinitionHash: "h1", Tier: decide.T1}},
		{lowered, decide.ScopeArgs, decide.Grant{Scope: decide.ScopeArgs, Server: "id:fs", Tool: "write_file", DefinitionHash: "h1", Tier: decide.T1, ArgsHash: decide.ArgsHash(args)}},
		{lowered, decide.ScopeOnce, decide.Grant{Scope: decide.ScopeOnce, Server: "id:fs", Tool: "write_file", DefinitionHash: "h1", Tier: decide.T1, ArgsHash: decide.ArgsHash(args)}},
	}
	for _, c := range cases {
		d := p.Decide(c.in)
		got := decide.NewGrant(d, c.scope, "id:fs", c.in.Tool.Name, "h1", args)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s for %v: grant (-want +got):\n%s", c.scope, codes(d), diff)
		}
		// The grant covers the call it was given for.
		c.in.Session.Grants = append(c.in.Session.Grants, got)
		c.in.Args = args
		if d := p.Decide(c.in); d.Verdict != decide.Allow || d.Grant == nil {
			t.Errorf("%s grant %+v does not cover the call it was given for: %s %v", c.scope, got, d.Verdict, codes(d))
		}
	}
}

// A tool whose name says it deletes, empties or rolls back something can
// lose more than what is at the paths it names: new paths never lower it.
func TestNewPathsNotForNamesThatLoseMore(t *testing.T) {
	p := policies(t)[""]
	for _, c := range []struct {
		name string
		want decide.Tier
	}{
		{"write_file", decide.T1},
		{"save_note", decide.T1},
		{"put_object", decide.T1},
		{"delete_branch", decide.T2},
		{"file_remove", decide.T2},
		{"purge_cache", decide.T2},
		{"reset_db", decide.T2},
		{"clear_items", decide.T2},
		{"rollbackMigration", decide.T2},
		{"d\u0435lete_all", decide.T2}, // a Cyrillic е
		{"ｄｅｌｅｔｅ", decide.T2},
		{"a_b_c_d_e_f_g_h_i_j_k_l_n_o_p_q_r_s_delete", decide.T2}, // more words than are read
	} {
		in := coverRow{trusted: tr, hints: "fttf", newP: newP, mode: I}.input(t)
		in.Tool.Name = c.name
		if d := p.Decide(in); d.Tier != c.want || d.Verdict != decide.Ask {
			t.Errorf("%s naming only new paths: %s %s %v, want ask %s", c.name, d.Verdict, d.Tier, codes(d), c.want)
		}
	}
}
