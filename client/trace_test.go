package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"time"

	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// traced collects what a Tracer is given.
type traced struct {
	mu   sync.Mutex
	msgs []tracedMsg
}

type tracedMsg struct {
	server string
	dir    Direction
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
}

func (tr *traced) trace(server string, dir Direction, msg []byte) {
	m := tracedMsg{server: server, dir: dir}
	_ = json.Unmarshal(msg, &m)
	tr.mu.Lock()
	tr.msgs = append(tr.msgs, m)
	tr.mu.Unlock()
}

// TestTraceOverHTTP: over streamable HTTP (answers as JSON bodies and as
// event streams) and the legacy SSE transport, the Tracer sees every
// request mcphost sent and every answer, each answer with its request's id.
func TestTraceOverHTTP(t *testing.T) {
	f, err := fixtures.New("tasks", fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		transport string
		handler   http.Handler
	}{
		{"json", TransportHTTP, f.HTTPHandler()},
		{"events", TransportHTTP, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.Server }, &mcp.StreamableHTTPOptions{})},
		{"sse", TransportSSE, f.SSEHandler()},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			t.Cleanup(srv.Close)
			tr := &traced{}
			m := startManager(t, []Spec{{Name: "web", Transport: c.transport, URL: srv.URL}}, Options{HTTPTransport: httpTransport(t), Trace: tr.trace})
			callOK(t, m, "web", "get_task", `{"id":"T-1"}`)
			m.Close()

			tr.mu.Lock()
			defer tr.mu.Unlock()
			sent := map[string]string{} // id → method
			var methods []string
			for _, msg := range tr.msgs {
				if msg.server != "web" {
					t.Errorf("a message traced for server %q", msg.server)
				}
				if msg.dir == Sent && msg.Method != "" {
					methods = append(methods, msg.Method)
					if len(msg.ID) > 0 {
						sent[string(msg.ID)] = msg.Method
					}
				}
			}
			for _, want := range []string{"initialize", "notifications/initialized", "tools/list", "tools/call"} {
				if !strings.Contains(" "+strings.Join(methods, " ")+" ", " "+want+" ") {
					t.Errorf("sent %v, want %s among them", methods, want)
				}
			}
			answered := map[string]bool{}
			for _, msg := range tr.msgs {
				if msg.dir == Received && msg.Method == "" && len(msg.ID) > 0 {
					answered[string(msg.ID)] = true
					if sent[string(msg.ID)] == "tools/call" && !strings.Contains(string(msg.Result), "launch announcement") {
						t.Errorf("the traced answer to tools/call is %s, want the task", msg.Result)
					}
				}
			}
			for id, method := range sent {
				if !answered[id] {
					t.Errorf("request %s (%s) was sent, but no answer to it was traced", id, method)
				}
			}
		})
	}
}

// TestRecentMessages: every server keeps its last messages for the servers
// panel, without --trace, each answer named after its request, and at most
// recentMessages of them.
func TestRecentMessages(t *testing.T) {
	f, err := fixtures.New("tasks", fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.HTTPHandler())
	t.Cleanup(srv.Close)
	m := startManager(t, []Spec{fixtureSpec(t, "stdio", "tasks"), {Name: "web", Transport: TransportHTTP, URL: srv.URL}}, Options{HTTPTransport: httpTransport(t)})
	for _, name := range []string{"stdio", "web"} {
		callOK(t, m, name, "get_task", `{"id":"T-1"}`)
		st, _ := statusOf(m, name)
		n := len(st.Recent)
		if n < 2 {
			t.Fatalf("%s: %d recent messages, want the call and its answer at least", name, n)
		}
		call, answer := st.Recent[n-2], st.Recent[n-1]
		if call.Dir != Sent || call.Method != "tools/call" || call.ID == "" || answer.Dir != Received || answer.Method != "tools/call" || answer.ID != call.ID || answer.Size == 0 {
			t.Errorf("%s: the last two messages are %+v and %+v, want the call sent and its answer, paired", name, call, answer)
		}
		for range recentMessages {
			callOK(t, m, name, "get_task", `{"id":"T-1"}`)
		}
		if st, _ := statusOf(m, name); len(st.Recent) != recentMessages {
			t.Errorf("%s: %d recent messages, want at most %d", name, len(st.Recent), recentMessages)
		}
	}
}

// BenchmarkRecentAdd is what keeping the recent messages costs each
// message of every connection.
func BenchmarkRecentAdd(b *testing.B) {
	r := &recentRing{}
	id, _ := jsonrpc.MakeID(int64(7))
	req := &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"get_task","arguments":{"id":"T-1"}}`)}
	resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[]}`)}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		r.add(summarize(Sent, req, now))
		r.add(summarize(Received, resp, now))
	}
}
