package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the arguments written into a question. A form shows every
// argument or approves nothing: each value is cut at MaxShownValue with its
// full size named, and arguments with more than MaxShownMembers values,
// nested deeper than MaxShownDepth, or over MaxShownArgs once cut, can only
// be denied there.
const (
	MaxShownArgs    = 16 << 10
	MaxShownValue   = 512
	MaxShownMembers = 64
	MaxShownDepth   = 8
	maxShownKey     = 256
)

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

// asker is the host.Asker of one request of a client: its session's route
// to a person, and the answer the client sent with the request, if any.
// The handler passes it to the gate with the call (host.Call.Asker,
// host.Asking), so the gate asks the request's own asker and nothing
// reaches it through the context. A session's own asker has no answer.
type asker struct {
	s  *Server
	ss *mcp.ServerSession
	// answer is the answer that came with the request (multi round-trip),
	// or why none counts; nil when none came.
	answer *provided
	// page, when set, is where Ask leaves the URL elicitation of the
	// approval page that a 2026-07-28 client's request answers with
	// (offeringPage); nil: this request offers none.
	page *pageRound
}

// with returns the asker of a request that came with the answer p.
func (a *asker) with(p *provided) *asker {
	c := *a
	c.answer = p
	return &c
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
	switch a.s.o.AskRoute {
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

// provided is an answer that came with the call, or why none counts.
type provided struct {
	res    *mcp.ElicitResult
	def    string // the definition hash the answer was given about
	reason string // set when the answer cannot be used
}

// Ask routes q to the client's elicitation or the approver. The answer's
// channel (Answer.Via) is the route's: the client's form, or mcphost
// approve — whatever the answer itself carried.
func (a *asker) Ask(ctx context.Context, q *host.Question) (host.Answer, error) {
	if a.s.questionRoute(q) != nil {
		// Routed to an approver group: neither the caller's form (nor an
		// answer that came with the request) nor their approver may
		// answer it; the gate holds it for the group's team page.
		return host.Answer{}, errRoutedAsk
	}
	if p := a.answer; p != nil {
		if p.reason != "" {
			return host.Answer{Reason: p.reason}, nil
		}
		if q.Tool == nil || q.Tool.Hash != p.def {
			// The server listed the tool anew since the question: the
			// answer was about another definition.
			return host.Answer{Reason: "the tool's definition changed since the question was answered; call again to be asked about it as it is now"}, nil
		}
		ans := Judge(q, p.res)
		ans.Definition = p.def // the gate binds it too (host.Answer)
		ans.Via = audit.ChannelElicitation
		return ans, nil
	}
	switch a.route() {
	case routeElicit:
		if !a.formMay(q) {
			return a.outOfBand(ctx, q)
		}
		if a.multiRoundTrip() && host.IsOperation(q.Tool) {
			// A read, prompts/get or subscription has no round of its
			// own to ask in: the approver, when one waits, else no one
			// (the refusal says how to approve it).
			if a.s.o.AskRoute != AskElicit && a.s.o.Approver != nil && a.s.o.Approver.Waiting() {
				return viaApprover(a.s.o.Approver.Ask(ctx, q))
			}
			return host.Answer{}, host.ErrNoPerson
		}
		if a.multiRoundTrip() {
			// The question went out before the call (see inputRequired);
			// one that arises only now cannot be asked in this round.
			return host.Answer{Reason: "the call needed approval only as it ran; call it again to be asked"}, nil
		}
		ans, err := a.elicit(ctx, q)
		ans.Via = audit.ChannelElicitation
		return ans, err
	case routeApprover:
		return viaApprover(a.s.o.Approver.Ask(ctx, q))
	}
	return host.Answer{}, host.ErrNoPerson
}

// elicit asks the client's person with a form bound to this one call. The
// answer's channel is left to Ask, which names it for every answer of the
// route, those that say no answer came too.
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

// formMay reports whether an answer of the host's form may approve q
// (askVia): a host can fill in its own forms, so by default the form does
// not approve a tier-3 call.
func (a *asker) formMay(q *host.Question) bool {
	return a.s.o.MayApprove == nil || a.s.o.MayApprove(q.Decision.Tier, audit.ChannelElicitation)
}

// elicitsURL reports whether the client declared URL elicitation.
func (a *asker) elicitsURL() bool {
	p := a.ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil && p.Capabilities.Elicitation.URL != nil
}

// errFormMayNot is why a call the host's form may not approve was not
// asked about there.
var errFormMayNot = fmt.Errorf("%w: the host's form may not approve this call (askVia), and no channel that may was there", host.ErrNoPerson)

// outOfBand asks about a call the host's form may not approve through a
// channel the host cannot answer: a waiting approver, or the approval page
// opened by a URL elicitation (when the client declares one and a page
// runs; for a 2026-07-28 client, only a request that may answer with it,
// page.go). Otherwise the call is not shown to the form at all: the gate holds
// it, and the refusal names where to approve it.
func (a *asker) outOfBand(ctx context.Context, q *host.Question) (host.Answer, error) {
	o := a.s.o
	if o.AskRoute != AskElicit && o.Approver != nil && o.Approver.Waiting() {
		return viaApprover(o.Approver.Ask(ctx, q))
	}
	if !a.elicitsURL() || a.multiRoundTrip() && a.page == nil || q.Hold == nil || o.Later == nil ||
		o.MayApprove != nil && !o.MayApprove(q.Decision.Tier, audit.ChannelWeb) {
		return host.Answer{}, errFormMayNot
	}
	ap := q.Hold()
	if ap.ID == "" {
		return host.Answer{}, errFormMayNot // not held: no page can answer it
	}
	link := a.s.pageLink(ap.ID)
	if link == "" {
		return host.Answer{}, errFormMayNot
	}
	if a.multiRoundTrip() {
		// Nothing can be sent to the client during its call: the call is
		// refused as held, and the handler answers the request with the
		// URL elicitation instead (pageRequest).
		*a.page = pageRound{ap: ap, link: link, msg: pageMessage(q)}
		return host.Answer{}, errFormMayNot
	}
	return a.urlElicit(ctx, q, ap, link)
}

// errAnsweredOnPage: the person answered on the approval page; the gate
// takes the answer from where the call is held.
var errAnsweredOnPage = errors.New("answered on mcphost's approval page")

// urlElicit sends the client a URL elicitation (elicitation/create, mode
// "url") pointing at the approval page of the held call ap, waits for the
// person to answer there, and then says so with
// notifications/elicitation/complete. The host's own answer to the
// elicitation approves nothing: it only says whether the person went to
// the page.
func (a *asker) urlElicit(ctx context.Context, q *host.Question, ap later.Approval, link string) (host.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, a.s.o.AskTimeout)
	defer cancel()
	res, err := a.ss.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: pageMessage(q), URL: link, ElicitationID: ap.ID})
	if err != nil || res == nil || res.Action != "accept" {
		// Not opened: the call stays held for approval on the page or
		// with `mcphost approve`.
		return host.Answer{}, errFormMayNot
	}
	select {
	case <-a.s.o.Later.Answered(ap.ID):
		_ = a.ss.NotifyElicitationComplete(context.WithoutCancel(ctx), &mcp.ElicitationCompleteParams{ElicitationID: ap.ID})
		return host.Answer{}, errAnsweredOnPage
	case <-ctx.Done():
		return host.Answer{}, fmt.Errorf("%w: %w", host.ErrNoPerson, host.ErrNoAnswer)
	}
}

// Elicitation is the question about q as an elicitation/create form: the
// message names the server, the raw tool name, class and tier, every reason
// and every argument (showArgs: escaped, the shortest first, each long
// value cut with its size named); the form has a required enum "decision"
// and, at tier 3, a required "confirm" that must be the raw tool name. When
// the arguments cannot all be shown, the only decision offered is deny, and
// the message says where the call can be approved in full.
func Elicitation(q *host.Question) *mcp.ElicitParams {
	enum := []string{}
	shown := showArgs(q.Args).whole == ""
	for _, d := range decisionScopes {
		if shown && allows(q.Scopes, d.scope) {
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
	if q.Decision.Tier == decide.T3 && shown {
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
	switch {
	case host.OwnWords(q.Tool):
		// A stand-in for a read or a prompt: the words are mcphost's.
		fmt.Fprintf(&b, "What it does (mcphost's words): %s\n", q.Tool.Description)
	case q.Tool.Title != "" && !q.Changed:
		fmt.Fprintf(&b, "The server calls it “%s” (the server's words).\n", bound(q.Tool.Title, 200))
	}
	if q.Changed {
		b.WriteString("Its definition changed since it was accepted")
		if len(q.ChangedFields) > 0 {
			b.WriteString(" (" + strings.Join(q.ChangedFields, ", ") + ")")
		}
		b.WriteString("; allowing this call accepts the new definition.\n")
	}
	// Only the reasons to ask are listed as such; what lowers the risk
	// (it only reads, it touches local data only) stands apart.
	ask, favour := d.Split()
	b.WriteString("Why mcphost asks:\n")
	for _, r := range ask {
		b.WriteString("- " + r.Text + "\n")
	}
	if len(favour) > 0 {
		b.WriteString("In its favour:\n")
		for _, r := range favour {
			b.WriteString("- " + r.Text + "\n")
		}
	}
	flags := decide.PoisonFlags(q.Tool.Description)
	if flags != nil {
		b.WriteString("! Its description gives the model orders (" + strings.Join(flags, ", ") + "); the model may be acting on it.\n")
	}
	if q.Changed || flags != nil {
		// The model was not shown this text; the person decides on it.
		b.WriteString("Its description now (the server's words):\n" + sanitize.Truncate(sanitize.Text(q.Tool.Description), MaxDescription) + "\n")
	}
	args := showArgs(q.Args)
	hash := decide.ArgsHash(q.Args)
	b.WriteString("Arguments (argument hash " + hash[:min(len(hash), 12)] + "), the shortest first:\n")
	b.WriteString(args.text)
	if args.whole == "" && d.Tier == decide.T3 {
		b.WriteString("\nThis call is elevated: to allow it, type the tool name " + sanitize.Name(q.Tool.Name) + " in confirm.")
	}
	if args.whole != "" {
		b.WriteString("\nThis form cannot show every argument (" + args.whole + "), so it can only deny the call. " + approveInFull)
	}
	return b.String()
}

// approveInFull says where a call whose arguments a form cannot show can
// be approved: the approver shows arguments in full.
const approveInFull = "To allow it, approve it where the arguments are shown in full: run `mcphost approve` in a terminal " +
	"and serve with --ask-via approver, or add an allow rule for it to mcphost's configuration."

// shownArgs are a question's arguments as the form shows them; whole is
// why they cannot all be shown ("" when they are).
type shownArgs struct {
	text, whole string
}

// leaf is one value of the arguments: where it is and its JSON text.
type leaf struct{ path, value string }

// showArgs writes every value of args on a line of its own, as its path
// ("user.name", "items[2]") and its JSON, escaped to one line, the shortest
// first so that a long value cannot push a short, decisive one out of
// sight; a value longer than MaxShownValue is cut with its full size named.
// Arguments that are not JSON are shown as text, cut at MaxShownArgs.
func showArgs(args json.RawMessage) shownArgs {
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		out := shownArgs{text: "  " + sanitize.Truncate(sanitize.Line(string(args)), MaxShownArgs) + "\n"}
		if len(args) > MaxShownArgs {
			out.whole = fmt.Sprintf("they are not JSON and %d bytes long", len(args))
		}
		return out
	}
	found, over := host.ArgLeaves(v, host.ArgLimits{Depth: MaxShownDepth, Values: MaxShownMembers, Name: maxShownKey})
	var whole string
	switch {
	case over.Depth:
		whole = fmt.Sprintf("they are nested deeper than %d levels", MaxShownDepth)
	case over.Values:
		whole = fmt.Sprintf("they hold more than %d values", MaxShownMembers)
	case over.Name > 0:
		whole = fmt.Sprintf("a name is %d bytes long", over.Name)
	}
	leaves := make([]leaf, 0, len(found))
	for _, l := range found {
		j, _ := json.Marshal(l.Value)
		leaves = append(leaves, leaf{path: l.Path, value: string(j)})
	}
	slices.SortStableFunc(leaves, func(a, b leaf) int {
		return cmp.Or(cmp.Compare(len(a.value), len(b.value)), strings.Compare(a.path, b.path))
	})
	var b strings.Builder
	for _, l := range leaves {
		val := sanitize.Line(l.value)
		if len(val) > MaxShownValue {
			cut := MaxShownValue
			for cut > 0 && !utf8.RuneStart(val[cut]) {
				cut--
			}
			val = fmt.Sprintf("%s… (%d bytes; %d shown)", val[:cut], len(l.value), cut)
		}
		if l.path == "" {
			b.WriteString("  " + val + "\n")
		} else {
			name, _ := json.Marshal(l.path)
			b.WriteString("  " + sanitize.Line(string(name)) + ": " + val + "\n")
		}
	}
	if whole == "" && b.Len() > MaxShownArgs {
		whole = fmt.Sprintf("they take %d bytes even with each value cut, over %d", b.Len(), MaxShownArgs)
	}
	if whole != "" {
		return shownArgs{text: sanitize.Truncate(b.String(), MaxShownArgs), whole: whole}
	}
	return shownArgs{text: b.String()}
}

// ErrWrongConfirm is the denial of a tier-3 call whose confirmation was not
// the raw tool name.
var ErrWrongConfirm = errors.New("the confirmation was not the tool's name")

// Judge turns the client's answer into the gate's. Anything but an
// accepted form with a known decision (and, at tier 3, the exact raw tool
// name in confirm) denies, and so does any answer to a question whose
// arguments the form could not show in full. The answer carries no arguments: it can only
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
	if decision != DecisionDeny {
		if why := showArgs(q.Args).whole; why != "" {
			// The form could not show every argument, so it offered
			// only deny: an allow approves what the person never saw.
			return host.Answer{Reason: "denied: the form could not show every argument (" + why + "). " + approveInFull}
		}
	}
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

// viaApprover marks an answer of the approver socket as such: the page's
// (web), the page's with a passkey the broker verified (web+passkey), or
// else `mcphost approve`'s. The broker sets those itself; nothing else an
// answer says counts.
func viaApprover(ans host.Answer, err error) (host.Answer, error) {
	switch ans.Via {
	case audit.ChannelWeb, audit.ChannelWebPasskey:
	default:
		ans.Via = audit.ChannelApprove
	}
	return ans, err
}

func allows(scopes []decide.Scope, s decide.Scope) bool {
	for _, x := range scopes {
		if x == s {
			return true
		}
	}
	return false
}
