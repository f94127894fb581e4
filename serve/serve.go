package serve

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalog is what serve needs of the client: the gate's view, every tool,
// and a start that returns once each server is ready or has failed.
// *client.Manager is one.
type Catalog interface {
	host.Catalog
	Tools() []*client.Tool
	Start(ctx context.Context)
}

// Approver is a person's own approver (`mcphost approve`) that serve can
// hand a question to when the client cannot ask. Waiting reports whether
// one is connected now; Ask is only called while it is.
type Approver interface {
	host.Asker
	Waiting() bool
}

// AskRoute (serve's --ask-via) forces where serve's questions go; the zero
// value tries each in order. Which of the channels a question reaches may
// approve the call is config.AskVia's to say (Options.MayApprove).
type AskRoute string

const (
	AskAuto     AskRoute = ""         // elicitation, else a waiting approver, else refuse
	AskElicit   AskRoute = "elicit"   // the client's elicitation only
	AskApprover AskRoute = "approver" // the approver only
	AskDeny     AskRoute = "deny"     // ask no one: refuse every call that needs a person
)

// ParseAskRoute reads the --ask-via flag.
func ParseAskRoute(s string) (AskRoute, error) {
	switch v := AskRoute(s); v {
	case AskAuto, AskElicit, AskApprover, AskDeny:
		return v, nil
	case "auto":
		return AskAuto, nil
	}
	return "", fmt.Errorf("ask via %q: want auto, elicit, approver or deny", s)
}

// Options configure a Server.
type Options struct {
	Catalog Catalog
	Policy  *decide.Policy
	// Trusted reports whether the person trusts a server's annotations.
	Trusted func(server string) bool
	Audit   host.AuditLog // nil: only reads run
	Store   host.Store
	Pins    *host.Pins // shared with the manager's listing hook
	// Approver, if set, is asked when the client has no elicitation (or
	// AskRoute says so) and it is waiting.
	Approver Approver
	AskRoute AskRoute
	// NoPrefix exports raw tool and prompt names; the caller allows it
	// only when one server is served (names could collide otherwise).
	NoPrefix bool
	// ToolSearch is host.SearchNever (or ""), host.SearchAuto or
	// host.SearchAlways: whether the client is offered a search instead of
	// every tool (search.go).
	ToolSearch string
	// MaxTools is the most tools the client's host accepts (0: no cap);
	// SearchAuto searches past it.
	MaxTools int
	// ListWait bounds how long tools/list waits, counted from Start, for
	// the servers still starting that have no pinned definitions to offer
	// while no tool at all is ready to offer (default DefaultListWait);
	// with some ready, it waits at most a second. Tools that come later are
	// announced with list_changed. A server still starting whose
	// definitions are pinned is offered by them at once (early.go).
	ListWait time.Duration
	// AskTimeout bounds one elicitation (default 5 minutes): no answer in
	// time is a denial.
	AskTimeout time.Duration
	// SessionTimeout closes a 2025-11-25 HTTP session that sent no request
	// for this long (default DefaultSessionTimeout; http.go).
	SessionTimeout time.Duration
	// Instructions are sent to the client at initialize (servers waiting
	// for consent, for instance).
	Instructions string
	Version      string
	CallOptions  client.CallOptions
	// Observer, if set, sees every session's calls, asks and taint (the
	// serve process's one OpenTelemetry export): one export per process,
	// shared by every client session, as the audit log is.
	Observer host.Observer
	// Backoff and Sleep are passed to each session's gate (tests).
	Backoff func(attempt int) time.Duration
	Sleep   func(ctx context.Context, d time.Duration) error

	// MayTrust reports whether the person may trust a server at all (the
	// managed policy); nil: any. See host.GateOptions.MayTrust.
	MayTrust func(server string) bool

	// MayApprove is the "askVia" policy: which channels may approve a call
	// of each tier (host.GateOptions.MayApprove); nil: every channel. When
	// the host's form may not approve a call, serve does not show it the
	// form: it asks a waiting approver, or opens the approval page through
	// a URL elicitation, or holds the call.
	MayApprove func(decide.Tier, audit.Channel) bool
	// Later holds the calls no one approved (host.GateOptions.Later), one
	// store for every client session; nil: none is held.
	Later Later
	// Link returns the address of the approval page for a held call, ""
	// (or nil Link) when no page runs.
	Link func(approvalID string) string
	// OnHeld, if set, is told of each call newly held for later approval,
	// with the question about it: for an approval page to show it (and
	// answer it with AnswerLater, through audit.ChannelWeb). It must not block.
	OnHeld func(ap later.Approval, q *host.Question)
	// Notify, if set, tells the person that a call waits for them, naming
	// server and tool (the words are the server's: sanitize). It must not
	// block.
	Notify func(server, tool string)
	// Route, if set, says where the managed policy sends a call for
	// approval (team.go): a call it routes to a group is never asked of
	// its caller's form or approver, only held for the group's members on
	// the team page; nil routes none.
	Route func(server, tool string, tier decide.Tier) *Route
	// SessionState, if set, keeps the session state (grants "for this
	// session", taint) of each stateless client identity, by its key
	// (identity.key), in a store that replicas share (pgstore.Sessions),
	// so that a 2026-07-28 client is one session to every replica. Nil:
	// each replica keeps it in memory (sessionstate.go).
	SessionState func(key string) host.SessionState
	// RequestStates, if set, is the key that seals request states and
	// the nonces of those spent, shared by replicas (pgstore.RequestStates,
	// roundtrip.go), so that a 2026-07-28 client's answer may reach another
	// replica than its question, and is used once over all. Nil: this
	// process's own key and memory.
	RequestStates RequestStates
}

// laterPoster is an approver that can show a call held for later
// approval (approver.Broker.Post).
type laterPoster interface {
	Post(id string, q *host.Question, expires time.Time, answer func(host.Answer) error) error
}

// Server is the gate as an MCP server. Create it with New, then Start it
// and Run it on a transport (or serve HTTP with Handler).
//
// Lock order. Of serve's locks only two pairs are ever held together, each
// taken in this order:
//
//	syncMu → mu                      (sync, announce; offer under sync)
//	fx.subs.op → fx.subs.mu          (hold, watch, release, resubscribe)
//
// Every other lock is a leaf, held with no other lock of serve's and
// released before anything that takes one: runMu (relay.go), parkMu and
// each parked call's mu (never held together: abandonIdle collects under
// parkMu, then locks each call's mu on its own), fwdMu (forward.go,
// completion.go), drain.mu, each running call's logMu and team.mu (team.go,
// under which only the later store's own lock is taken). fx.subs.op is
// held across the server's answer to a subscription; no other lock is held
// across a request to a server or a client. syncMu, mu and fwdMu are held
// across calls into the SDK server (list changes, whose notifications it
// sends later on a timer; Sessions), which take the SDK's lock only and
// never call back into serve; syncMu across the explain gate (which has no
// callbacks) and mu across making a session's gate. No gate is called
// under runMu, parkMu or a parked call's mu, the locks a session gate's
// callbacks take (OnDecision: begin, abandonIdle).
type Server struct {
	o   Options
	srv *mcp.Server
	// explain answers what a tool's effective annotations are; it belongs
	// to no client session and runs nothing.
	explain *host.Gate

	key       []byte        // signs the request state of questions (roundtrip.go)
	started   chan struct{} // closed when Start was called
	startedAt time.Time     // set before started is closed
	startOnce sync.Once
	stop      context.CancelFunc // ends what Start started
	wg        sync.WaitGroup     // Start's goroutines
	ready     chan struct{}      // closed when every server is ready or failed

	tickMu sync.Mutex
	tick   chan struct{} // closed and replaced when the servers' states may have changed (early.go)

	syncMu   sync.Mutex         // one sync or announce at a time; search.on and search.sig
	mu       sync.Mutex         // the maps below, search.found; after syncMu
	exported map[string]*export // model-facing name → tool, every one served
	listed   map[string]*export // those the SDK lists: all, or those found (search.go)
	search   searchState
	sessions map[*mcp.ServerSession]*session
	idents   map[identity]*session // stateless HTTP clients (statelessSession)
	spent    map[string]int64      // nonces of answered questions → expiry (roundtrip.go)
	// heldBy is the gate of each call held for later approval, by its
	// approval id: the gate that records the answer (AnswerLater).
	heldBy map[string]*host.Gate
	// answers answers the calls held by another replica (AnswerLater).
	answers *host.Gate
	// team keeps whose each held call is and where it is routed (team.go).
	team teamHeld
	// teamPage is set once NewTeamPage made the team approval page, where
	// a caller with a token answers their own held calls.
	teamPage atomic.Bool

	runMu    sync.Mutex
	inflight map[string][]*running // upstream server → the calls running there (relay.go)

	parkMu   sync.Mutex
	parked   map[string]*parked // id → a call waiting on its client's answer (park.go)
	parkedBy map[*session]int   // how many each client has parked

	fwdMu    sync.Mutex
	fwd      map[string]forwarded // server → its prompts and resources (forward.go)
	uriOwner map[string]string    // resource URI → the server that offers it
	fx       forwardState         // templates, completions, subscriptions (forward.go)

	drain *drain // what Shutdown cancels and waits for (drain.go)

	// listChanges counts the syncs that changed what clients are offered,
	// each one a notifications/tools/list_changed (tests).
	listChanges atomic.Int64
	// listWaiting, if set, is called when a tools/list starts waiting for
	// servers still starting (tests).
	listWaiting func()
}

// export is one tool as offered to clients.
type export struct {
	server, tool string // config name and raw tool name
	def          *mcp.Tool
	sig          string // what the client was shown; a change re-adds it
}

// New returns a server in front of o.Catalog.
func New(o Options) *Server {
	if o.ListWait <= 0 {
		o.ListWait = DefaultListWait
	}
	if o.AskTimeout <= 0 {
		o.AskTimeout = 5 * time.Minute
	}
	if o.Trusted == nil {
		o.Trusted = func(string) bool { return false }
	}
	if o.Pins == nil {
		o.Pins = host.NewPins(o.Store)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	key := []byte(rand.Text())
	if o.RequestStates != nil {
		key = o.RequestStates.Key()
	}
	s := &Server{o: o, key: key, started: make(chan struct{}), ready: make(chan struct{}), tick: make(chan struct{}),
		exported: map[string]*export{}, listed: map[string]*export{}, sessions: map[*mcp.ServerSession]*session{}, idents: map[identity]*session{},
		fwd: map[string]forwarded{}, uriOwner: map[string]string{}, spent: map[string]int64{}, heldBy: map[string]*host.Gate{},
		inflight: map[string][]*running{}, parked: map[string]*parked{}, parkedBy: map[*session]int{}, drain: newDrain()}
	s.explain = host.NewGate(host.GateOptions{Catalog: o.Catalog, Policy: o.Policy, Trusted: o.Trusted,
		Mode: decide.Interactive, Pins: o.Pins, SessionID: "serve-export"})
	// Logging: a client may set its level; servers' messages during its
	// calls are relayed at or above it (RelayLog).
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}}
	if _, ok := o.Catalog.(Extras); ok {
		// Declared up front: servers' prompts and resources arrive after
		// initialize.
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	sopts := &mcp.ServerOptions{Instructions: o.Instructions, Capabilities: caps, SetCacheable: private}
	s.declare(caps, sopts)
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "mcphost", Title: "mcphost gate", Version: o.Version}, sopts)
	s.srv.AddReceivingMiddleware(s.tracked, s.waitForList)
	return s
}

// private marks every cacheable result serve sends (the lists, a read)
// for the requesting client only: what serve lists differs per client (the
// effective hints, changed-tool notes, what a search found) and a read
// passes that client's gate, so no intermediary or other client may serve
// it from a cache.
func private(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" }

// Start starts the servers in the background and keeps the exported tools
// in step with them until ctx ends or Close is called. It returns at once:
// a client's initialize is never kept waiting for a server.
func (s *Server) Start(ctx context.Context) {
	s.startOnce.Do(func() {
		ctx, s.stop = context.WithCancel(ctx)
		events, unsub := s.o.Catalog.Subscribe()
		s.startedAt = time.Now()
		close(s.started)
		s.wg.Go(func() {
			defer s.bump()
			defer close(s.ready)
			s.o.Catalog.Start(ctx)
			s.sync()
		})
		s.wg.Go(func() {
			defer unsub()
			for {
				select {
				case <-ctx.Done():
					return
				case e, ok := <-events:
					if !ok {
						return
					}
					if s.onEvent(ctx, e) {
						continue
					}
					s.sync()
					s.bump()
					if e.Kind == client.EventState && e.State == client.StateReady {
						s.onReady(ctx, e.Server)
					}
				}
			}
		})
	})
}

// Close stops what Start started and waits for it; the caller closes the
// catalog after it. It may be called more than once, and without Start.
func (s *Server) Close() {
	s.startOnce.Do(func() {}) // a Start after Close does nothing
	if s.stop != nil {
		s.stop()
	}
	s.wg.Wait()
}

// Run serves one client on t (stdio, or an in-memory transport in tests)
// until the client leaves or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	s.Start(ctx)
	return s.srv.Run(ctx, t)
}

// waitForList holds tools/list until every server still starting has its
// pinned definitions to offer (early.go) or has started, but not past
// ListWait after Start, so that a client's first listing is complete in
// the common case and prompt in every case, and a host that lists again
// (after a list_changed) is not held up by a server that hangs. A call of
// a tool not exported yet (a client that calls before it lists) waits for
// the start, at most callWait. A resource that is not found while a
// server is still starting is said to be not found yet, naming the
// servers that start.
func (s *Server) waitForList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			s.waitListable(ctx)
			s.sync()
		case "resources/read":
			res, err := next(ctx, method, req)
			return res, s.notFoundYet(err)
		case "tools/call":
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if ok && p.Name == host.SearchToolName && s.searchOn() {
				s.waitListable(ctx) // search what tools/list would show
			} else if ok && !s.isExported(p.Name) {
				s.waitReady(ctx, callWait, false)
				s.sync()
			}
			if ok {
				s.listOnCall(p.Name)
			}
		}
		return next(ctx, method, req)
	}
}

// callWait bounds how long a call of a tool not listed yet waits for the
// servers' start.
const callWait = 30 * time.Second

// CancelledWait bounds how long mcphost serve waits, once it stops and its
// drain is over, for the calls it cancelled to end and their outcomes to
// be recorded. A cancelled call ends as soon as its server's client gives
// up on it, so this is only reached by a call that does not. AnswerGrace
// is the moment after it for the answers (a cancelled call's "outcome
// unknown") to reach their clients. A deployment's stop grace period must
// cover the drain and both.
const (
	CancelledWait = 30 * time.Second
	AnswerGrace   = 2 * time.Second
)

// waitReady waits until every server has started, or d passed (counted
// from Start when sinceStart, else from now), or ctx ended.
func (s *Server) waitReady(ctx context.Context, d time.Duration, sinceStart bool) {
	select {
	case <-s.started:
	default:
		return
	}
	if sinceStart {
		d = time.Until(s.startedAt.Add(d))
	}
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ready:
	case <-t.C:
	case <-ctx.Done():
	}
}

// isExported reports whether name is exported now.
func (s *Server) isExported(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exported[name] != nil
}

// sync makes the exported tools what the catalog holds now, and the
// listed ones those or, with search, the search tool and those found. The
// SDK tells every client of a difference
// (notifications/tools/list_changed); changed reports whether sync made
// one.
func (s *Server) sync() (changed bool) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	all := s.exports(s.withEarly(s.o.Catalog.Tools()))
	next, searching := s.offer(all)
	s.mu.Lock()
	prev := s.listed
	s.mu.Unlock()
	if !searching {
		s.showSearch(false, all) // first: a raw tool may have its name
	}
	var gone []string
	for name := range prev {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.srv.RemoveTools(gone...)
		changed = true
	}
	names := make([]string, 0, len(next))
	for name := range next {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e := next[name]
		if old, ok := prev[name]; ok && old.sig == e.sig {
			next[name] = old
			continue
		}
		changed = true
		if !s.add(e) {
			s.srv.RemoveTools(name)
			delete(next, name)
		}
	}
	if searching {
		s.showSearch(true, all)
	}
	s.mu.Lock()
	s.exported, s.listed = all, next
	s.mu.Unlock()
	if changed {
		s.listChanges.Add(1)
	}
	return changed
}

// announce passes on a server's tools/list_changed that changed nothing
// serve exports: the SDK tells clients only of a change it makes, so one
// of the server's listed tools is offered again as it is, and clients list
// the tools again as the server asked. A server none of whose tools is
// listed has nothing to announce. The manager lists a server's tools at
// most once per RelistInterval, so a server that floods the notification
// costs clients that many listings at most.
func (s *Server) announce(server string) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	var first *export
	for name, e := range s.listed {
		if e.server == server && (first == nil || name < first.def.Name) {
			first = e
		}
	}
	s.mu.Unlock()
	if first != nil {
		s.add(first)
	}
}

// add offers e to clients. A definition the SDK refuses (it panics on a
// schema it cannot use) is left out rather than taking serve down: a
// hostile server degrades only its own tools.
func (s *Server) add(e *export) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	s.srv.AddTool(e.def, s.handler(e))
	return true
}

// exports turns the catalog's tools into what clients are shown.
func (s *Server) exports(tools []*client.Tool) map[string]*export {
	names := client.BuildNames(tools)
	out := make(map[string]*export, len(tools))
	for _, t := range tools {
		name := names.Model(t)
		if s.o.NoPrefix {
			name = t.Name
		}
		if name == "" || out[name] != nil {
			continue
		}
		def := s.definition(name, t)
		sig, _ := json.Marshal(def)
		out[name] = &export{server: t.Server, tool: t.Name, def: def, sig: string(sig)}
	}
	return out
}

// handler runs a call of an exported tool through the session's gate.
func (s *Server) handler(e *export) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sess, a, err := s.sessionOf(ctx, req.Session, req.Extra)
		if err != nil {
			return errorResult("mcphost: " + err.Error()), nil
		}
		p := req.Params
		if p == nil {
			p = &mcp.CallToolParamsRaw{}
		}
		args := p.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		// A pinned definition offered while its server starts: the call
		// waits for the server, then everything below reads the tool as
		// the server lists it, never as pinned.
		s.awaitServer(ctx, e)
		multi := a.multiRoundTrip()
		var st callState
		var sealed bool
		if multi && p.RequestState != "" {
			st, sealed = s.unseal(p.RequestState)
			switch {
			case !sealed:
				return errorResult("mcphost: the request state is not one mcphost gave, so nothing ran; call again without it to be asked"), nil
			case st.Kind == stateRelay:
				return s.resume(ctx, sess, req.Session, e, args, st, p.InputResponses), nil
			case st.Kind == stateURL:
				if res := s.pageAnswered(ctx, sess, e, args, st, p.InputResponses); res != nil {
					return res, nil
				}
			}
		}
		var page *pageRound
		switch {
		case st.Kind == stateURL:
			// The person answered on the page, or no one did in time: the
			// gate decides, and the page is not offered again in this round.
		case a.route() == routeElicit && multi:
			if p.RequestState == "" && p.InputResponses == nil {
				if res := s.inputRequired(sess, e, args); res != nil {
					return res, nil
				}
			} else {
				if res := s.redefined(sess, e, args, st, sealed); res != nil {
					return res, nil
				}
				a = a.with(s.answered(sess, e, args, st, sealed, p.InputResponses))
			}
			if p.RequestState == "" {
				a, page = a.offeringPage()
			}
		}
		var pk *parked
		if multi {
			pk = s.park(sess, e, args, capsOf(req.Session))
		}
		c := host.Call{Server: e.server, Tool: e.tool, Args: args, Asker: a}
		if tok := p.GetProgressToken(); tok != nil {
			// The server's progress reaches the client under the client's
			// token, so a long call is seen to be alive (and a client that
			// resets its timeout on progress keeps waiting).
			ss := req.Session
			c.Progress = func(pr client.Progress) {
				_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok,
					Progress: pr.Progress, Total: pr.Total, Message: bound(pr.Message, 500)})
			}
		}
		run := func(ctx context.Context) *mcp.CallToolResult {
			// Once the call may run, it is in flight on its server: what the
			// server asks or logs meanwhile can be told to be this client's
			// (relay.go).
			end := func() {}
			c.OnDecision = func(decide.Decision, host.DecidedBy) {
				if multi {
					// A client whose call of the server runs instead of
					// answering the one waiting there has moved on from it.
					s.abandonIdle(ctx, sess, e.server, pk)
				}
				end = s.begin(e.server, req.Session, ctx, sess, pk)
			}
			defer func() { end() }()
			r := sess.gate.Call(ctx, c)
			if page != nil && page.link != "" && r.Status == host.StatusBlocked && r.Held != nil && r.Held.ID == page.ap.ID {
				// Held for the approval page, which the client opens.
				return s.pageRequest(sess, e, args, page)
			}
			if r.Decision.Has(decide.CodeDefinitionChanged) && r.DecidedBy.PersonApproved() {
				s.sync() // approving the call accepted the new definition: show it
			}
			return s.result(r)
		}
		if pk != nil {
			return s.runParked(ctx, pk, run), nil
		}
		return run(ctx), nil
	}
}

// result is what the client gets for a call: the server's own result when
// it ran, else a tool error that says why not.
func (s *Server) result(r *host.Result) *mcp.CallToolResult {
	switch r.Status {
	case host.StatusSuccess, host.StatusToolError:
		if r.Result != nil && (r.Result.InputRequests != nil || r.Result.RequestState != "") {
			// A server's own input-required result: its requests and its
			// state are its words for mcphost, not for the client.
			return errorResult("mcphost: " + sanitize.Name(r.Server) + " asked for more input than mcphost passes on in one round; its call ended without a result")
		}
		if r.Result != nil {
			return r.Result
		}
	}
	return errorResult(s.refusal(r))
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// refusal says how a call that did not run (or whose outcome is unknown)
// ended, and, when it needed a person, what needed approval and how to get
// approval from here: `mcphost approve` only when this serve has an
// approver socket it could reach.
func (s *Server) refusal(r *host.Result) string {
	via := s.o.AskRoute
	if r.Status != host.StatusBlocked {
		return "mcphost: " + sanitize.Text(r.Message())
	}
	ref := sanitize.Name(r.Server) + "/" + sanitize.Name(r.Tool)
	var b strings.Builder
	fmt.Fprintf(&b, "mcphost: %s needs a person's approval (class %s, tier %s) and no one could be asked, so it did not run.\n",
		ref, r.Decision.Class, r.Decision.Tier)
	b.WriteString("Why it needs approval:\n")
	ask, favour := r.Decision.Split()
	for _, rs := range ask {
		if rs.Code == decide.CodeNeedsApproval {
			continue
		}
		b.WriteString("- " + rs.Text + "\n")
	}
	if len(favour) > 0 {
		b.WriteString("In its favour (not enough to run it without a person):\n")
		for _, rs := range favour {
			b.WriteString("- " + rs.Text + "\n")
		}
	}
	if r.Decision.Has(decide.CodeDefinitionChanged) {
		b.WriteString(host.ChangeNote(sanitize.Name(r.Server), sanitize.Name(r.Tool), r.ChangedFields) + ".\n")
	}
	if r.TrustLifts {
		b.WriteString("It asks only because " + sanitize.Name(r.Server) + " is not trusted: " + host.TrustFix(sanitize.Name(r.Server)) + ".\n")
	}
	a := host.ApprovalFor(r.Server, r.Tool, r.Decision, r.ChangedFields, host.ApproveInteractively)
	rule := ""
	if a.ByRule {
		rule = "add the allow rule " + sanitize.Line(string(a.Rule)) + " to permissions.allow in mcphost's configuration"
	}
	if r.Refused != "" {
		b.WriteString("An approval came, and approved nothing: " + sanitize.Line(r.Refused) + ".\n")
	}
	if r.Held != nil {
		s.heldNote(&b, r.Held)
		return b.String()
	}
	if r.NotHeld != "" {
		// Nothing waits: advising `mcphost approve` would send the person
		// to look for a call it cannot show.
		b.WriteString("It could not be held for a person's approval, and no one can approve it from here: " + sanitize.Line(r.NotHeld))
		if rule != "" {
			b.WriteString("; to let it run, " + rule)
		}
		b.WriteString(". Do not retry it unchanged.")
		return b.String()
	}
	switch via {
	case AskDeny:
		b.WriteString("mcphost serve runs with --ask-via deny, so it asks no one")
		if rule != "" {
			b.WriteString("; to let it run, " + rule)
		}
	case AskElicit:
		b.WriteString("mcphost serve runs with --ask-via elicit and this client offers no elicitation form")
		if rule != "" {
			b.WriteString("; to let it run, " + rule)
		}
	default:
		if s.o.Approver == nil {
			// No socket (it could not be made): an approver would connect
			// to some other serve and never see this call.
			b.WriteString("this client cannot show mcphost's question itself, and this mcphost serve has no approver socket (see the warning it printed when it started), so `mcphost approve` cannot reach it")
			if rule != "" {
				b.WriteString("; to let it run, " + rule)
			}
			break
		}
		b.WriteString("To approve it: run `mcphost approve` in a terminal and call it again (this client cannot show mcphost's question itself)")
		if rule != "" {
			b.WriteString(", or " + rule)
		}
	}
	b.WriteString(". Do not retry it unchanged until then.")
	return b.String()
}

// AnswerLater records a person's answer, given through ans.Via (the
// approval page: audit.ChannelWeb), to the call held under approval id id: an
// approval lets the same call, retried by the same client within the
// approval's lifetime, run once. An unknown, expired or answered id, or a
// channel that may not approve the call's tier, approves nothing.
//
// A call held by another replica on a store they share (or by this serve
// before a restart) is answered here too: the store holds the call, the
// audit chain is shared, and the channel policy is every replica's.
func (s *Server) AnswerLater(id string, ans host.Answer) error {
	if s.routedHeld(id) {
		// Routed by the managed policy (the same on every replica, and
		// read from the store for a call another holds): only its
		// group answers, on the team page.
		return ErrRouted
	}
	g := s.answerGate(id)
	if g == nil {
		return later.ErrUnknown
	}
	return g.AnswerLater(id, ans)
}

// answerGate is the gate that answers the held call id: the gate that
// holds it, or for a call another replica holds on the store they share
// (or this serve held before a restart), a gate made for answers, since
// the store holds the call, the audit chain is shared and the channel
// policy is every replica's. Nil when no call is held under id.
func (s *Server) answerGate(id string) *host.Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.heldBy[id]; g != nil {
		return g
	}
	if s.o.Later == nil {
		return nil
	}
	if _, ok := s.o.Later.Get(id); !ok {
		return nil
	}
	if s.answers == nil {
		s.answers = s.newGate(&audit.Client{Name: "mcphost serve", Session: "answers"}, nil, nil, nil, nil)
	}
	return s.answers
}

// routedCall reports whether the managed policy routes the held call c
// to an approver group, from what the store keeps of it: a call held by
// another replica is routed as it was there.
func (s *Server) routedCall(c later.Call) bool {
	if s.o.Route == nil {
		return false
	}
	var tier decide.Tier
	if tier.UnmarshalText([]byte(c.Tier)) != nil {
		return true // a tier this serve cannot read: answered by no one here
	}
	return s.o.Route(c.Server, c.Tool, tier) != nil
}

// heldNote says where a held call can be approved and that the model
// should make the same call again once it is: the approval id, the page's
// link when one runs, `mcphost approve` when this serve has an approver
// socket, and until when.
func (s *Server) heldNote(b *strings.Builder, ap *later.Approval) {
	link := s.pageLink(ap.ID)
	if tc := s.teamCallOf(ap.ID); tc != nil && tc.route != nil {
		fmt.Fprintf(b, "It waits for the approval of %s under approval id %s until %s: the managed policy routes this call to that group.\n",
			tc.route.Who(), ap.ID, ap.Expires.UTC().Format("15:04:05 UTC"))
		if link != "" {
			b.WriteString("They approve it on mcphost's team approval page: " + link + ".\n")
		}
		b.WriteString("Tell the person it waits for " + tc.route.Who() + ", and once it is approved, make exactly the same call again (the same tool and arguments): it then runs once. Until then, calling it again runs nothing.")
		return
	}
	fmt.Fprintf(b, "It waits for a person's approval under approval id %s until %s.\n", ap.ID, ap.Expires.UTC().Format("15:04:05 UTC"))
	var where []string
	if link != "" {
		where = append(where, "open "+link)
	}
	switch tc := s.localTeamCall(ap.ID); {
	case tc != nil && tc.notShown != "":
		b.WriteString(sanitize.Line(tc.notShown) + ".\n")
	case tc == nil && s.o.Approver != nil:
		// Held through another replica on the store, or by this serve
		// before it restarted: this serve never showed it to its
		// approvers, and its approvers list only what it showed them.
		b.WriteString("`mcphost approve` on this serve does not list it: another mcphost serve on the store, or this one before it restarted, held it.\n")
	case s.o.Approver != nil:
		where = append(where, "run `mcphost approve` in a terminal")
	}
	switch {
	case len(where) == 0 && s.o.Approver != nil:
		b.WriteString("No approval page runs and this serve's approvers do not show it, so no one can approve it through this serve: `mcphost approve` of the serve that held it can, while that serve runs, or an allow rule in mcphost's configuration.\n")
	case len(where) == 0:
		b.WriteString("No approval page runs and this mcphost serve has no approver socket, so no one can approve it from here; an allow rule in mcphost's configuration can.\n")
	default:
		b.WriteString("The person can approve it: " + strings.Join(where, ", or ") + ".\n")
	}
	b.WriteString("Tell the person it waits, and once they have approved it, make exactly the same call again (the same tool and arguments): it then runs once. Until then, calling it again runs nothing.")
}

// waitingChecker is a Later that says which calls still wait by their ids
// alone, or that it cannot tell (pgstore.Later.StillWaiting).
type waitingChecker interface {
	StillWaiting(ids []string) (map[string]bool, error)
}

// stillWaiting reports which of ids still wait.
func (s *Server) stillWaiting(ids []string) (map[string]bool, error) {
	if c, ok := s.o.Later.(waitingChecker); ok {
		return c.StillWaiting(ids)
	}
	waiting := map[string]bool{}
	for _, ap := range s.o.Later.Waiting() {
		waiting[ap.ID] = true
	}
	return waiting, nil
}

// Later is where serve holds calls for a later approval: the gate's
// host.Later, and a way to wait for an answer (later.Store, or a store
// that replicas share, pgstore).
type Later interface {
	host.Later
	// Answered returns a channel closed once the held call id is
	// answered; nil when no call is held under id.
	Answered(id string) <-chan struct{}
	// Waiting lists the calls held and not yet answered, oldest first
	// (the team page's list).
	Waiting() []later.Approval
}

// session is one client's state: its gate (grants, taint) and who it is.
type session struct {
	gate   *host.Gate
	client *audit.Client
	caller *Caller // the person and client of its token; nil without OAuth
	ask    *asker  // nil for a stateless client: each request has its own
}

// sessionOf returns the state of the client behind a call on ss, and the
// asker that can reach that client during this request: the one the
// request passes to the gate (host.Call.Asker, host.Asking). A stateless
// client's gate has no asker of its own, so a request that passed none
// would be refused as needing a person no one could ask. extra is the
// request's, whose token names the person when HandlerOAuth checked it.
func (s *Server) sessionOf(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra) (*session, *asker, error) {
	c := callerOf(extra)
	if !isStateless(ctx) {
		sess, err := s.session(ss, c)
		if err != nil {
			return nil, nil, err
		}
		return sess, sess.ask, nil
	}
	sess, err := s.statelessSession(ss, c)
	return sess, &asker{s: s, ss: ss}, err
}

// ErrOtherPerson refuses a request on a session another person opened.
// The SDK already refuses such a request (it keeps each HTTP session to
// the token's person); this holds for any transport.
var ErrOtherPerson = errors.New("this session belongs to another person: open a session of your own")

// session returns the state of the client session ss, creating it on its
// first call, for the person c names (nil: no OAuth). Its person is fixed
// then: a request of another person is refused, so one person's grants
// and taint never serve another's calls.
func (s *Server) session(ss *mcp.ServerSession, c *Caller) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[ss]; sess != nil {
		if !samePerson(sess.caller, c) {
			return nil, ErrOtherPerson
		}
		return sess, nil
	}
	s.prune()
	id := ss.ID()
	if id == "" {
		id = rand.Text()[:12]
	}
	ac := &audit.Client{Session: "serve-" + bound(id, 64)}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		ac.Name, ac.Version = bound(p.ClientInfo.Name, 128), bound(p.ClientInfo.Version, 64)
	}
	withCaller(ac, c)
	a := &asker{s: s, ss: ss}
	sess := &session{client: ac, caller: c, ask: a, gate: s.newGate(ac, c, a, a.canAsk, nil)}
	s.sessions[ss] = sess
	return sess, nil
}

// samePerson reports whether a and b name the same person (or neither
// names one).
func samePerson(a, b *Caller) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.key() == b.key()
}

// withCaller names c's person and client in the audit client ac.
func withCaller(ac *audit.Client, c *Caller) {
	if c == nil {
		return
	}
	p := c.Person
	ac.ID, ac.Person, ac.Key = c.ClientID, &p, c.key()
}

func (s *Server) newGate(c *audit.Client, caller *Caller, a host.Asker, canAsk func() bool, state host.SessionState) *host.Gate {
	var g *host.Gate
	g = host.NewGate(host.GateOptions{
		Catalog: s.o.Catalog, Policy: s.o.Policy, Trusted: s.o.Trusted, MayTrust: s.o.MayTrust,
		Asker: a, Mode: decide.Interactive, CanAsk: canAsk,
		Audit: s.o.Audit, Store: s.o.Store, Pins: s.o.Pins,
		SessionID: c.Session, Client: c, CallOptions: s.o.CallOptions,
		Observer: s.observer(c), Backoff: s.o.Backoff, Sleep: s.o.Sleep,
		MayApprove: s.o.MayApprove, Later: s.o.Later,
		OnHold: func(ap later.Approval, q *host.Question) error { return s.held(g, caller, ap, q) },
		State:  state,
	})
	return g
}

// pruneHeld forgets the gates and team views of the calls no longer
// waiting (answered, expired or spent): one look at the later store, made
// outside the locks (with a shared store it is a query), for the entries
// there were before it.
func (s *Server) pruneHeld() {
	s.mu.Lock()
	ids := slices.Collect(maps.Keys(s.heldBy))
	s.mu.Unlock()
	s.team.mu.Lock()
	ids = append(ids, slices.Collect(maps.Keys(s.team.m))...)
	s.team.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	waiting, err := s.stillWaiting(ids)
	if err != nil {
		return // the store cannot tell: what is kept stays, for the next look
	}
	s.mu.Lock()
	s.team.mu.Lock()
	for _, id := range ids {
		if !waiting[id] {
			delete(s.heldBy, id)
			delete(s.team.m, id)
		}
	}
	s.team.mu.Unlock()
	s.mu.Unlock()
}

// held shows a call newly held for later approval to the approvers, where
// `mcphost approve` (and the approval page) can answer it, and tells the
// person a call waits. A call routed to an approver group goes to the
// team page only: the approvers and the loopback page are the caller's.
//
// A call the approvers cannot be shown (arguments too large to show, a
// socket that is closing) still waits when its caller may answer it on
// the team page, and the refusal says why `mcphost approve` does not show
// it; with no such way, held returns why, and the gate withdraws it.
func (s *Server) held(g *host.Gate, caller *Caller, ap later.Approval, q *host.Question) error {
	s.pruneHeld()
	s.mu.Lock()
	s.heldBy[ap.ID] = g
	s.mu.Unlock()
	s.keepTeam(ap, q, caller)
	if s.questionRoute(q) != nil {
		return nil
	}
	if p, ok := s.o.Approver.(laterPoster); ok {
		if err := p.Post(ap.ID, q, ap.Expires, func(ans host.Answer) error { return g.AnswerLater(ap.ID, ans) }); err != nil {
			why := err.Error()
			if !s.teamAnswers(caller, q.Decision.Tier) {
				s.forgetHeld(ap.ID)
				return errors.New(why)
			}
			s.team.mu.Lock()
			if tc := s.team.m[ap.ID]; tc != nil {
				tc.notShown = why
			}
			s.team.mu.Unlock()
		}
	}
	if s.o.OnHeld != nil {
		s.o.OnHeld(ap, q)
	}
	if s.o.Notify != nil {
		s.o.Notify(q.Server, q.Tool.Name)
	}
	return nil
}

// teamAnswers reports whether the caller may answer its own held call of
// tier on the team approval page: one runs, the caller is a person with a
// token, and an answer there (audit.ChannelWeb) may approve the tier.
func (s *Server) teamAnswers(caller *Caller, tier decide.Tier) bool {
	return s.teamPage.Load() && caller != nil && (s.o.MayApprove == nil || s.o.MayApprove(tier, audit.ChannelWeb))
}

// forgetHeld forgets the gate and team view of a held call the gate
// withdraws.
func (s *Server) forgetHeld(id string) {
	s.mu.Lock()
	delete(s.heldBy, id)
	s.mu.Unlock()
	s.team.mu.Lock()
	delete(s.team.m, id)
	s.team.mu.Unlock()
}

// identity is who a stateless client is: the person and client of its
// token, when serve checks tokens (HandlerOAuth), and its clientInfo name
// and version, as the audit log records them.
type identity struct{ person, clientID, name, version string }

// MaxStatelessClients bounds how many client identities of the stateless
// protocol serve keeps state for; a call from one more is refused.
const MaxStatelessClients = 64

// ErrTooManyClients refuses a call from a stateless client identity past
// MaxStatelessClients.
var ErrTooManyClients = fmt.Errorf("more than %d client identities called over HTTP with protocol 2026-07-28; restart mcphost serve to forget them", MaxStatelessClients)

// statelessSession returns the state of the client behind a request of the
// stateless protocol (2026-07-28 over HTTP), whose go-sdk session lasts one
// request. It is keyed by the client's clientInfo name and version (and,
// with OAuth, by the person and client id of its token, c) and kept for
// serve's life: grants "for this session" last for that identity until
// serve stops, and so does its taint. Any client with the token that names
// itself the same shares them; the token is what is trusted, so with OAuth
// only the same person's clients do. An identity's state is never dropped
// (that would drop its taint): past MaxStatelessClients a new identity is
// refused. With Options.SessionState its grants and taint are kept in the
// store the replicas share instead, and last as long as it keeps them.
func (s *Server) statelessSession(ss *mcp.ServerSession, c *Caller) (*session, error) {
	var id identity
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		id = identity{name: bound(p.ClientInfo.Name, 128), version: bound(p.ClientInfo.Version, 64)}
	}
	if c != nil {
		id.person, id.clientID = c.key(), c.ClientID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.idents[id]; sess != nil {
		return sess, nil
	}
	if len(s.idents) >= MaxStatelessClients {
		return nil, ErrTooManyClients
	}
	ac := &audit.Client{Session: "serve-" + rand.Text()[:12], Name: id.name, Version: id.version}
	withCaller(ac, c)
	state := s.sharedState(id, ac)
	sess := &session{client: ac, caller: c, gate: s.newGate(ac, c, nil, s.anyRequestCanAsk, state)}
	s.idents[id] = sess
	return sess, nil
}

// anyRequestCanAsk is a stateless client's gate's CanAsk. It cannot see
// the request, so it says whether anyone could be asked through some
// request: a request that cannot ask anyone still gets host.ErrNoPerson
// from its asker, and its call is blocked as needs-approval.
func (s *Server) anyRequestCanAsk() bool {
	switch s.o.AskRoute {
	case AskDeny:
		return false
	case AskApprover:
		return s.o.Approver != nil && s.o.Approver.Waiting()
	}
	return true
}

// prune forgets sessions the SDK no longer holds. s.mu is held.
func (s *Server) prune() {
	if len(s.sessions) < 16 {
		return
	}
	live := map[*mcp.ServerSession]bool{}
	for ss := range s.srv.Sessions() {
		live[ss] = true
	}
	for ss := range s.sessions {
		if !live[ss] {
			delete(s.sessions, ss)
		}
	}
}

// bound makes a client's word safe to store: one sanitized line, cut.
func bound(v string, n int) string {
	return sanitize.Truncate(sanitize.Line(v), n)
}
