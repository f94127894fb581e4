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

	// The look-alike, taint and poisoned-description rows, with the rules
	// of their own policy.
	var xr []string
	var xe []decide.Verdict
	for _, eff := range []decide.Verdict{decide.Deny, decide.Ask, decide.Allow} {
		for _, r := range xrules[eff] {
			xr, xe = append(xr, r), append(xe, eff)
		}
	}
	for i, r := range xtable {
		_, tool, _ := strings.Cut(r.tool, "/")
		flags := uint8(fInteractive)
		if strings.Contains(r.sess, "taint") {
			flags |= fTainted
		}
		j := i % len(xr)
		f.Add(annotationsJSON(r.hints), []byte(r.args), []byte(strings.Replace(xr[j], `"*/`, `"srv/`, 1)), uint8(xe[j]), tool, r.trusted, flags)
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

// FuzzLookAlikeDeny: a deny rule written for the ASCII name a person
// reads in a look-alike name refuses the look-alike.
func FuzzLookAlikeDeny(f *testing.F) {
	for _, r := range xtable {
		_, tool, _ := strings.Cut(r.tool, "/")
		f.Add(tool)
	}
	f.Add("d\u0435lete_all")
	f.Add("ｗｉｐｅ")
	f.Fuzz(func(t *testing.T, name string) {
		reads, ok := decide.ReadsAs(name)
		if !ok || reads == "" || strings.ContainsAny(reads, "[]{}\\*?\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f") {
			return
		}
		raw, _ := json.Marshal("srv/" + reads)
		p, err := decide.Compile([]decide.RuleSpec{{Effect: decide.Deny, Raw: raw}}, decide.Options{})
		if err != nil {
			t.Fatalf("deny rule %s: %v", raw, err)
		}
		d := p.Decide(decide.Input{Server: decide.Server{Name: "srv"}, Tool: decide.Tool{Name: name}, Mode: decide.Interactive})
		if d.Verdict != decide.Deny {
			t.Fatalf("deny rule %s let %+q through: %v", raw, name, codes(d))
		}
	})
}
