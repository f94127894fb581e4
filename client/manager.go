package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options tune a Manager. The zero value of each field selects its default.
type Options struct {
	Limits Limits

	// StartTimeout bounds connecting, initializing and the first listing
	// of a server whose Spec sets none (default DefaultStartTimeout, or
	// DefaultLauncherStartTimeout for a server started by a package
	// launcher, see Spec.Launcher).
	StartTimeout time.Duration
	CallTimeout  time.Duration // a call's idle timeout; progress resets it (default 60s)
	CallCeiling  time.Duration // a call's absolute limit; nothing extends it (default 10m)

	MaxCrashes  int                             // crashes within CrashWindow after which a server stays failed (default 5)
	CrashWindow time.Duration                   // default 1m
	Backoff     func(attempt int) time.Duration // delay before restart attempt n ≥ 1 (default capped exponential with jitter)

	// RelistInterval is the least time between two listings caused by
	// tools/list_changed notifications; a storm in between is coalesced into
	// one listing (default 200ms).
	RelistInterval time.Duration

	StderrBytes int // stderr kept per server (default 64 KiB)

	ClientName, ClientVersion string

	// Handlers for requests servers send to the host. A nil handler means
	// the capability is not offered, so a server cannot use it.
	Elicitation func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	Sampling    func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	// RateLimited, if set, learns of each request a server sent over its
	// allowance (ServerRequestBurst, ServerRequestRate), which was refused
	// without reaching a handler. kind is elicitation, sampling or roots.
	RateLimited func(server, kind string)
	// Roots are offered to every server; none by default (a server such as
	// server-filesystem replaces its allowed folders with the client's roots).
	Roots []*mcp.Root
	// ListRoots, if set, answers a server's roots/list request (one that
	// passed the rate limit; a refused one never reaches it) for the server
	// named server: when it returns ok, its result is the answer as given,
	// so it must bound what it returns; otherwise Roots are. It may block
	// until ctx, the request's, ends. Setting it offers the roots
	// capability even with no Roots, so a server may ask and be told none.
	// It answers the requests of a server's own; the roots of a
	// 2026-07-28 server's input-required result are the SDK's to answer
	// and are always Roots.
	ListRoots func(ctx context.Context, server string) (*mcp.ListRootsResult, bool)

	// OnListing, if set, sees every listing of a server's tools before the
	// catalog offers it to anyone: at start, after a restart and on every
	// re-list. It runs on the goroutine that listed, so it must not block
	// for long and must not call back into the Manager. The host pins
	// definitions here, so that no definition reaches a model unpinned.
	OnListing func(spec *Spec, tools []*Tool)

	// OnLog, if set, sees every log message (notifications/message) of
	// every server, as sent (unsanitized, unbounded), and each server that
	// declares logging is asked at start for all of them (logging/setLevel
	// debug): the receiver filters. On stdio and SSE it runs on the
	// goroutine that reads the connection, before any response read after
	// the message is delivered, so a message a server sends during a call
	// is seen while that call is still running; on streamable HTTP it runs
	// as the SDK handles the notification, which may be just after the
	// call has returned. It must not block for long and must not call back
	// into the Manager. The log tail (ServerStatus.Log) is kept either way.
	OnLog func(server string, p *mcp.LoggingMessageParams)

	// Trace, if set, sees every JSON-RPC message exchanged with every
	// server, both ways, as encoded on the wire (see Tracer).
	Trace Tracer

	Getenv        func(string) string // the host's environment (default os.Getenv)
	HTTPTransport http.RoundTripper   // base HTTP transport (default http.DefaultTransport)
	Now           func() time.Time    // clock for the crash window (default time.Now)
}

func (o Options) withDefaults() Options {
	o.Limits = o.Limits.withDefaults()
	if o.CallTimeout <= 0 {
		o.CallTimeout = 60 * time.Second
	}
	if o.CallCeiling <= 0 {
		o.CallCeiling = 10 * time.Minute
	}
	if o.MaxCrashes <= 0 {
		o.MaxCrashes = 5
	}
	if o.CrashWindow <= 0 {
		o.CrashWindow = time.Minute
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.RelistInterval <= 0 {
		o.RelistInterval = 200 * time.Millisecond
	}
	if o.StderrBytes <= 0 {
		o.StderrBytes = 64 * 1024
	}
	if o.ClientName == "" {
		o.ClientName = "mcphost"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// DefaultBackoff waits 250ms, 500ms, 1s … up to 30s before restart attempt
// n, with full jitter so that servers that crashed together do not restart
// in lockstep.
func DefaultBackoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt-1, 7)
	d = min(d, 30*time.Second)
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// Manager owns the connections to a set of servers. Its methods may be
// called concurrently.
type Manager struct {
	opts    Options
	servers []*server // sorted by name
	byName  map[string]*server

	ctx    context.Context // ends when the Manager is closed
	cancel context.CancelFunc
	wg     sync.WaitGroup

	subMu sync.Mutex
	subs  map[chan Event]struct{}

	progMu   sync.Mutex
	progress map[string]func(Progress)

	// crashSeen, set by this package's tests only, runs when supervise
	// learns that a connection ended, before it does anything about it.
	crashSeen func(server string)
}

// New returns a Manager for specs. Nothing starts until Start.
func New(specs []Spec, opts Options) *Manager {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts: opts, byName: map[string]*server{}, ctx: ctx, cancel: cancel,
		subs: map[chan Event]struct{}{}, progress: map[string]func(Progress){},
	}
	for _, sp := range specs {
		s := &server{m: m, spec: sp, state: StateStopped, stderr: newTailBuffer(opts.StderrBytes), relist: make(chan struct{}, 1), recent: &recentRing{}}
		if s.spec.Transport == "" {
			s.spec.Transport = TransportStdio
			if s.spec.Dial != nil {
				s.spec.Transport = TransportInMemory
			}
		}
		m.servers = append(m.servers, s)
		m.byName[sp.Name] = s
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].spec.Name < m.servers[j].spec.Name })
	return m
}

// Start starts every server at once and returns when each one is ready or
// has failed; a server that fails or hangs delays no other beyond its own
// start timeout. Cancelling ctx abandons the servers still starting.
func (m *Manager) Start(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.start(ctx)
		}()
	}
	wg.Wait()
}

// Restart stops the named server if it runs and starts it again, clearing
// its crash history: the way out of the failed state.
func (m *Manager) Restart(ctx context.Context, name string) error {
	s := m.byName[name]
	if s == nil {
		return errors.New("no server named " + name)
	}
	s.stop()
	s.mu.Lock()
	s.crashes = nil
	s.mu.Unlock()
	s.start(ctx)
	if st := s.status(); st.State != StateReady {
		return errors.New(st.LastError)
	}
	return nil
}

// Close stops every server and waits for the Manager's goroutines. It may be
// called more than once.
func (m *Manager) Close() error {
	m.cancel()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop()
		}()
	}
	wg.Wait()
	m.wg.Wait()
	m.subMu.Lock()
	for ch := range m.subs {
		close(ch)
		delete(m.subs, ch)
	}
	m.subMu.Unlock()
	return nil
}

// Servers reports the state of every server, sorted by name.
func (m *Manager) Servers() []Status {
	out := make([]Status, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.status()
	}
	return out
}

// Tools returns the tools of every ready server, sorted by server and name.
// The tools are shared; callers must not modify them.
func (m *Manager) Tools() []*Tool {
	var out []*Tool
	for _, s := range m.servers {
		s.mu.Lock()
		if s.listing != nil && s.state == StateReady {
			out = append(out, s.listing.tools...)
		}
		s.mu.Unlock()
	}
	sortTools(out)
	return out
}

// Tool returns one tool of a ready server.
func (m *Manager) Tool(server, name string) (*Tool, bool) {
	s := m.byName[server]
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listing == nil || s.state != StateReady {
		return nil, false
	}
	for _, t := range s.listing.tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// LastChange returns the last change of a tool's definition seen while
// this Manager ran, if any: which fields changed, and the hashes.
func (m *Manager) LastChange(server, tool string) (Change, bool) {
	s := m.byName[server]
	if s == nil {
		return Change{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.changes[tool]
	return c, ok
}

// Relisting reports whether the named server said its tools changed
// (notifications/tools/list_changed) and the re-list that follows has not
// completed yet: until it has, the catalog holds definitions the server
// itself called stale. A completed re-list publishes an event (EventTools
// or EventToolsRelisted) after Relisting turned false, so a caller can
// wait for it with Subscribe. A re-list that fails leaves it true until a
// later one (another notification, or a restart) succeeds.
func (m *Manager) Relisting(server string) bool {
	s := m.byName[server]
	return s != nil && s.relisting()
}

// Spec returns the specification of the named server.
func (m *Manager) Spec(name string) (Spec, bool) {
	s := m.byName[name]
	if s == nil {
		return Spec{}, false
	}
	return s.spec, true
}

// Findings returns what the client noticed while listing each server's
// tools, sorted by server.
func (m *Manager) Findings() []Finding {
	var out []Finding
	for _, s := range m.servers {
		s.mu.Lock()
		if s.listing != nil {
			out = append(out, s.listing.findings...)
		}
		s.mu.Unlock()
	}
	return out
}

// Subscribe returns a channel of events and a function that ends the
// subscription. Events are delivered in order; a subscriber that falls more
// than 256 events behind loses the newest ones (the Manager never blocks on
// a subscriber) — state can always be re-read with Servers and Tools.
func (m *Manager) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 256)
	m.subMu.Lock()
	m.subs[ch] = struct{}{}
	m.subMu.Unlock()
	return ch, func() {
		m.subMu.Lock()
		if _, ok := m.subs[ch]; ok {
			delete(m.subs, ch)
			close(ch)
		}
		m.subMu.Unlock()
	}
}

func (m *Manager) publish(e Event) {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	for ch := range m.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

func (m *Manager) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req.Params == nil {
		return
	}
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	m.progMu.Lock()
	f := m.progress[tok]
	m.progMu.Unlock()
	if f != nil {
		f(Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	}
}

// EventKind says what an Event reports.
type EventKind int

const (
	// EventState: a server changed state (Event.State, Event.Err).
	EventState EventKind = iota + 1
	// EventTools: a server's tools were listed again and differ
	// (Event.Diff) — after tools/list_changed or a restart.
	EventTools
	// EventPrompts: a server said its prompts changed
	// (notifications/prompts/list_changed); list them again to see how.
	EventPrompts
	// EventResources: a server said its resources or resource templates
	// changed (notifications/resources/list_changed).
	EventResources
	// EventResourceUpdated: a server said the resource Event.URI changed
	// (notifications/resources/updated, sent for a subscribed URI). The
	// URI is the server's word: bounded, not checked against what it
	// offers.
	EventResourceUpdated
	// EventToolsRelisted: a server said its tools changed and they were
	// listed again, but they are the same as before (an EventTools
	// reports a listing that differs instead). A host that passes the
	// server's word on (serve) can still tell its own clients.
	EventToolsRelisted
)

// Event is something that happened to a server.
type Event struct {
	Kind   EventKind
	Server string
	State  State
	Err    string
	Diff   *Diff
	URI    string // EventResourceUpdated only
}

// Diff is how a server's catalog changed between two listings.
type Diff struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []Change `json:"changed,omitempty"`
}

// Change is one tool whose definition changed, with the fields that differ.
type Change struct {
	Tool    string   `json:"tool"`
	Fields  []string `json:"fields"`
	OldHash string   `json:"oldHash"`
	NewHash string   `json:"newHash"`
}

// Empty reports whether nothing changed.
func (d *Diff) Empty() bool {
	return d == nil || len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0
}

func diffListings(old, cur *listing) *Diff {
	d := &Diff{}
	oldBy := map[string]*Tool{}
	for _, t := range old.tools {
		oldBy[t.Name] = t
	}
	for _, t := range cur.tools {
		o, ok := oldBy[t.Name]
		switch {
		case !ok:
			d.Added = append(d.Added, t.Name)
		case o.Hash != t.Hash:
			d.Changed = append(d.Changed, Change{Tool: t.Name, Fields: changedFields(old.fields[t.Name], cur.fields[t.Name]), OldHash: o.Hash, NewHash: t.Hash})
		}
		delete(oldBy, t.Name)
	}
	for name := range oldBy {
		d.Removed = append(d.Removed, name)
	}
	sort.Strings(d.Added)
	sort.Strings(d.Removed)
	sort.Slice(d.Changed, func(i, j int) bool { return d.Changed[i].Tool < d.Changed[j].Tool })
	return d
}
