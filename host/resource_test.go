package host

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsManager is a manager over an in-process server with one resource;
// reads counts the reads the server served.
func docsManager(t *testing.T, reads *atomic.Int64) *client.Manager {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddResource(&mcp.Resource{URI: "file:///a.md", Name: "A"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		reads.Add(1)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "contents of A"}}}, nil
	})
	spec := client.Spec{Name: "docs", Dial: func(context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	m := client.New([]client.Spec{spec}, client.Options{})
	t.Cleanup(func() { m.Close() })
	m.Start(context.Background())
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("docs did not start: %+v", st)
	}
	return m
}

type approveAsker struct{ asked atomic.Int64 }

func (a *approveAsker) Ask(context.Context, *Question) (Answer, error) {
	a.asked.Add(1)
	return Answer{Approve: true, Scope: decide.ScopeOnce}, nil
}

// TestReadResourceIsGated: a read of a resource is decided like a call of
// docs/resources/read: a trusted server's read runs (and is audited, and
// taints the session as a private read); an untrusted server's asks (and
// counts as open-world content), and
// headless it is blocked; a deny rule stops it. Only reads that were let
// through reach the server.
func TestReadResourceIsGated(t *testing.T) {
	deny := decide.RuleSpec{Effect: decide.Deny, Source: "test", Raw: json.RawMessage(`"docs/resources/read"`)}
	cases := []struct {
		name      string
		trusted   bool
		mode      decide.Mode
		rules     []decide.RuleSpec
		status    Status
		decidedBy string
		asked     int64
	}{
		{"trusted reads silently", true, decide.Interactive, nil, StatusSuccess, "auto", 0},
		{"untrusted asks", false, decide.Interactive, nil, StatusSuccess, "user:once", 1},
		{"untrusted headless is blocked", false, decide.Headless, nil, StatusBlocked, "headless", 0},
		{"a deny rule wins over trust", true, decide.Interactive, []decide.RuleSpec{deny}, StatusDenied, "rule:", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var reads atomic.Int64
			m := docsManager(t, &reads)
			p, err := decide.Compile(c.rules, decide.Options{AutoApprove: decide.ApproveAdditive})
			if err != nil {
				t.Fatal(err)
			}
			log := &recLog{}
			asker := &approveAsker{}
			g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return c.trusted }, Asker: asker, Mode: c.mode, Audit: log})
			res, r := g.ReadResource(context.Background(), "docs", "file:///a.md")
			if r.Status != c.status || !strings.HasPrefix(r.DecidedBy, c.decidedBy) {
				t.Fatalf("status %s by %s (%v), want %s by %s", r.Status, r.DecidedBy, r.Err, c.status, c.decidedBy)
			}
			if asker.asked.Load() != c.asked {
				t.Errorf("asked %d times, want %d", asker.asked.Load(), c.asked)
			}
			wantReads := int64(0)
			if c.status == StatusSuccess {
				wantReads = 1
				if res == nil || len(res.Contents) != 1 || res.Contents[0].Text != "contents of A" {
					t.Fatalf("contents %+v", res)
				}
			} else if res != nil {
				t.Fatal("contents returned for a read that did not run")
			}
			if reads.Load() != wantReads {
				t.Fatalf("the server served %d reads, want %d", reads.Load(), wantReads)
			}
			var kinds []string
			for _, rec := range log.records() {
				if rec.Tool != ResourceReadTool || string(rec.Args) != `{"uri":"file:///a.md"}` {
					t.Errorf("record for %s %s", rec.Tool, rec.Args)
				}
				kinds = append(kinds, string(rec.Kind))
			}
			want := "outcome"
			if c.status == StatusSuccess {
				want = "intent outcome"
			}
			if got := strings.Join(kinds, " "); got != want {
				t.Errorf("audit records %q, want %q", got, want)
			}
			// A trusted server's resource is its private data; an untrusted
			// one's counts as open-world content, as its tools' output does.
			open, priv := g.Taint()
			if ran := c.status == StatusSuccess; priv != (ran && c.trusted) || open != (ran && !c.trusted) {
				t.Errorf("taint open %v private %v after %s (trusted %v)", open, priv, c.status, c.trusted)
			}
		})
	}
}

// recLog keeps the audit records in memory.
type recLog struct {
	mu   sync.Mutex
	recs []*audit.Record
}

func (l *recLog) Append(r *audit.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}

func (l *recLog) records() []*audit.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*audit.Record(nil), l.recs...)
}
