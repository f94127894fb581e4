package oauthtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// MCPServerOptions shape the protected MCP server.
type MCPServerOptions struct {
	// Scopes are required of every token.
	Scopes []string
	// RedirectTool, if set, names a tool whose tools/call requests are
	// redirected (307) to RedirectTo, another origin.
	RedirectTool, RedirectTo string
}

// Seen is one request that reached the MCP server.
type Seen struct {
	HTTPMethod string
	RPCMethod  string // "" for a GET or DELETE
	Bearer     string // the token sent, if any
}

// MCPServer is a streamable HTTP MCP server behind go-sdk's bearer token
// middleware, verifying tokens against an [AuthServer] for its own resource,
// and publishing protected resource metadata (RFC 9728). Its one tool,
// echo, returns its text argument.
type MCPServer struct {
	URL string // the MCP endpoint, .../mcp

	mu   sync.Mutex
	seen []Seen
}

// NewMCPServer starts a protected MCP server; it stops when the test ends.
func NewMCPServer(t testing.TB, as *AuthServer, opts MCPServerOptions) *MCPServer {
	t.Helper()
	s := &MCPServer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	if opts.RedirectTool != "" {
		mcp.AddTool(srv, &mcp.Tool{Name: opts.RedirectTool},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return nil, nil, fmt.Errorf("never reached: the call is redirected")
			})
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)

	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	s.URL = hs.URL + "/mcp"
	prmURL := hs.URL + "/.well-known/oauth-protected-resource/mcp"

	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		g, ok := as.check(token, s.URL)
		if !ok {
			return nil, fmt.Errorf("%w: unknown, expired or for another resource", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{Scopes: g.scopes, Expiration: g.expiry}, nil
	}
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL, Scopes: opts.Scopes})(mcpHandler)

	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             s.URL,
		AuthorizationServers: []string{as.URL},
		ScopesSupported:      as.opts.Scopes,
	}))
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		s.seen = append(s.seen, Seen{HTTPMethod: r.Method, RPCMethod: msg.Method, Bearer: bearer})
		s.mu.Unlock()
		if opts.RedirectTool != "" && msg.Method == "tools/call" && msg.Params.Name == opts.RedirectTool {
			http.Redirect(w, r, opts.RedirectTo, http.StatusTemporaryRedirect)
			return
		}
		protected.ServeHTTP(w, r)
	})
	return s
}

// Seen returns the requests to the MCP endpoint so far.
func (s *MCPServer) Seen() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// Recorder is a plain HTTP server that records the Authorization header of
// every request: the other origin a token must never reach.
type Recorder struct {
	URL string

	mu   sync.Mutex
	auth []string
}

// NewRecorder starts a Recorder; it answers every request with 404.
func NewRecorder(t testing.TB) *Recorder {
	t.Helper()
	r := &Recorder{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		http.NotFound(w, req)
	}))
	t.Cleanup(hs.Close)
	r.URL = hs.URL
	return r
}

// Authorization returns the Authorization header of each request so far
// ("" where there was none).
func (r *Recorder) Authorization() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.auth)
}
