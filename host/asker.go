package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/later"
)

// Question is what the gate asks a person about one call.
type Question struct {
	Server   string // the server's config name
	Trusted  bool
	Tool     *client.Tool
	Args     json.RawMessage
	Decision decide.Decision
	// Scopes are the approvals the person may give; tier T3 never offers
	// ScopeAlways.
	Scopes []decide.Scope
	// Changed reports that the tool's definition differs from the one the
	// person approved or first saw, or that the tool is new (it appeared
	// after its server's first listing): approving the call accepts the
	// definition shown, Tool.Hash, and nothing else.
	Changed bool
	// PinnedHash is the definition hash that was pinned, when Changed
	// (NewToolPin for a new tool).
	PinnedHash string
	// ChangedFields name the parts of the definition that changed
	// (description, inputSchema, annotations …) when the change happened
	// while this session ran; [NewToolField] for a new tool; empty when it
	// happened between runs.
	ChangedFields []string
	// TrustLifts reports that the call asks only because its server is not
	// trusted (Result.TrustLifts): a dialog may offer trusting the server,
	// as a deliberate choice of its own.
	TrustLifts bool
	// Client is the program whose call this is (GateOptions.Client: serve's
	// client, by its clientInfo), nil when the gate names none. Its words
	// are the client's: sanitize before drawing them.
	Client *audit.Client
	// Hold, when the gate keeps calls for later approval
	// (GateOptions.Later), holds this call and returns its approval, the
	// same one however often it is called: an asker that sends the person
	// elsewhere (a link to the approval page) names it. An approval
	// without an ID means the call could not be held (its record or the
	// store failed): there is nothing to name. Nil otherwise.
	Hold func() later.Approval
}

// Answer is the person's reply.
//
// An approval approves the call only under the definition of the tool it
// was given for: the gate checks, after Ask returns, that the tool is
// still listed with that definition, and takes an approval given for any
// other as no approval at all — it decides the call again from the start,
// and the next question shows the definition as changed.
type Answer struct {
	Approve bool
	Scope   decide.Scope // how far the approval reaches; must be one of Question.Scopes
	// Reason is the person's words to the model when they deny.
	Reason string
	// Args, when set, replaces the call's arguments: the edited call is
	// decided again from the start.
	Args json.RawMessage
	// Definition is the definition hash (client.Tool.Hash) of the tool as
	// the person was shown it when they answered; "" means the one of the
	// question Ask was given. An asker whose answer comes back out of band
	// — from a sealed request state, the approver, a web page — sets it to
	// the hash of the question the person actually saw, which is not
	// necessarily the question this Ask is about: an approval whose
	// Definition differs from the question's Tool.Hash is never taken as
	// one.
	Definition string
	// Via is the way the answer reached the asker (audit.Channel): set by
	// the asker's code from where it took the answer — never from anything
	// the answer's sender said — and recorded with the decision. An asker
	// that answers only one way says so with a Channel method instead
	// (ChannelAsker), and the gate takes that whatever Via says. Empty is
	// recorded as audit.ChannelUnknown.
	Via audit.Channel
	// By is the person who answered, when the asker knows them by a login
	// of their own (serve's team approval page); nil: the person at this
	// machine. It is recorded as the approval record's approver.
	By *audit.Person
}

// ChannelAsker is an Asker whose answers all come one way. The gate
// records its Channel for every answer it gives, whatever Answer.Via
// says: an asker cannot be made to claim another.
type ChannelAsker interface {
	Asker
	Channel() audit.Channel
}

// channelOf is the channel of ans, given by asker: the asker's own when it
// has one, else the answer's when it is a channel at all, else unknown.
func channelOf(asker Asker, ans Answer) audit.Channel {
	if c, ok := asker.(ChannelAsker); ok {
		return c.Channel()
	}
	if ans.Via.Known() {
		return ans.Via
	}
	return audit.ChannelUnknown
}

// Asker asks a person about a call. Ask must honour ctx; an error (or a
// cancelled context) counts as a denial.
type Asker interface {
	Ask(ctx context.Context, q *Question) (Answer, error)
}

// HeadlessAsker refuses every question: with no person to ask, a call that
// needs approval does not run.
type HeadlessAsker struct{}

// ErrNoPerson is the reason a HeadlessAsker gives.
var ErrNoPerson = errors.New("the call needs approval and no one can be asked")

// ErrNoAnswer is the error of an asker whose question no one answered in
// time. The call counts as denied; with GateOptions.Later it is held for
// an approval that comes later.
var ErrNoAnswer = errors.New("no answer came in time")

func (HeadlessAsker) Ask(context.Context, *Question) (Answer, error) { return Answer{}, ErrNoPerson }

// Channel: a HeadlessAsker's refusals are headless.
func (HeadlessAsker) Channel() audit.Channel { return audit.ChannelHeadless }

// YesAsker approves each question once (for `call --yes`): it never grants
// more than the one call, and the gate never asks it about a denial.
type YesAsker struct{}

func (YesAsker) Ask(_ context.Context, q *Question) (Answer, error) {
	return Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelYes}, nil
}

// Channel: a YesAsker's approvals are --yes.
func (YesAsker) Channel() audit.Channel { return audit.ChannelYes }

// Failer is the part of testing.TB the ScriptAsker needs.
type Failer interface {
	Helper()
	Errorf(format string, args ...any)
}

// ScriptAsker answers questions from a list, in order, for tests. An
// unexpected question (the list is used up, or the next answer is for
// another tool) fails the test; Done reports answers never asked for. An
// answer without Via comes through audit.ChannelScript; a test that
// stands in for another asker sets Via.
type ScriptAsker struct {
	T Failer

	mu      sync.Mutex
	answers []ScriptedAnswer
	asked   []*Question
}

// ScriptedAnswer is one expected question, by "server/tool", and its answer.
type ScriptedAnswer struct {
	Tool   string
	Answer Answer
}

// NewScriptAsker returns an asker that expects exactly these questions.
func NewScriptAsker(t Failer, answers ...ScriptedAnswer) *ScriptAsker {
	return &ScriptAsker{T: t, answers: answers}
}

func (s *ScriptAsker) Ask(_ context.Context, q *Question) (Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, q)
	ref := q.Tool.Ref()
	if len(s.answers) == 0 {
		s.T.Helper()
		s.T.Errorf("unexpected question about %s (no answers left)", ref)
		return Answer{}, fmt.Errorf("unexpected question about %s", ref)
	}
	next := s.answers[0]
	if next.Tool != ref {
		s.T.Helper()
		s.T.Errorf("question about %s, want one about %s", ref, next.Tool)
		return Answer{}, fmt.Errorf("unexpected question about %s", ref)
	}
	s.answers = s.answers[1:]
	if next.Answer.Via == "" {
		next.Answer.Via = audit.ChannelScript
	}
	return next.Answer, nil
}

// Asked returns the questions asked so far.
func (s *ScriptAsker) Asked() []*Question {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Question(nil), s.asked...)
}

// Done fails the test if scripted answers were never asked for.
func (s *ScriptAsker) Done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.answers {
		s.T.Helper()
		s.T.Errorf("expected a question about %s that never came", a.Tool)
	}
}
