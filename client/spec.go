package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport kinds.
const (
	TransportStdio    = "stdio"
	TransportHTTP     = "http" // streamable HTTP
	TransportSSE      = "sse"  // the 2024-11-05 HTTP+SSE transport
	TransportInMemory = "in-process"
)

// DefaultProtocolVersion is the protocol version mcphost asks for unless a
// server's configuration says otherwise. Pinning it avoids the SDK's
// server/discover probe, on which some servers exit or hang.
const DefaultProtocolVersion = "2025-11-25"

// ProtocolAuto, as a server's ProtocolVersion, negotiates the newest
// version both sides speak: the SDK asks for 2026-07-28 with
// server/discover and falls back to initialize at 2025-11-25.
const ProtocolAuto = "auto"

// Spec says how to reach one server.
type Spec struct {
	Name      string
	Transport string // one of the Transport constants

	Command string
	Args    []string
	Env     map[string]string // added to the default environment
	Cwd     string

	URL string
	// ShownURL is URL as it may be shown, with the values it read from the
	// person's environment as written ("https://h/${TOKEN}/mcp"); "" when
	// it read none. A streamable HTTP server's errors name it (redacted
	// like URL) instead of URL, so that no error shows those values.
	ShownURL string
	Headers  map[string]string
	// OAuth, when set, authorizes a streamable HTTP server's requests (see
	// client/auth.go). It is ignored when Headers sets Authorization.
	OAuth auth.OAuthHandler `json:"-"`

	ProtocolVersion string // "" selects DefaultProtocolVersion
	// Tasks says which tools run as tasks: TasksRequired ("" too),
	// TasksAuto or TasksNever.
	Tasks        string
	StartTimeout time.Duration // 0 selects Options.StartTimeout
	CallTimeout  time.Duration // 0 selects Options.CallTimeout
	// StartTimeoutSetting says how a person raises StartTimeout, such as a
	// flag or a key in a file; a start that times out names it.
	StartTimeoutSetting string

	// Dial, when set, provides the transport instead of Command or URL: an
	// in-process server. It is called once per connection attempt.
	Dial func(ctx context.Context) (mcp.Transport, error) `json:"-"`
}

// Identity is a stable hash of what the server is: its transport and the
// command line or URL that reaches it. Grants and pins are bound to it, so a
// server whose command changes is a different server. Environment values and
// headers are left out (tokens rotate); a consent to a project server
// covers them and the rest of its entry (see cmd/mcphost). An
// in-process server is identified by its name.
func (s *Spec) Identity() string {
	h := sha256.New()
	fmt.Fprintf(h, "transport=%q\ncommand=%q\nargs=%q\ncwd=%q\nurl=%q\n", s.Transport, s.Command, s.Args, s.Cwd, s.URL)
	if s.Dial != nil || s.Command == "" && s.URL == "" {
		// An in-process server has no command line: its name is all that
		// tells it apart from another.
		fmt.Fprintf(h, "in-process=%q\n", s.Name)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
