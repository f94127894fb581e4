package serve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// approvalInput is the id of mcphost's question in an input-required
// result.
const approvalInput = "mcphost-approval"

// callState is what an input-required result's requestState binds the
// answer to: this session, this tool, these exact arguments, for a while.
type callState struct {
	// Kind is stateApprove for the gate's own question, stateRelay for a
	// server's question relayed from a parked call (park.go): a state of
	// one kind is never taken for the other.
	Kind     string `json:"k"`
	Session  string `json:"s"`
	Server   string `json:"v"`
	Tool     string `json:"t"`
	ArgsHash string `json:"a"`
	// Def is the definition hash of the tool as it was asked about: an
	// answer approves that definition only, never one the server listed
	// since.
	Def     string `json:"d,omitempty"`
	Expires int64  `json:"e"` // unix seconds
	// Nonce makes each question's state unique, so that its answer is
	// used once: a replay of the same answer is another call.
	Nonce string `json:"n"`
	// Approval is the approval id of the call held for the approval page
	// (stateURL only).
	Approval string `json:"p,omitempty"`
}

// seal signs st with the server's key: the client echoes it back and can
// neither read meaning into it nor forge one for another call.
func (s *Server) seal(st callState) string {
	b, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, s.key)
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// unseal returns the state sealed in token, if the signature holds.
func (s *Server) unseal(token string) (callState, bool) {
	var st callState
	body, sig, ok := strings.Cut(token, ".")
	if !ok {
		return st, false
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return st, false
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(b)
	if !hmac.Equal(got, mac.Sum(nil)) || json.Unmarshal(b, &st) != nil {
		return st, false
	}
	return st, true
}

// inputRequired is the first round of a call that needs a person, for a
// client that speaks 2026-07-28: the question as an input request, with a
// request state bound to this exact call. Nil when the call needs no one
// now (the gate decides again when it runs).
func (s *Server) inputRequired(sess *session, e *export, args json.RawMessage) *mcp.CallToolResult {
	t, ok := s.o.Catalog.Tool(e.server, e.tool)
	if !ok {
		return nil
	}
	d, err := sess.gate.Explain(e.server, e.tool, args)
	if err != nil || d.Verdict != decide.Ask {
		return nil
	}
	if s.o.MayApprove != nil && !s.o.MayApprove(d.Tier, audit.ChannelElicitation) {
		return nil // the form may not approve it: never shown there (asker.outOfBand)
	}
	if s.routeOf(e.server, e.tool, d.Tier) != nil {
		return nil // routed to an approver group: never shown to the caller's form (team.go)
	}
	q := &host.Question{Server: e.server, Trusted: s.o.Trusted(e.server), Tool: t, Args: args, Decision: d,
		Scopes: decide.AllowedScopes(d), Changed: sess.gate.Changed(t)}
	if q.Changed {
		q.ChangedFields = sess.gate.ChangedFields(t) // the chat's words, "new tool" included
	}
	state := s.seal(callState{Kind: stateApprove, Session: sess.client.Session, Server: e.server, Tool: e.tool,
		ArgsHash: decide.ArgsHash(args), Def: t.Hash, Expires: time.Now().Add(s.o.AskTimeout).Unix(), Nonce: rand.Text()})
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{approvalInput: Elicitation(q)}, RequestState: state}
}

// RequestStates is where replicas share what request states need
// (Options.RequestStates).
type RequestStates interface {
	// Key is the key that seals request states, every replica's.
	Key() []byte
	// Spend records nonce as spent until at least expires and reports
	// whether it was unspent, over every replica.
	Spend(nonce string, expires time.Time) (bool, error)
}

// spend marks st's answer used and reports whether it was still unused.
// Spent states are kept until they expire: in the store the replicas
// share, when there is one (an error there spends nothing: the answer is
// refused), else in this process's memory.
func (s *Server) spend(st callState) bool {
	if s.o.RequestStates != nil {
		fresh, err := s.o.RequestStates.Spend(st.Nonce, time.Unix(st.Expires, 0))
		return err == nil && fresh
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().Unix()
	for n, exp := range s.spent {
		if now > exp {
			delete(s.spent, n)
		}
	}
	if _, used := s.spent[st.Nonce]; used {
		return false
	}
	s.spent[st.Nonce] = st.Expires
	return true
}

// boundTo reports whether st was sealed for this client session, this
// tool and exactly these arguments.
func (st callState) boundTo(sess *session, e *export, args json.RawMessage) bool {
	return st.Session == sess.client.Session && st.Server == e.server && st.Tool == e.tool && st.ArgsHash == decide.ArgsHash(args)
}

// answered returns the answer a client sent with its second round, or why
// it does not count: it must come with a request state that mcphost
// sealed (st, as the handler unsealed it) for this session, this tool and
// exactly these arguments, not expired. Any other answer approves nothing.
func (s *Server) answered(sess *session, e *export, args json.RawMessage, st callState, sealed bool, responses mcp.InputResponseMap) *provided {
	pr := &provided{}
	res, isElicit := responses[approvalInput].(*mcp.ElicitResult)
	switch {
	case !sealed:
		pr.reason = "the answer came without mcphost's request state; call again to be asked"
	case st.Kind != stateApprove:
		pr.reason = "the answer was given to another question; call again to be asked about this call"
	case !st.boundTo(sess, e, args):
		pr.reason = "the answer was given for another call; call again to be asked about this one"
	case time.Now().Unix() > st.Expires:
		pr.reason = "the answer came too late; call again to be asked"
	case !isElicit:
		pr.reason = "no answer to mcphost's question came with the call"
	case !s.spend(st):
		pr.reason = "that answer was used already; call again to be asked"
	default:
		pr.res, pr.def = res, st.Def
	}
	return pr
}

// redefined returns, for an answer sealed for this very call but about a
// definition of the tool other than the one listed now, a new first round
// about the definition as it is now (what changed included): the answer
// approves nothing, and the person is asked about what would run. Nil when
// the answer is about the current definition (or is not for this call, which
// answered refuses).
func (s *Server) redefined(sess *session, e *export, args json.RawMessage, st callState, sealed bool) *mcp.CallToolResult {
	if !sealed || st.Kind != stateApprove || !st.boundTo(sess, e, args) {
		return nil
	}
	if t, ok := s.o.Catalog.Tool(e.server, e.tool); ok && t.Hash == st.Def {
		return nil
	}
	return s.inputRequired(sess, e, args)
}

// operationRound is, for a read or a prompts/get (op: host.ResourceReadTool
// or host.PromptGetTool) of a 2026-07-28 client whose questions go to its
// form, the input-required round trip a call has (inputRequired,
// answered): a first request the gate would ask about gets the question as
// an input request (requests) with a sealed state bound to this session,
// server, request and exact arguments; the retry's answer goes with the
// returned asker (a with it) to the gate's question, or, when its state is
// not mcphost's, refuses (err). Otherwise a is returned as it is and the gate
// decides as for any client.
func (s *Server) operationRound(sess *session, a *asker, server, op string, args json.RawMessage, state string, responses mcp.InputResponseMap) (_ *asker, requests mcp.InputRequestMap, sealedState string, err error) {
	if a == nil || !a.multiRoundTrip() || a.route() != routeElicit {
		return a, nil, "", nil
	}
	e := &export{server: server, tool: op}
	if state == "" && responses == nil {
		d, t, err := sess.gate.ExplainOperation(server, op, args)
		if err != nil || d.Verdict != decide.Ask || s.routeOf(server, op, d.Tier) != nil {
			return a, nil, "", nil
		}
		q := &host.Question{Server: server, Trusted: s.o.Trusted(server), Tool: t, Args: args, Decision: d, Scopes: decide.AllowedScopes(d)}
		st := s.seal(callState{Kind: stateApprove, Session: sess.client.Session, Server: server, Tool: op,
			ArgsHash: decide.ArgsHash(args), Def: t.Hash, Expires: time.Now().Add(s.o.AskTimeout).Unix(), Nonce: rand.Text()})
		return a, mcp.InputRequestMap{approvalInput: Elicitation(q)}, st, nil
	}
	st, sealed := s.unseal(state)
	if state != "" && !sealed {
		return a, nil, "", errors.New("mcphost: the request state is not one mcphost gave, so nothing was read; ask again without it to be asked")
	}
	return a.with(s.answered(sess, e, args, st, sealed, responses)), nil, "", nil
}
