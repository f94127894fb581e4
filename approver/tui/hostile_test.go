package tui

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	xansi "github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/termtest"
)

// TestHostileServerThroughTheSocket asks, through a real broker, about the
// hostile fixture's tools whose names carry escapes, a bidi override and a
// zero-width space, and draws the questions as they arrive: nothing a
// terminal would act on reaches the screen, and the names are shown
// escaped.
func TestHostileServerThroughTheSocket(t *testing.T) {
	dir := t.TempDir()
	b, err := approver.Listen(approver.SocketPath(filepath.Join(dir, "state")), approver.Options{Label: "serve\x1b]0;pwned\x07"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	spec := client.Spec{Name: "hostile", Dial: func(ctx context.Context) (mcp.Transport, error) {
		f, err := fixtures.New("hostile", fixtures.Options{})
		if err != nil {
			return nil, err
		}
		return f.InMemory(ctx)
	}}
	m := client.New([]client.Spec{spec}, client.Options{})
	defer m.Close()
	m.Start(context.Background())
	p, err := decide.Compile(nil, decide.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	gate := host.NewGate(host.GateOptions{Catalog: m, Policy: p, Asker: b, Mode: decide.Interactive, Audit: log})

	conn, err := approver.Dial(context.Background(), b.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hello, err := conn.Hello()
	if err != nil {
		t.Fatal(err)
	}
	s := newScreen(t, hello)
	s.m.cfg.Answer = conn.Answer
	var names []string
	for _, tl := range m.Tools() {
		if strings.ContainsAny(tl.Name, "\x1b\u202e\u200b") {
			names = append(names, tl.Name)
		}
	}
	if len(names) < 2 {
		t.Fatalf("the hostile fixture lists %d tools with hostile names, want at least 2", len(names))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan *host.Result, len(names))
	for _, name := range names {
		go func() {
			done <- gate.Call(ctx, host.Call{Server: "hostile", Tool: name, Args: json.RawMessage(`{"x":"\u001b[2J"}`)})
		}()
	}
	for range names {
		ev, err := conn.Next()
		if err != nil {
			t.Fatal(err)
		}
		q, ok := ev.(*approver.Question)
		if !ok {
			t.Fatalf("got %T, want a question", ev)
		}
		s.update(EventMsg{ev})
		out := s.m.View().Content
		if u := termtest.Unsafe(out); u != "" {
			t.Fatalf("the question about %q reaches the terminal unsanitized: %s", q.Tool, u)
		}
		if !strings.Contains(stripANSI(out), "hostile/") || strings.Contains(out, q.Tool) {
			t.Fatalf("the raw name %q is drawn as it came, or not at all:\n%s", q.Tool, out)
		}
		s.pause()
		s.key("esc") // deny (at tier 3 "n" would be a letter of the name); the next question opens
	}
	for range names {
		if r := <-done; r.Status != host.StatusDenied {
			t.Fatalf("%s: %s, want denied", r.Tool, r.Status)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the calls ended by their deadline, not by the answers sent through the socket")
	}
}

func stripANSI(s string) string { return xansi.Strip(s) }
