package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxShownArgs bounds the arguments written into a question, in bytes.
const MaxShownArgs = 16 << 10

// The answers of the elicitation form's "decision" property.
const (
	DecisionAllowOnce    = "allow-once"
	DecisionAllowArgs    = "allow-args"
	DecisionAllowSession = "allow-session"
	DecisionDeny         = "deny"
)

// decisionScopes maps the form's answers to the grant they give; "always"
// is never offered through a client.
var decisionScopes = []struct {
	answer string
	scope  decide.Scope
}{
	{DecisionAllowOnce, decide.ScopeOnce},
	{DecisionAllowArgs, decide.ScopeArgs},
	{DecisionAllowSession, decide.ScopeSession},
}

// route is where a question goes.
type route int

const (
	routeNone route = iota
	routeElicit
	routeApprover
)

// asker is one client session's host.Asker.
type asker struct {
	s  *Server
	ss *mcp.ServerSession
}

// elicits reports whether the client declared form elicitation.
func (a *asker) elicits() bool {
	p := a.ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither declared: form, for older clients
}

func (a *asker) route() route {
	approver := a.s.o.Approver != nil && a.s.o.Approver.Waiting()
	switch a.s.o.AskVia {
	case AskElicit:
		if a.elicits() {
			return routeElicit
		}
	case AskApprover:
		if approver {
			return routeApprover
		}
	case AskAuto:
		switch {
		case a.elicits():
			return routeElicit
		case approver:
			return routeApprover
		}
	}
	return routeNone
}

// canAsk tells the gate whether a question could be answered now; when it
// cannot, the call is decided as headless and refused with needs-approval.
func (a *asker) canAsk() bool { return a.route() != routeNone }

// multiRoundTrip reports whether the client speaks 2026-07-28, where a
// server may not send elicitation/create: it returns the question as an
// input-required result, and the client calls again with the answer.
func (a *asker) multiRoundTrip() bool {
	p := a.ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// answerKey carries, in a call's context, the answer the client sent
// with it (multi round-trip).
type answerKey struct{}

// provided is an answer that came with the call, or why none counts.
type provided struct {
	res    *mcp.ElicitResult
	def    string // the definition hash the answer was given about
	reason string // set when the answer cannot be used
}

// Ask routes q to the client's elicitation or the approver.
func (a *asker) Ask(ctx context.Context, q *host.Question) (host.Answer, error) {
	if p, ok := ctx.Value(answerKey{}).(*provided); ok {
		if p.reason != "" {
			return host.Answer{Reason: p.reason}, nil
		}
		if q.Tool == nil || q.Tool.Hash != p.def {
			// The server listed the tool anew since the question: the
			// answer was about another definition.
			return host.Answer{Reason: "the tool's definition changed since the question was answered; call again to be asked about it as it is now"}, nil
		}
		return Judge(q, p.res), nil
	}
	switch a.route() {
	case routeElicit:
		if a.multiRoundTrip() && host.IsOperation(q.Tool) {
			// A read, prompts/get or subscription has no round of its
			// own to ask in: the approver, when one waits, else no one
			// (the refusal says how to approve it).
			if a.s.o.AskVia != AskElicit && a.s.o.Approver != nil && a.s.o.Approver.Waiting() {
				return a.s.o.Approver.Ask(ctx, q)
			}
			return host.Answer{}, host.ErrNoPerson
		}
		if a.multiRoundTrip() {
			// The question went out before the call (see inputRequired);
			// one that arises only now cannot be asked in this round.
			return host.Answer{Reason: "the call needed approval only as it ran; call it again to be asked"}, nil
		}
		return a.elicit(ctx, q)
	case routeApprover:
		return a.s.o.Approver.Ask(ctx, q)
	}
	return host.Answer{}, host.ErrNoPerson
}

// elicit asks the client's person with a form bound to this one call.
func (a *asker) elicit(ctx context.Context, q *host.Question) (host.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, a.s.o.AskTimeout)
	defer cancel()
	params := Elicitation(q)
	res, err := a.ss.Elicit(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return host.Answer{Reason: "no answer came in time"}, nil
		}
		return host.Answer{Reason: "the question could not be asked: " + bound(err.Error(), 300)}, fmt.Errorf("ask through the client: %w", err)
	}
	return Judge(q, res), nil
}

// Elicitation is the question about q as an elicitation/create form: the
// message names the server, the raw tool name, class and tier, every reason
// and the full arguments (escaped, bounded); the form has a required enum
// "decision" and, at tier 3, a required "confirm" that must be the raw tool
// name.
func Elicitation(q *host.Question) *mcp.ElicitParams {
	enum := []string{}
	for _, d := range decisionScopes {
		if allows(q.Scopes, d.scope) {
			enum = append(enum, d.answer)
		}
	}
	enum = append(enum, DecisionDeny)
	props := map[string]any{
		"decision": map[string]any{
			"type": "string", "title": "Decision", "enum": enum,
			"description": "allow-once runs this call only; allow-args allows these exact arguments for this session; allow-session allows this tool for this session; deny refuses it.",
		},
	}
	required := []string{"decision"}
	if q.Decision.Tier == decide.T3 {
		props["confirm"] = map[string]any{
			"type": "string", "title": "Type the tool name to allow",
			"description": "To allow this elevated call, type the tool's raw name exactly: " + sanitize.Name(q.Tool.Name),
		}
		required = append(required, "confirm")
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: message(q),
		RequestedSchema: map[string]any{
			"type": "object", "properties": props, "required": required,
		},
	}
}

// message is the question's text.
func message(q *host.Question) string {
	var b strings.Builder
	d := q.Decision
	trust := "untrusted"
	if q.Trusted {
		trust = "trusted"
	}
	fmt.Fprintf(&b, "mcphost asks: run %s on server %s (%s)?\n", sanitize.Name(q.Tool.Name), sanitize.Name(q.Server), trust)
	fmt.Fprintf(&b, "Class %s, tier %s.\n", d.Class, d.Tier)
	if q.Tool.Title != "" && !q.Changed {
		fmt.Fprintf(&b, "The server calls it “%s” (the server's words).\n", bound(q.Tool.Title, 200))
	}
	if q.Changed {
		b.WriteString("Its definition changed since it was accepted")
		if len(q.ChangedFields) > 0 {
			b.WriteString(" (" + strings.Join(q.ChangedFields, ", ") + ")")
		}
		b.WriteString("; allowing this call accepts the new definition.\n")
	}
	b.WriteString("Why mcphost asks:\n")
	for _, r := range d.Reasons {
		b.WriteString("- " + r.Text + "\n")
	}
	flags := decide.PoisonFlags(q.Tool.Description)
	if flags != nil {
		b.WriteString("! Its description gives the model orders (" + strings.Join(flags, ", ") + "); the model may be acting on it.\n")
	}
	if q.Changed || flags != nil {
		// The model was not shown this text; the person decides on it.
		b.WriteString("Its description now (the server's words):\n" + sanitize.Truncate(sanitize.Text(q.Tool.Description), MaxDescription) + "\n")
	}
	b.WriteString("Arguments (argument hash " + decide.ArgsHash(q.Args)[:12] + "):\n")
	b.WriteString(sanitize.Truncate(sanitize.Text(indent(q.Args)), MaxShownArgs))
	if d.Tier == decide.T3 {
		b.WriteString("\nThis call is elevated: to allow it, type the tool name " + sanitize.Name(q.Tool.Name) + " in confirm.")
	}
	return b.String()
}

// indent shows arguments one member a line when they are JSON.
func indent(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(args)
	}
	return string(out)
}

// ErrWrongConfirm is the denial of a tier-3 call whose confirmation was not
// the raw tool name.
var ErrWrongConfirm = errors.New("the confirmation was not the tool's name")

// Judge turns the client's answer into the gate's. Anything but an
// accepted form with a known decision (and, at tier 3, the exact raw tool
// name in confirm) denies. The answer carries no arguments: it can only
// approve the call it was asked about.
func Judge(q *host.Question, res *mcp.ElicitResult) host.Answer {
	if res == nil || res.Action != "accept" {
		action := "no answer"
		if res != nil {
			action = bound(res.Action, 20)
		}
		return host.Answer{Reason: "the person did not allow it (" + action + ")"}
	}
	decision, _ := res.Content["decision"].(string)
	if q.Decision.Tier == decide.T3 && decision != DecisionDeny {
		if confirm, _ := res.Content["confirm"].(string); confirm != q.Tool.Name {
			return host.Answer{Reason: "denied: " + ErrWrongConfirm.Error()}
		}
	}
	for _, d := range decisionScopes {
		if decision == d.answer && allows(q.Scopes, d.scope) {
			return host.Answer{Approve: true, Scope: d.scope}
		}
	}
	return host.Answer{Reason: "the person denied it"}
}

func allows(scopes []decide.Scope, s decide.Scope) bool {
	for _, x := range scopes {
		if x == s {
			return true
		}
	}
	return false
}
