package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/sanitize"
)

// explain returns the decision the gate would make for a call now (see
// host.Gate.Explain) and the tool it is about.
func (m *Model) explain(server, tool string, args json.RawMessage) (decide.Decision, *client.Tool, error) {
	if m.mgr == nil || m.gate == nil {
		return decide.Decision{}, nil, errors.New("the servers have not started yet")
	}
	d, err := m.gate.Explain(server, tool, args)
	if err != nil {
		return decide.Decision{}, nil, err
	}
	t, ok := m.mgr.Tool(server, tool)
	if !ok { // it went away between the two looks
		return decide.Decision{}, nil, fmt.Errorf("server %q has no tool %q (or it is not ready)", server, tool)
	}
	return d, t, nil
}

// explainLines says what the gate decides for a tool and why, for the
// tools panel and /explain, wrapped to width.
func (m *Model) explainLines(t *client.Tool, d decide.Decision, width int) []string {
	st := m.st
	head := st.Bold.Render(sanitize.Name(t.Ref()))
	if t.Title != "" {
		head += st.Muted.Render(fmt.Sprintf("  “%s” (the server's words)", cleanLine(truncBytes(t.Title, 80))))
	}
	trusted := "not trusted: its annotations are ignored"
	if m.trust.trusted(t.Server) {
		trusted = "trusted"
	}
	retry := "no (at most once)"
	if d.Retry {
		retry = "yes, if the outcome is unknown"
	}
	e := d.Effective
	verdict := m.rc.badge(d.Class, d.Tier) + " " + verdictWords(d)
	if d.Verdict == decide.Ask { // the tier says how it asks; for allow and deny it would repeat or contradict
		verdict += st.Muted.Render(" — " + decide.TierText(d.Tier))
	}
	lines := []string{
		head,
		verdict,
		st.Muted.Render("declared  ") + t.Annotations.String(),
		st.Muted.Render("effective ") + fmt.Sprintf("readOnly=%s destructive=%s idempotent=%s openWorld=%s", e.ReadOnly, e.Destructive, e.Idempotent, e.OpenWorld),
		st.Muted.Render("server    ") + trusted + st.Muted.Render(" · retry ") + retry,
	}
	if d.Rule != "" {
		lines = append(lines, st.Muted.Render("rule      ")+cleanLine(d.Rule))
	}
	var out []string
	for _, l := range lines {
		out = append(out, hang(l, width, "          ")...)
	}
	// The reasons to ask (or refuse) apart from what lowers the risk: "it
	// only reads" is never listed as a reason.
	ask, favour := d.Split()
	for _, part := range []struct {
		head    string
		reasons []decide.Reason
	}{{d.AgainstHeading(), ask}, {"in its favour", favour}} {
		if len(part.reasons) == 0 {
			continue
		}
		out = append(out, st.Muted.Render(part.head))
		for _, r := range part.reasons {
			out = append(out, hang("  - "+cleanLine(r.Code)+": "+cleanLine(r.Text), width, "    ")...)
		}
	}
	return out
}

func verdictWords(d decide.Decision) string {
	switch d.Verdict {
	case decide.Allow:
		return "ALLOW: runs without asking"
	case decide.Ask:
		return "ASK: a dialog asks you first"
	default:
		return "DENY: refused"
	}
}

// checkObject reports whether raw is one JSON object.
func checkObject(raw string) error {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("the arguments must be a JSON object, like {\"id\": \"T-1\"}")
	}
	return nil
}

// truncBytes cuts s to at most n bytes on a rune boundary, with an ellipsis.
func truncBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}
