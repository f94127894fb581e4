//go:build linux

package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeSIGTERMRecordsTheOutcome signals `mcphost serve`, on standard
// input and output and over HTTP, while a call runs on a server that never
// answers it and ignores SIGTERM: serve cancels the call rather than
// waiting for it, records its outcome (unknown: it was sent) after its
// intent before it closes the audit log, so the log verifies with no open
// intent, and over HTTP tells the client the outcome is unknown.
func TestServeSIGTERMRecordsTheOutcome(t *testing.T) {
	bin := buildMcphost(t)
	const token = "0123456789abcdefghijklmnop"
	// A 2026-07-28 client's call is parked (it outlives its request); a
	// 2025-11-25 client's runs in its request.
	for _, mode := range []string{"stdio", "http", "http-2025-11-25"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"--allow", "hang/wait", "serve"}
			if mode != "stdio" {
				args = append(args, "--http", "127.0.0.1:0", "--token-file", "$DIR/token")
			}
			h := newHangingCall(t, bin, args...)
			if err := os.WriteFile(filepath.Join(h.dir, "token"), []byte(token+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stderr lockedText
			errR, errW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			h.cmd.Stderr = errW
			url := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(errR)
				for sc.Scan() {
					stderr.add(sc.Text())
					if u, ok := strings.CutPrefix(sc.Text(), "mcphost: serving MCP on "); ok {
						url <- u
					}
				}
			}()
			var transport mcp.Transport
			if mode == "stdio" {
				inR, inW, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				outR, outW, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				h.cmd.Stdin, h.cmd.Stdout = inR, outW
				transport = &mcp.IOTransport{Reader: outR, Writer: inW}
				h.start(t)
				inR.Close()
				outW.Close()
			} else {
				h.start(t)
				select {
				case u := <-url:
					transport = &mcp.StreamableClientTransport{Endpoint: u,
						HTTPClient: &http.Client{Transport: withToken{token, http.DefaultTransport}}}
				case <-ctx.Done():
					t.Fatalf("serve printed no address; stderr:\n%s", stderr.String())
				}
			}
			errW.Close()
			var copts *mcp.ClientSessionOptions
			if mode == "http-2025-11-25" {
				copts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "shutdown-test", Version: "1"}, nil).Connect(ctx, transport, copts)
			if err != nil {
				t.Fatalf("connect: %v; stderr:\n%s", err, stderr.String())
			}
			defer cs.Close()
			type answer struct {
				res *mcp.CallToolResult
				err error
			}
			answered := make(chan answer, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hang__wait", Arguments: map[string]any{}})
				answered <- answer{res, err}
			}()
			h.waitCalled(t)
			if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			code, _ := h.wait(t)
			if code != 0 {
				t.Errorf("serve exited %d after SIGTERM, want 0; stderr:\n%s", code, stderr.String())
			}
			checkUnknownOutcome(t, h.audit)
			f, err := os.Open(h.audit)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := audit.Verify(f)
			if err != nil || !rep.OK() || len(rep.OpenIntents) != 0 {
				t.Fatalf("audit verify: %v, problems %v, open intents %v; want an intact log with every intent closed", err, rep.Problems, rep.OpenIntents)
			}
			select {
			case a := <-answered:
				if a.err != nil && mode == "stdio" {
					// Standard input and output end with serve: the
					// outcome is in the log, not on the closed pipe.
					break
				}
				if a.err != nil {
					t.Fatalf("the client got no answer: %v", a.err)
				}
				if !a.res.IsError || !strings.Contains(resultText(a.res), "unknown") {
					t.Errorf("the client was told %q, want an error that the outcome is unknown", resultText(a.res))
				}
			case <-ctx.Done():
				t.Fatal("the client's call never ended")
			}
		})
	}
}

// withToken sends the bearer token with every request.
type withToken struct {
	token string
	next  http.RoundTripper
}

func (w withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+w.token)
	return w.next.RoundTrip(r)
}

// lockedText collects lines written by one goroutine and read by another.
type lockedText struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedText) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(line + "\n")
}

func (l *lockedText) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
