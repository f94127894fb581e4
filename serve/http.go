package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/netcheck"
)

// Handler serves streamable HTTP at both protocol versions, each request
// only with "Authorization: Bearer <token>", and a browser's request only
// from the server's own origin (the spec's DNS-rebinding rule; the SDK also
// refuses a non-loopback Host on a loopback address). A request of
// 2026-07-28 or later (NewProtocol) is served statelessly: its client is
// one identity for serve's life (see statelessSession); every other request
// goes to a stateful handler, every client its own session. Both serve the
// same mcp.Server, so they offer the same tools, prompts and resources.
func (s *Server) Handler(token string) http.Handler {
	return Guard(token, s.routes())
}

// DefaultSessionTimeout is how long a 2025-11-25 HTTP session may go
// without a request before serve closes it, its grants and taint with it.
// Without a limit, anyone holding the token could open sessions until
// serve's memory ran out (each costs about 17 KiB). A request that runs
// (a long call) keeps its session open however long it takes.
const DefaultSessionTimeout = 30 * time.Minute

// routes sends each request to the handler of its protocol version.
func (s *Server) routes() http.Handler {
	get := func(*http.Request) *mcp.Server { return s.srv }
	idle := s.o.SessionTimeout
	if idle <= 0 {
		idle = DefaultSessionTimeout
	}
	stateful := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{SessionTimeout: idle})
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !NewProtocol(r) {
			stateful.ServeHTTP(w, r)
			return
		}
		// The tool handlers see this in their context: the go-sdk session
		// of such a request lives for the request only.
		stateless.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), statelessKey{}, true)))
	})
}

// statelessKey marks, in a request's context, a request served by the
// stateless handler.
type statelessKey struct{}

// isStateless reports whether ctx belongs to a request of the stateless
// handler.
func isStateless(ctx context.Context) bool {
	v, _ := ctx.Value(statelessKey{}).(bool)
	return v
}

// newProtocol is the first protocol version without sessions.
const newProtocol = "2026-07-28"

// maxPeek bounds how much of a request body NewProtocol reads: the SDK's
// own limit, past which the request is refused anyway.
const maxPeek = mcp.DefaultMaxRequestBodyBytes

// NewProtocol reports whether r speaks protocol 2026-07-28 or later: its
// MCP-Protocol-Version header says so or, only when it has no such header
// and belongs to no session, the protocol version in its body's
// params._meta does. A request that says neither (every request of a
// 2025-11-25 session, and an initialize) is not, so it keeps its session.
// Only a request without the header and the session id has its body read,
// at most up to maxPeek, and put back whole for the handler.
func NewProtocol(r *http.Request) bool {
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" {
		return v >= newProtocol
	}
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil || len(b) > maxPeek {
		return false
	}
	var msg struct {
		Params struct {
			Meta struct {
				Version json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	var v string
	if json.Unmarshal(b, &msg) != nil || json.Unmarshal(msg.Params.Meta.Version, &v) != nil {
		return false
	}
	return v >= newProtocol
}

// HandlerWithoutToken serves streamable HTTP like Handler but without the
// bearer token (--insecure-no-token): any process on this machine may call
// it. The Origin is still checked. The caller allows it only on an address
// CheckNoToken accepts.
func (s *Server) HandlerWithoutToken() http.Handler {
	return checkOrigin(s.routes())
}

// CheckNoToken refuses to serve without the token anywhere but a loopback
// address: with --allow-remote, or on an address other machines can reach,
// no token would mean anyone on the network runs the person's tools.
func CheckNoToken(addr string, remote bool) error {
	if remote {
		return errors.New("--insecure-no-token cannot be used with --allow-remote: without the token anyone who reaches the address could call the tools; drop one of them")
	}
	loop, err := loopbackListen(addr)
	if err != nil {
		return err
	}
	if !loop {
		return fmt.Errorf("--insecure-no-token needs a loopback --http address (such as 127.0.0.1:8765), not %q", addr)
	}
	return nil
}

// loopbackListen reports whether the HOST:PORT address addr listens on
// this machine only: its host is "localhost" or a loopback address
// (netcheck.IsLoopbackHost, by the name alone). An empty host (":8765")
// listens on every interface.
func loopbackListen(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--http %q: want HOST:PORT, such as 127.0.0.1:8765: %v", addr, err)
	}
	return netcheck.IsLoopbackHost(host), nil
}

// Guard lets a request through to next only with the bearer token and an
// acceptable Origin.
func Guard(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return checkOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcphost serve"`)
			http.Error(w, "Unauthorized: send the token of `mcphost serve` as Authorization: Bearer <token> (it is in the serve-token file of mcphost's state directory)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	}))
}

// checkOrigin lets a request through to next only with an acceptable
// Origin (OriginAllowed), before anything else is read of it.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !OriginAllowed(r) {
			http.Error(w, "Forbidden: Origin "+bound(r.Header.Get("Origin"), 200)+" may not call this server", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// OriginAllowed reports whether a request's Origin may call the server: no
// Origin (not a browser), or an http or https origin whose host and port
// are the ones the request was sent to (netcheck.OriginMatchesHost: the
// host without case, a left-out port the scheme's default). A page
// elsewhere that resolves its own name to this machine (DNS rebinding)
// sends its own origin and is refused.
func OriginAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	return netcheck.OriginMatchesHost(o, r.Host)
}

// CheckListen refuses an address that is not loopback unless remote is
// allowed: a gate that anyone on the network can reach needs the person to
// say so.
func CheckListen(addr string, remote bool) error {
	loop, err := loopbackListen(addr)
	if err != nil {
		return err
	}
	if remote || loop {
		return nil
	}
	return fmt.Errorf("--http %q is not a loopback address: other machines could reach the gate; listen on 127.0.0.1, or pass --allow-remote to mean it", addr)
}

// CheckPlainHTTP refuses to serve plain HTTP on an address other machines
// can reach: the bearer token, and every call's arguments and results,
// would cross the network in clear. TLS (tls) or the person's explicit
// plain (--insecure-plain-http) lets it.
func CheckPlainHTTP(addr string, tls, plain bool) error {
	loop, err := loopbackListen(addr)
	if err != nil {
		return err
	}
	if tls || plain || loop {
		return nil
	}
	return fmt.Errorf("--http %q is reachable from other machines, and plain HTTP would send the bearer token and every call in clear: add --tls-cert FILE --tls-key FILE, or pass --insecure-plain-http to mean it", addr)
}

// MinTokenLen is the shortest bearer token LoadToken accepts: a token
// shorter than this could be guessed, so it is no secret. A token serve
// makes is 26 characters of base32 (130 random bits).
const MinTokenLen = 16

// LoadToken reads the bearer token from path, or creates it there (a new
// random token in a 0600 file) when the file does not exist; created
// reports that it was new, so the caller can print it once. As ssh does
// with a key, it refuses a file that someone else could read or replace:
// one that other users may read or write, or that belongs to another user,
// checked on the file path leads to (a symbolic link is followed, and what
// counts is its target). It also refuses a token shorter than MinTokenLen.
func LoadToken(path string) (token string, created bool, err error) {
	f, err := openToken(path)
	if err == nil {
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 4096))
		if err != nil {
			return "", false, fmt.Errorf("read the token file %s: %w", path, err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return "", false, fmt.Errorf("the token file %s is empty: delete it to have a new token made", path)
		}
		if len(token) < MinTokenLen {
			return "", false, fmt.Errorf("the token in %s is %d characters, too short to be a secret (at least %d): delete the file to have a new token made, or write a longer random one", path, len(token), MinTokenLen)
		}
		return token, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("create the token's directory: %w", err)
	}
	token = rand.Text()
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("create the token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("write the token file: %w", err)
	}
	return token, true, nil
}

// tokenTarget names what path leads to, for a message: the file to fix
// (the link's target when path is a symbolic link) and how to call it.
func tokenTarget(path string) (file, name string) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(path); err == nil {
			return t, fmt.Sprintf("%s (a link to %s)", path, t)
		}
	}
	return path, path
}
