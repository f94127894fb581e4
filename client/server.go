package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is where a server is in its life.
type State string

const (
	StateStopped    State = "stopped"
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateRestarting State = "restarting"
	StateFailed     State = "failed"
)

// Status is what a person needs to know about one server.
type Status struct {
	Name            string `json:"name"`
	Transport       string `json:"transport"`
	State           State  `json:"state"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	Tools           int    `json:"tools"`
	Restarts        int    `json:"restarts"`
	LastError       string `json:"lastError,omitempty"`
	StderrTail      string `json:"stderrTail,omitempty"`
	Identity        string `json:"identity"`
	// Log holds the server's last log messages (notifications/message),
	// oldest first, unsanitized.
	Log []string `json:"log,omitempty"`
	// Tasks is the server's tasks capability as sent, when it was read.
	Tasks *TasksCapability `json:"tasksCapability,omitempty"`
	// Recent are the last messages exchanged with the server, oldest
	// first, across its connections.
	Recent []MessageSummary `json:"recentMessages,omitempty"`
}

// server is one configured server and its current connection, if any.
type server struct {
	m      *Manager
	spec   Spec
	stderr *tailBuffer
	relist chan struct{} // capacity 1: pending list_changed notifications coalesce

	mu       sync.Mutex
	state    State
	lastErr  string
	conn     *live
	listing  *listing
	crashes  []time.Time
	restarts int
	relister bool // the relist goroutine runs
	// relistAsked counts the server's notifications/tools/list_changed;
	// relistDone is the count the last completed re-list answered. While
	// they differ the server has said its listing is stale (Relisting).
	relistAsked, relistDone uint64
	// log keeps the server's last log messages (notifications/message).
	log []string
	// recent keeps the last messages exchanged with the server (recent.go).
	recent *recentRing
	// changes remembers, per tool, the last change of its definition seen
	// in this run, so a person asked about it can be shown what changed.
	changes map[string]Change
	// requests is the server's allowance of requests to the host
	// (ratelimit.go); it outlives connections.
	requests requestBucket
	// gen counts the times the host took the server in hand (start, stop).
	// An automatic restart that began in an older generation stands down,
	// so a manual Restart during a backoff leaves one connection, not two.
	gen int
	// questions counts the elicitation requests the server made (elicited.go).
	questions questionCount
}

// live is one established session.
type live struct {
	session  *mcp.ClientSession
	raw      rawCaller
	dialed   *dialed
	cancel   context.CancelFunc // ends the connection's context
	protocol string
	info     *mcp.Implementation
	stopping bool // set under server.mu when the host closes it on purpose
	caps     *capsRecorder
}

func (s *server) setState(st State, errText string) {
	s.mu.Lock()
	s.state = st
	s.lastErr = errText
	s.mu.Unlock()
	s.m.publish(Event{Kind: EventState, Server: s.spec.Name, State: st, Err: errText})
}

func (s *server) startTimeout() time.Duration {
	if s.spec.StartTimeout > 0 {
		return s.spec.StartTimeout
	}
	if s.m.opts.StartTimeout > 0 {
		return s.m.opts.StartTimeout
	}
	return defaultStartTimeout(&s.spec)
}

// start connects and lists tools, within the start timeout.
func (s *server) start(ctx context.Context) {
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.mu.Unlock()
	s.setState(StateStarting, "")
	l, lst, err := s.connect(ctx)
	if err != nil {
		s.setState(StateFailed, err.Error())
		return
	}
	s.install(l, lst, gen)
}

// connect establishes a session and reads the catalog. The connection's own
// context outlives ctx (some transports tie their streams to it); the start
// timeout and ctx bound only the handshake and first listing.
func (s *server) connect(ctx context.Context) (*live, *listing, error) {
	connCtx, cancel := context.WithCancel(s.m.ctx)
	var timedOut, abandoned bool
	var tmu sync.Mutex
	// A process that does not answer in time is asked to end (SIGTERM to
	// its group), so that a launcher still downloading the package can
	// clean up. Closing the connection then gives it the transport's
	// TerminateDuration twice before the SDK kills it, and fail kills
	// whatever is left of the group. A start abandoned by the caller is
	// killed at once.
	var proc *procTransport
	giveUp := func(flag *bool, stop func(*procTransport)) {
		tmu.Lock()
		*flag = true
		p := proc
		tmu.Unlock()
		cancel()
		stop(p)
	}
	timer := time.AfterFunc(s.startTimeout(), func() { giveUp(&timedOut, (*procTransport).terminate) })
	stopWatch := context.AfterFunc(ctx, func() { giveUp(&abandoned, (*procTransport).kill) })
	fail := func(err error, d *dialed) (*live, *listing, error) {
		timer.Stop()
		stopWatch()
		cancel()
		if d != nil {
			d.proc.kill()
		}
		tmu.Lock()
		switch {
		case timedOut:
			err = fmt.Errorf("no answer within %s (start timeout%s): %w", s.startTimeout(), raiseWith(s.spec.StartTimeoutSetting), err)
		case abandoned:
			err = fmt.Errorf("start abandoned: %w", err)
		case d != nil && d.proc.exited() != "":
			// It ended on its own: how is the first thing to know.
			err = fmt.Errorf("the server %s: %w", d.proc.exited(), err)
		}
		tmu.Unlock()
		if tail := s.stderr.Tail(5); tail != "" {
			err = fmt.Errorf("%w\nstderr:\n%s", err, tail)
		}
		return nil, nil, err
	}

	d, err := s.m.dial(connCtx, s)
	if err != nil {
		return fail(fmt.Errorf("start: %w", err), nil)
	}
	tmu.Lock()
	proc = d.proc
	tmu.Unlock()
	pv := s.spec.ProtocolVersion
	if pv == "" {
		pv = DefaultProtocolVersion
	}
	if pv == ProtocolAuto {
		pv = "" // the SDK's newest, with its fallback
	}
	c := mcp.NewClient(&mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion}, s.clientOptions(d.raw == nil))
	c.AddReceivingMiddleware(s.limitRequests)
	if roots := s.m.opts.Roots; len(roots) > 0 {
		c.AddRoots(roots...)
	}
	cs, err := c.Connect(connCtx, d.transport, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		return fail(fmt.Errorf("initialize: %w", err), d)
	}
	l := &live{session: cs, dialed: d, cancel: cancel}
	if ir := cs.InitializeResult(); ir != nil {
		l.protocol = ir.ProtocolVersion
		l.info = ir.ServerInfo
		if s.m.opts.OnLog != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil {
			// All of them: the receiver filters. A server that refuses
			// still starts; it just sends what it sends.
			_ = cs.SetLoggingLevel(connCtx, &mcp.SetLoggingLevelParams{Level: "debug"})
		}
	}
	l.caps = d.caps
	if d.raw != nil {
		d.raw.conn.meta = s.requestMeta(cs)
		l.raw = d.raw.conn
		l.caps = d.raw.conn.caps
	} else {
		l.raw = &rawHTTP{url: s.spec.URL, shown: d.shown, client: d.http, session: cs, maxBody: 16 << 20, serve: s.serveRaw, meta: s.requestMeta(cs)}
	}
	lst, err := listTools(connCtx, l.raw, s.spec.Name, s.m.opts.Limits)
	if err != nil {
		_ = cs.Close()
		return fail(err, d)
	}
	s.sdkListing(connCtx, l, lst)
	if !timer.Stop() {
		_ = cs.Close()
		return fail(errors.New("listing finished too late"), d)
	}
	stopWatch()
	return l, lst, nil
}

// clientOptions offers only the capabilities the host can serve: roots,
// sampling and elicitation each need the person's configuration or a
// handler.
//
// untapped says that the connection does not hand log messages to
// Options.OnLog as it reads them (streamable HTTP), so the SDK's handler
// does.
func (s *server) clientOptions(untapped bool) *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	if len(s.m.opts.Roots) > 0 || s.m.opts.ListRoots != nil {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	o := &mcp.ClientOptions{
		Capabilities:                caps,
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { s.listChanged() },
		ProgressNotificationHandler: s.m.onProgress,
		LoggingMessageHandler:       s.onLog,
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			s.m.publish(Event{Kind: EventPrompts, Server: s.spec.Name})
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			s.m.publish(Event{Kind: EventResources, Server: s.spec.Name})
		},
		ResourceUpdatedHandler: s.onResourceUpdated,
	}
	if f := s.m.logHook(s.spec.Name); f != nil && untapped {
		o.LoggingMessageHandler = func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			s.onLog(ctx, req)
			if req.Params != nil {
				f(req.Params)
			}
		}
	}
	name := s.spec.Name
	if h := s.m.opts.Elicitation; h != nil {
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if err := s.admitted(ctx, "elicitation/create"); err != nil {
				return nil, err
			}
			s.questions.add()
			return h(ctx, name, req)
		}
	}
	if h := s.m.opts.Sampling; h != nil {
		o.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if err := s.admitted(ctx, "sampling/createMessage"); err != nil {
				return nil, err
			}
			return h(ctx, name, req)
		}
	}
	return o
}

// Bounds on a server's log messages kept by the host.
const (
	maxLogLines = 50
	maxLogLine  = 1024
)

// onLog keeps a bounded tail of the server's log messages, unsanitized.
func (s *server) onLog(_ context.Context, req *mcp.LoggingMessageRequest) {
	if req.Params == nil {
		return
	}
	data, ok := req.Params.Data.(string)
	if !ok {
		b, _ := json.Marshal(req.Params.Data)
		data = string(b)
	}
	line := string(req.Params.Level)
	if req.Params.Logger != "" {
		line += " " + req.Params.Logger
	}
	line += ": " + data
	if len(line) > maxLogLine {
		line = line[:maxLogLine] + "…"
	}
	s.mu.Lock()
	s.log = append(s.log, line)
	if len(s.log) > maxLogLines {
		s.log = append(s.log[:0:0], s.log[len(s.log)-maxLogLines:]...)
	}
	s.mu.Unlock()
}

// install makes l the server's connection, publishes the catalog change
// against the previous listing, and watches l for a crash. If the host took
// the server in hand since generation gen began, l is closed instead.
func (s *server) install(l *live, lst *listing, gen int) {
	s.listed(lst)
	s.mu.Lock()
	if s.gen != gen {
		s.mu.Unlock()
		l.close()
		return
	}
	if prev := s.conn; prev != nil && prev != l {
		prev.stopping = true
		defer prev.close()
	}
	old := s.listing
	s.conn = l
	s.listing = lst
	s.state = StateReady
	s.lastErr = ""
	startRelister := !s.relister
	s.relister = true
	// A re-list asked for on the connection this one replaces still has to
	// be made, on this one: the listing above may predate the notification.
	pending := s.relistAsked != s.relistDone
	s.mu.Unlock()
	if pending {
		s.requestRelist()
	}
	s.m.publish(Event{Kind: EventState, Server: s.spec.Name, State: StateReady})
	if old != nil {
		s.changed(diffListings(old, lst))
	}
	s.m.wg.Add(1)
	go s.supervise(l)
	if startRelister {
		s.m.wg.Add(1)
		go s.relistLoop()
	}
}

// supervise waits for the session to end. An end the host did not ask for
// is a crash: the server is restarted with backoff, unless it crashed too
// often, in which case it stays failed until Manager.Restart.
func (s *server) supervise(l *live) {
	defer s.m.wg.Done()
	waitErr := l.session.Wait()
	if f := s.m.crashSeen; f != nil {
		f(s.spec.Name)
	}
	l.cancel()
	l.dialed.proc.kill()

	s.mu.Lock()
	if l.stopping || s.conn != l {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	// Restarting from the moment the connection is gone, not from when
	// setState below publishes it: a call in between must not find the
	// server ready without a connection (and a retry must wait).
	s.state = StateRestarting
	gen := s.gen
	s.mu.Unlock()

	why := "the server closed the connection"
	if waitErr != nil && !errors.Is(waitErr, mcp.ErrConnectionClosed) {
		why = "the connection ended: " + waitErr.Error()
	}
	if exit := l.dialed.proc.exited(); exit != "" {
		why = "the server " + exit + "; " + why
	}
	if tail := s.stderr.Tail(5); tail != "" {
		why += "\nstderr:\n" + tail
	}
	for attempt := 1; ; attempt++ {
		if s.superseded(gen) {
			return
		}
		if n := s.recordCrash(); n >= s.m.opts.MaxCrashes {
			s.setState(StateFailed, fmt.Sprintf("crashed %d times within %s; it stays stopped until restarted\nlast: %s", n, s.m.opts.CrashWindow, why))
			return
		}
		s.setState(StateRestarting, why)
		select {
		case <-time.After(s.m.opts.Backoff(attempt)):
		case <-s.m.ctx.Done():
			return
		}
		if s.superseded(gen) {
			return
		}
		l2, lst, err := s.connect(s.m.ctx)
		if err == nil {
			s.mu.Lock()
			if s.gen == gen {
				s.restarts++
			}
			s.mu.Unlock()
			s.install(l2, lst, gen)
			return
		}
		if s.m.ctx.Err() != nil {
			return
		}
		why = "restart failed: " + err.Error()
	}
}

// sawClosed is told by a call that found l, the server's connection,
// closed (mcp.ErrConnectionClosed). Until supervise notices the end, the
// server would still look ready with a dead connection, so that the next
// calls, and a retry that waits for the server to be ready, would all be
// sent to it and come back not sent. It is marked restarting at once;
// supervise, which always follows a closed connection, restarts it.
func (s *server) sawClosed(l *live) {
	s.mu.Lock()
	// A connection closed on purpose (stop, a replacing install) is no
	// longer s.conn, so only a crash is marked here.
	mark := s.conn == l && s.state == StateReady
	if mark {
		s.state = StateRestarting
		s.lastErr = "the connection closed"
	}
	s.mu.Unlock()
	if mark {
		s.m.publish(Event{Kind: EventState, Server: s.spec.Name, State: StateRestarting, Err: "the connection closed"})
	}
}

// listed hands a listing to Options.OnListing before it can be seen.
func (s *server) listed(lst *listing) {
	if f := s.m.opts.OnListing; f != nil {
		f(&s.spec, lst.tools)
	}
}

// changed records and publishes a catalog difference, if there is one.
func (s *server) changed(d *Diff) {
	if d.Empty() {
		return
	}
	s.mu.Lock()
	if s.changes == nil {
		s.changes = map[string]Change{}
	}
	for _, c := range d.Changed {
		s.changes[c.Tool] = c
	}
	s.mu.Unlock()
	s.m.publish(Event{Kind: EventTools, Server: s.spec.Name, Diff: d})
}

// superseded reports whether the host took the server in hand since gen.
func (s *server) superseded(gen int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen != gen
}

// recordCrash notes a crash now and returns how many fall in the window.
func (s *server) recordCrash() int {
	now := s.m.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.crashes[:0]
	for _, t := range s.crashes {
		if now.Sub(t) < s.m.opts.CrashWindow {
			keep = append(keep, t)
		}
	}
	s.crashes = append(keep, now)
	return len(s.crashes)
}

// listChanged notes the server's word that its tools changed
// (notifications/tools/list_changed): from now until a re-list made after
// it completes, Relisting reports the server.
func (s *server) listChanged() {
	s.mu.Lock()
	s.relistAsked++
	s.mu.Unlock()
	s.requestRelist()
}

// relisting reports whether the server said its tools changed and they
// have not been listed again since.
func (s *server) relisting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relistAsked != s.relistDone
}

func (s *server) requestRelist() {
	select {
	case s.relist <- struct{}{}:
	default: // one is already pending; it will see this change too
	}
}

// maxRelistRetries bounds how often a failed re-list is asked for again
// before the server's next notification or restart; until one succeeds the
// server's calls are not decided (Manager.Relisting).
const maxRelistRetries = 3

// relistLoop lists tools again after list_changed notifications, at most
// once per RelistInterval.
func (s *server) relistLoop() {
	defer s.m.wg.Done()
	failed := 0 // re-lists in a row that failed while one was pending
	for {
		select {
		case <-s.relist:
		case <-s.m.ctx.Done():
			return
		}
		s.mu.Lock()
		l := s.conn
		asked := s.relistAsked // what a listing that starts now answers
		s.mu.Unlock()
		if l != nil {
			ctx, cancel := context.WithTimeout(s.m.ctx, s.startTimeout())
			lst, err := listTools(ctx, l.raw, s.spec.Name, s.m.opts.Limits)
			if err == nil {
				s.sdkListing(ctx, l, lst)
			}
			cancel()
			if err == nil {
				s.listed(lst)
			}
			s.mu.Lock()
			current := s.conn == l
			var old *listing
			if err == nil && current {
				old = s.listing
				s.listing = lst
				// Before the events below, so that a call waiting for
				// the re-list (Manager.Relisting) sees it done when woken.
				// A listing that failed leaves it pending: no call is
				// decided on a listing the server said is stale.
				s.relistDone = asked
			}
			s.mu.Unlock()
			if err != nil && current && failed < maxRelistRetries {
				// One failed re-list (a timeout, a dropped answer) must not
				// leave every later call waiting on a listing no one asks
				// for again: ask again after the interval, a few times.
				failed++
				s.requestRelist()
			} else if err == nil {
				failed = 0
			}
			if old != nil {
				if d := diffListings(old, lst); d.Empty() {
					s.m.publish(Event{Kind: EventToolsRelisted, Server: s.spec.Name})
				} else {
					s.changed(d)
				}
			}
		}
		select {
		case <-time.After(s.m.opts.RelistInterval):
		case <-s.m.ctx.Done():
			return
		}
	}
}

// stop closes the current connection on purpose.
func (s *server) stop() {
	s.mu.Lock()
	s.gen++
	l := s.conn
	s.conn = nil
	if l != nil {
		l.stopping = true
	}
	if s.state != StateFailed {
		s.state = StateStopped
	}
	s.mu.Unlock()
	if l != nil {
		l.close()
	}
}

// close ends the connection and whatever is left of its process: a stdio
// server's process group is gone within exitGrace+termGrace, even if it
// ignores the end of its input and SIGTERM.
func (l *live) close() {
	closed := make(chan struct{})
	go func() {
		_ = l.session.Close() // closes the server's input, waits for its exit
		l.cancel()
		close(closed)
	}()
	if p := l.dialed.proc; p != nil {
		stopProcessGroup(int(p.pid.Load()), closed)
	}
	<-closed
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Name: s.spec.Name, Transport: s.spec.Transport, State: s.state, Restarts: s.restarts,
		LastError: s.lastErr, Identity: s.spec.Identity(),
	}
	if s.conn != nil {
		st.ProtocolVersion = s.conn.protocol
		if s.conn.info != nil {
			st.ServerName, st.ServerVersion = s.conn.info.Name, s.conn.info.Version
		}
		if tc := s.conn.caps.tasks(); tc.Known {
			st.Tasks = &tc
		}
	}
	if s.listing != nil {
		st.Tools = len(s.listing.tools)
	}
	if s.state == StateFailed || s.state == StateRestarting {
		st.StderrTail = strings.TrimSpace(s.stderr.Tail(10))
	}
	if n := len(s.log); n > 0 {
		st.Log = append([]string(nil), s.log[max(0, n-10):]...)
	}
	st.Recent = s.recent.list()
	return st
}
