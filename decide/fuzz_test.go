package decide_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
)

// annotationsOf reads an annotations object the way the client does: each
// hint true, false or absent (null counts as absent), anything else
// malformed; a missing or null object is no annotations.
func annotationsOf(b []byte) (present, malformed bool, h decide.Hints) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return false, false, h
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return true, true, h
	}
	for key, dst := range map[string]*decide.Hint{
		"readOnlyHint": &h.ReadOnly, "destructiveHint": &h.Destructive,
		"idempotentHint": &h.Idempotent, "openWorldHint": &h.OpenWorld,
	} {
		raw, ok := m[key]
		if !ok {
			continue
		}
		switch string(bytes.TrimSpace(raw)) {
		case "true":
			*dst = decide.True
		case "false":
			*dst = decide.False
		case "null":
		default:
			return true, true, decide.Hints{}
		}
	}
	return true, false, h
}

// annotationsJSON writes the table's hint notation as the server would.
func annotationsJSON(s string) []byte {
	present, malformed, h := hintsOf(s)
	switch {
	case !present:
		return nil
	case malformed:
		return []byte(`{"readOnlyHint":"yes"}`)
	}
	var parts []string
	for _, f := range []struct {
		name string
		h    decide.Hint
	}{{"readOnlyHint", h.ReadOnly}, {"destructiveHint", h.Destructive}, {"idempotentHint", h.Idempotent}, {"openWorldHint", h.OpenWorld}} {
		if f.h != decide.Absent {
			parts = append(parts, `"`+f.name+`":`+f.h.String())
		}
	}
	return []byte("{" + strings.Join(parts, ",") + "}")
}

// Fuzz flags.
const (
	fInteractive = 1 << iota
	fTainted
	fChanged
	fGrant
)

// FuzzDecide feeds arbitrary annotations, arguments and a rule to the
// engine. It must never panic, and an untrusted server's tool is allowed
// only by a person's grant or by an allow rule that names the server, and
// never when a deny rule matches.
func FuzzDecide(f *testing.F) {
	var rules []string
	var effects []decide.Verdict
	for _, eff := range []decide.Verdict{decide.Deny, decide.Ask, decide.Allow} {
		for _, r := range ruleSet[eff] {
			rules, effects = append(rules, r), append(effects, eff)
		}
	}
	for i, r := range table {
		_, tool, _ := strings.Cut(r.tool, "/")
		flags := uint8(0)
		if r.mode == decide.Interactive {
			flags |= fInteractive
		}
		if strings.Contains(r.sess, "taint") {
			flags |= fTainted
		}
		if r.def == "chg" {
			flags |= fChanged
		}
		if strings.Contains(r.sess, "session") {
			flags |= fGrant
		}
		j := i % len(rules)
		f.Add(annotationsJSON(r.hints), []byte(r.args), []byte(rules[j]), uint8(effects[j]), tool, r.trusted, flags)
	}

	f.Fuzz(func(t *testing.T, annotations, args, ruleRaw []byte, effect uint8, tool string, trusted bool, flags uint8) {
		const server = "srv"
		present, malformed, h := annotationsOf(annotations)
		in := decide.Input{
			Server: decide.Server{Name: server, Identity: "id:" + server, Trusted: trusted},
			Tool:   decide.Tool{Name: tool, Present: present, Malformed: malformed, Declared: h, DefinitionHash: "h1", PinnedHash: "h1"},
			Args:   json.RawMessage(args),
			Mode:   decide.Mode(flags & fInteractive),
		}
		in.Session.SawOpenWorldOutput = flags&fTainted != 0
		in.Session.SawPrivateRead = flags&fTainted != 0
		if flags&fChanged != 0 {
			in.Tool.DefinitionHash = "h2"
		}
		if flags&fGrant != 0 {
			in.Session.Grants = []decide.Grant{{Scope: decide.ScopeSession, Server: "id:" + server, Tool: tool, DefinitionHash: in.Tool.DefinitionHash}}
		}
		opts := decide.Options{AutoApprove: decide.ApproveAdditive, ProtectedPaths: protected, Home: "/home/u"}
		eff := decide.Verdict(effect % 3)
		spec := decide.RuleSpec{Effect: eff, Source: "fuzz", Raw: json.RawMessage(ruleRaw)}
		id := eff.String() + "[0]"
		p, err := decide.Compile([]decide.RuleSpec{spec}, opts)
		if err != nil {
			p = mustCompile(t, nil, opts)
		}
		d := p.Decide(in)
		_ = decide.AllowedScopes(d)
		_ = decide.Lint([]decide.LintTool{{Server: server, Name: tool, Present: present, Malformed: malformed, Declared: h}})

		if d.Verdict == decide.Ask && in.Mode == decide.Headless {
			t.Fatalf("headless asked")
		}
		if !trusted && d.Verdict == decide.Allow && d.Grant == nil {
			if err != nil || eff != decide.Allow || d.Rule != id {
				t.Fatalf("untrusted allowed without a grant or allow rule: rule %s %s, %v", eff, ruleRaw, codes(d))
			}
			// The rule must name the server exactly: under another name
			// the same rule does not allow.
			renamed := in
			renamed.Server.Name = server + "-renamed"
			if d2 := p.Decide(renamed); d2.Verdict == decide.Allow {
				t.Fatalf("allow rule %s lifted an untrusted server it does not name", ruleRaw)
			}
		}
		if err != nil || eff != decide.Deny || d.Rule != id {
			return
		}
		// The deny rule matched: with allow rules for everything and a
		// grant, it still wins.
		withAllows := []decide.RuleSpec{spec,
			{Effect: decide.Allow, Index: 0, Raw: json.RawMessage(`"*"`)},
			{Effect: decide.Allow, Index: 1, Raw: json.RawMessage(`"` + server + `"`)},
		}
		in.Session.Grants = append(in.Session.Grants, decide.Grant{Scope: decide.ScopeSession, Server: "id:" + server, Tool: tool, DefinitionHash: in.Tool.DefinitionHash})
		in.Mode = decide.Interactive
		if d := mustCompile(t, withAllows, opts).Decide(in); d.Verdict != decide.Deny {
			t.Fatalf("deny rule %s matched alone but lost to allow rules: %s %v", ruleRaw, d.Verdict, codes(d))
		}
	})
}
