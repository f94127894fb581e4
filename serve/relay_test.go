package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askerRuns counts the runs of the askerServers' tools by their label
// argument.
var askerRuns sync.Map // label → *atomic.Int32

// askerAnswered holds, by label, the answers the last such call got.
var askerAnswered sync.Map // label → string

// askerSessions holds, by label, the session of the server whose keep
// tool was called with it: a test can send the host a request from that
// server when no call runs there.
var askerSessions sync.Map // label → *mcp.ServerSession

func askerRan(label string) int {
	n, _ := askerRuns.LoadOrStore(label, new(atomic.Int32))
	return int(n.(*atomic.Int32).Load())
}

// askerServer is a real MCP server, in process, whose tool ask puts a
// question to the host during the call (one per round, rounds of them,
// each after the last was answered) and returns the answers, whose tool
// ask_write does the same as a destructive write (the gate asks before it
// runs), whose prompt greet asks a question too, and whose
// tool roots lists the host's roots during the call (their count, then
// each URI and name on a line of its own), whose tool keep keeps its
// session (askerSessions), and whose
// tool log sends log messages at three levels (data: the label argument,
// the level, and an escape sequence) during the call. Each starts its work
// only once `wait` calls of the server run at the same time, so that a test
// can hold two in flight; they meet again before they return.
func askerServer(context.Context) (mcp.Transport, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}, Prompts: &mcp.PromptCapabilities{}}})
	// meet returns once n calls of the server have met here (a cyclic
	// barrier: every call of a round names the same n).
	var mu sync.Mutex
	arrived := 0
	round := make(chan struct{})
	meet := func(ctx context.Context, n int) error {
		if n <= 1 {
			return nil
		}
		mu.Lock()
		arrived++
		ch := round
		if arrived == n {
			arrived = 0
			close(round)
			round = make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	type args struct {
		Wait   int
		Label  string
		Rounds int
		Flood  int // more info messages to send after the three
		Long   int // the bytes of one more info message, sent first
	}
	f := false
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}
	ask := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a args
		_ = json.Unmarshal(req.Params.Arguments, &a)
		n, _ := askerRuns.LoadOrStore(a.Label, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		if err := meet(ctx, a.Wait); err != nil {
			return nil, err
		}
		var answers []string
		for i := range max(a.Rounds, 1) {
			msg := "who is there?"
			if i > 0 {
				msg = fmt.Sprintf("who is there, round %d?", i+1)
			}
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg,
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, err
			}
			answers = append(answers, fmt.Sprintf("%s %v", res.Action, res.Content["who"]))
		}
		askerAnswered.Store(a.Label, strings.Join(answers, ", "))
		// Keep the calls in flight together until each was answered.
		if err := meet(ctx, a.Wait); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(answers, ", ")}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: read}, ask)
	srv.AddTool(&mcp.Tool{Name: "ask_write", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &f}}, ask)
	srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "what should I call you?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
			Content: &mcp.TextContent{Text: fmt.Sprintf("%s %v", res.Action, res.Content["who"])}}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: read},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a args
			_ = json.Unmarshal(req.Params.Arguments, &a)
			if err := meet(ctx, a.Wait); err != nil {
				return nil, err
			}
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			if err := meet(ctx, a.Wait); err != nil {
				return nil, err
			}
			lines := []string{fmt.Sprint(len(res.Roots))}
			for _, r := range res.Roots {
				lines = append(lines, r.URI+" "+r.Name)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(lines, "\n")}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "keep", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: read},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a args
			_ = json.Unmarshal(req.Params.Arguments, &a)
			askerSessions.Store(a.Label, req.Session)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "kept"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: read},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a args
			_ = json.Unmarshal(req.Params.Arguments, &a)
			if err := meet(ctx, a.Wait); err != nil {
				return nil, err
			}
			if a.Long > 0 {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "lg", Data: strings.Repeat("x", a.Long)})
			}
			for _, l := range []mcp.LoggingLevel{"debug", "info", "error"} {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "lg", Data: a.Label + " " + string(l) + " \x1b[31mred\x1b[0m"})
			}
			for i := range a.Flood {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "lg", Data: fmt.Sprintf("flood %d", i)})
			}
			// Keep the calls in flight together until each has logged.
			if err := meet(ctx, a.Wait); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// answerer is a client that answers every question with its own name and
// keeps the messages it was asked and the log messages it received.
type answerer struct {
	name    string
	version string // the protocol version it asks for ("": 2025-11-25)
	roots   []*mcp.Root
	noRoots bool // it does not declare the roots capability
	mu      sync.Mutex
	asks    []string
	logs    []*mcp.LoggingMessageParams
	seen    int           // log messages waitLogs has counted
	got     chan struct{} // signalled, without blocking, when a log message arrives
}

func newAnswerer(name string) *answerer { return &answerer{name: name, got: make(chan struct{}, 1)} }

// connect connects a to w in memory, or over streamable HTTP to the
// handler at url when url is set.
func (a *answerer) connect(t *testing.T, w *world, url ...string) *mcp.ClientSession {
	t.Helper()
	var caps *mcp.ClientCapabilities // nil: the SDK's, roots included
	if a.noRoots {
		caps = &mcp.ClientCapabilities{}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: a.name, Version: "1"}, &mcp.ClientOptions{
		Capabilities: caps,
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.mu.Lock()
			a.asks = append(a.asks, req.Params.Message)
			a.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": a.name}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled by " + a.name}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			a.mu.Lock()
			a.logs = append(a.logs, req.Params)
			a.mu.Unlock()
			select { // never holds up the client's connection
			case a.got <- struct{}{}:
			default:
			}
		},
	})
	cl.AddRoots(a.roots...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var ct mcp.Transport
	if len(url) > 0 {
		close(done)
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		ct = &mcp.StreamableClientTransport{Endpoint: url[0], HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}
	} else {
		st, mem := mcp.NewInMemoryTransports()
		ct = mem
		go func() {
			defer close(done)
			_ = w.srv.Run(ctx, st)
		}()
	}
	v := a.version
	if v == "" {
		v = "2025-11-25"
	}
	cs, err := cl.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

func (a *answerer) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asks...)
}

// waitLogs waits for n log messages more than it has waited for before,
// and returns every one received.
func (a *answerer) waitLogs(t *testing.T, n int) []*mcp.LoggingMessageParams {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		if len(a.logs) >= a.seen+n {
			a.seen += n
			logs := append([]*mcp.LoggingMessageParams(nil), a.logs...)
			a.mu.Unlock()
			return logs
		}
		a.mu.Unlock()
		select {
		case <-a.got:
		case <-timeout:
			t.Fatalf("%s: fewer than %d log messages arrived", a.name, n)
		}
	}
}

// callText calls name on cs and returns the result's text.
func callText(cs *mcp.ClientSession, name, args string) (string, error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		return "", err
	}
	return text(res), nil
}

// With two clients connected, a server's question during a call goes to
// the client whose call is running on that server, each to its own; when
// calls of both run on the same server, it cannot be told whose it is and
// the headless rule (decline) answers it.
func TestAServersQuestionGoesToTheClientWhoseCallRunsThere(t *testing.T) {
	t.Run("in-memory", func(t *testing.T) { questionsGoToTheirClients(t, false) })
	t.Run("http", func(t *testing.T) { questionsGoToTheirClients(t, true) })
}

func questionsGoToTheirClients(t *testing.T, overHTTP bool) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	var url []string
	if overHTTP {
		ts := httptest.NewServer(w.srv.Handler("tok"))
		t.Cleanup(ts.Close)
		url = append(url, ts.URL)
	}
	a, b := newAnswerer("alice"), newAnswerer("bob")
	csA, csB := a.connect(t, w, url...), b.connect(t, w, url...)

	call := func(wait int, nameA, nameB string) (gotA, gotB string) {
		var wg sync.WaitGroup
		var errA, errB error
		wg.Go(func() { gotA, errA = callText(csA, nameA, fmt.Sprintf(`{"wait":%d}`, wait)) })
		wg.Go(func() { gotB, errB = callText(csB, nameB, fmt.Sprintf(`{"wait":%d}`, wait)) })
		wg.Wait()
		if errA != nil || errB != nil {
			t.Fatalf("calls: %v, %v", errA, errB)
		}
		return gotA, gotB
	}
	gotA, gotB := call(1, "ask1__ask", "ask2__ask")
	if gotA != "accept alice" || gotB != "accept bob" {
		t.Fatalf("answers %q and %q, want each client's own (accept alice, accept bob)", gotA, gotB)
	}
	askedA, askedB := a.asked(), b.asked()
	if len(askedA) != 1 || !strings.Contains(askedA[0], "The server ask1 asks") || !strings.Contains(askedA[0], "who is there?") {
		t.Fatalf("alice was asked %q, want ask1's one question marked as its words", askedA)
	}
	if len(askedB) != 1 || !strings.Contains(askedB[0], "The server ask2 asks") {
		t.Fatalf("bob was asked %q, want ask2's one question", askedB)
	}

	// Both calls in flight on ask1 at once: neither client is asked.
	gotA, gotB = call(2, "ask1__ask", "ask1__ask")
	if gotA != "decline <nil>" || gotB != "decline <nil>" {
		t.Fatalf("answers %q and %q with two calls running on one server, want both declined", gotA, gotB)
	}
	if len(a.asked()) != 1 || len(b.asked()) != 1 {
		t.Fatalf("asked %q and %q, want no more questions", a.asked(), b.asked())
	}
}

// A server's log messages during a call reach the client that made it, at
// or above the level it set, sanitized and marked with the server's name;
// another connected client does not get them.
func TestAServersLogReachesTheCallingClient(t *testing.T) {
	w := newWorld(t, worldOpts{askers: true})
	a, b := newAnswerer("alice"), newAnswerer("bob")
	csA, csB := a.connect(t, w), b.connect(t, w)
	ctx := context.Background()
	if err := csA.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if err := csB.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if got, err := callText(csA, "ask1__log", `{}`); err != nil || got != "logged" {
		t.Fatalf("log: %q %v", got, err)
	}
	logs := a.waitLogs(t, 2)
	if len(logs) != 2 || logs[0].Level != "info" || logs[1].Level != "error" {
		t.Fatalf("alice got %d messages (%v), want info and error, not debug", len(logs), levels(logs))
	}
	for _, l := range logs {
		d, _ := l.Data.(string)
		if l.Logger != "ask1/lg" || strings.Contains(d, "\x1b") || !strings.Contains(d, "red") {
			t.Errorf("message %q from %q, want the server's name as logger and no escape sequence", d, l.Logger)
		}
	}
	// Bob's own call brings him its three messages, and only those: had
	// alice's reached him, they would have come first.
	if _, err := callText(csB, "ask1__log", `{}`); err != nil {
		t.Fatal(err)
	}
	if got := b.waitLogs(t, 3); len(got) != 3 || got[0].Level != "debug" {
		t.Fatalf("bob got %v, want his own call's debug, info and error", levels(got))
	}

	// Calls of both running on ask1 at once: its messages could be either's,
	// so neither gets them; alice's next call alone brings hers again.
	var wg sync.WaitGroup
	for _, cs := range []*mcp.ClientSession{csA, csB} {
		wg.Go(func() {
			if got, err := callText(cs, "ask1__log", `{"wait":2,"label":"both"}`); err != nil || got != "logged" {
				t.Errorf("log with two calls running: %q %v", got, err)
			}
		})
	}
	wg.Wait()
	// Each client's next call alone brings its own messages; had the
	// shared calls' messages reached it, they would have come first.
	for _, c := range []struct {
		who    *answerer
		cs     *mcp.ClientSession
		before int // messages received before the shared calls
		n      int // messages of one call at the client's level
	}{{a, csA, 2, 2}, {b, csB, 3, 3}} {
		if _, err := callText(c.cs, "ask1__log", `{"label":"solo"}`); err != nil {
			t.Fatal(err)
		}
		logs := c.who.waitLogs(t, c.n)
		for _, l := range logs[c.before:] {
			if d, _ := l.Data.(string); !strings.HasPrefix(d, "solo ") {
				t.Fatalf("%s got %q while two clients' calls ran on the server, want only its own call's", c.who.name, d)
			}
		}
	}
}

// TestAServersLongLogLineIsCut: a server's log message of 8 KiB reaches
// the client cut to MaxLogData bytes, with a note of what was cut.
func TestAServersLongLogLineIsCut(t *testing.T) {
	w := newWorld(t, worldOpts{askers: true})
	a := newAnswerer("alice")
	cs := a.connect(t, w)
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if got, err := callText(cs, "ask1__log", `{"long":8192}`); err != nil || got != "logged" {
		t.Fatalf("log: %q %v", got, err)
	}
	logs := a.waitLogs(t, 1)
	d, _ := logs[0].Data.(string)
	if want := strings.Repeat("x", MaxLogData) + "… [" + fmt.Sprint(8192-MaxLogData) + " bytes cut]"; d != want {
		t.Fatalf("the long message reached the client as %d bytes (%.20q…), want its first %d and a note of the cut", len(d), d, MaxLogData)
	}
}

// TestAServersLogFloodIsBoundedPerCall: a server that logs 2,000 messages
// during one call gets at most LogBurst of them to its caller at once and
// LogRate a second after that; the client is told once that the rest were
// dropped.
func TestAServersLogFloodIsBoundedPerCall(t *testing.T) {
	w := newWorld(t, worldOpts{askers: true})
	a := newAnswerer("alice")
	cs := a.connect(t, w)
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	const flood = 2000
	start := time.Now()
	if got, err := callText(cs, "ask1__log", fmt.Sprintf(`{"flood":%d}`, flood)); err != nil || got != "logged" {
		t.Fatalf("log: %q %v", got, err)
	}
	elapsed := time.Since(start)
	// A message relayed is sent before the server's next one is read, so
	// every relayed message has arrived once the notice has: wait for it.
	deadline := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		logs := append([]*mcp.LoggingMessageParams(nil), a.logs...)
		a.mu.Unlock()
		notices, relayed := 0, 0
		for _, l := range logs {
			if l.Logger == "mcphost" {
				notices++
				if d, _ := l.Data.(string); !strings.Contains(d, "ask1 sends log messages faster than") {
					t.Errorf("notice %q does not name the server and the rate", d)
				}
			} else {
				relayed++
			}
		}
		if notices > 0 {
			most := LogBurst + int(elapsed.Seconds()*LogRate) + 1
			if relayed > most || relayed < LogBurst || notices != 1 {
				t.Fatalf("%d of %d messages relayed in %v with %d notices; want between %d and %d, and one notice", relayed, flood+2, elapsed, notices, LogBurst, most)
			}
			return
		}
		select {
		case <-a.got:
		case <-deadline:
			t.Fatalf("no notice that messages were dropped; %d relayed of %d", relayed, flood+2)
		}
	}
}

func levels(logs []*mcp.LoggingMessageParams) []string {
	var out []string
	for _, l := range logs {
		out = append(out, string(l.Level))
	}
	return out
}
