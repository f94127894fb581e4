package config

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/adrg/xdg"
)

// Defaults applied to every server that does not set its own value.
const (
	// DefaultProtocolVersion is the MCP protocol version a server is asked
	// to speak unless its entry sets "protocolVersion".
	DefaultProtocolVersion = "2025-11-25"
	// ProtocolAuto negotiates the newest protocol version both sides speak.
	ProtocolAuto = "auto"
)

// DefaultSamplingBudget is the tokens (input and output together) each
// server may spend through sampling in one run or chat unless the user's
// own config sets "samplingBudget".
const DefaultSamplingBudget = 20000

// SamplingBudgetOf returns the budget c sets, or the default.
func (c *Config) SamplingLimit() int {
	if c.SamplingBudget != nil {
		return *c.SamplingBudget
	}
	return DefaultSamplingBudget
}

// Transports a Server can use.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // streamable HTTP
	TransportSSE   = "sse"  // the older HTTP+SSE transport
)

// ToolSearchModes lists the values "toolSearch" accepts: "auto" offers a
// search tool instead of every definition when they would take too much of
// the model's window, "always" and "never" do or do not regardless.
var ToolSearchModes = []string{"auto", "always", "never"}

// NotifyModes lists the values "notify" accepts: how a person is told that
// a question waits for them. "bell" rings the terminal bell, "desktop" sends
// a desktop notification where the terminal shows one, "off" does neither;
// left out, both.
var NotifyModes = []string{"bell", "desktop", "off"}

// AutoApproveLevels lists the values "permissions"."autoApprove" accepts.
var AutoApproveLevels = []string{"none", "reads", "additive"}

// Source says where a server entry came from. It decides how far the entry
// is trusted: a project file can add servers but never trust them.
type Source int

const (
	// SourceUser is the user's own config: the file given with --config or
	// the XDG default.
	SourceUser Source = iota
	// SourceProject is .mcp.json in the working directory. Its servers
	// start only after consent and are never trusted by the file.
	SourceProject
	// SourceFlag is a --server flag; passing it is consent.
	SourceFlag
	// SourceDemo is a built-in demo server.
	SourceDemo
)

// String returns "user", "project", "flag" or "demo".
func (s Source) String() string {
	switch s {
	case SourceUser:
		return "user"
	case SourceProject:
		return "project"
	case SourceFlag:
		return "flag"
	case SourceDemo:
		return "demo"
	}
	return "unknown"
}

// Server is one configured MCP server. Values are final: defaults are
// applied and ${VAR} references in Args, Env values, URL and Headers values
// are expanded. Wherever others than the person may read an entry, show
// Shown(), which has those values as written.
type Server struct {
	Name      string // unique; letters, digits, '-', '_', '.'; at most 64 bytes
	Transport string // TransportStdio, TransportHTTP or TransportSSE

	// stdio only.
	Command string
	Args    []string          // nil when empty
	Env     map[string]string // added to the inherited environment; nil when empty
	Cwd     string            // a project server's is absolute (see Load)

	// http and sse only.
	URL     string
	Headers map[string]string // nil when empty

	// AlwaysLoad names tools offered in full even while tool search is on.
	AlwaysLoad []string

	// AllowInsecureHTTP lets an http or sse server's credentials (its
	// headers, the user and password of its URL, values its URL reads from
	// the environment) go over plain http to a host that is not this
	// machine. Without it such an entry is an error. Only the user's own
	// config can set it. Left out of JSON when false, so that the consent
	// hashes of entries recorded before it existed still hold.
	AllowInsecureHTTP bool `json:",omitempty"`

	Trust           bool   // annotations from this server are believed
	ProtocolVersion string // a date, or ProtocolAuto
	// Tasks is one of TaskModes ("" when not set: "required"): which tools
	// run as MCP tasks.
	Tasks        string
	StartTimeout time.Duration // 0: the caller's default
	CallTimeout  time.Duration // 0: the caller's default
	Disabled     bool

	// Vars names, sorted and without repeats, the environment variables the
	// entry refers to with ${...}, so that a consent prompt can say which
	// parts of the user's environment a project server would receive.
	Vars []string

	Source Source
	File   string // the file that defined the server; "" for flags and demos; a project file's is absolute, symbolic links resolved
	// OAuth names a pre-registered OAuth client for an HTTP server; nil
	// means dynamic client registration when the server asks for OAuth.
	OAuth *OAuthClient

	// Consented is set on a project server the person named with --trust:
	// that is their consent to start it for this run (and to trust it).
	Consented bool

	// written keeps the values that read the environment as the file
	// wrote them, for Shown; nil when no value did.
	written *written
	// distrusted: the person's own file wrote "trust": false. Unexported,
	// so that consent hashes and consent fields stay as they were.
	distrusted bool
}

// Distrusted reports whether the person's own config says "trust": false
// for this server: a choice written down, which wins over trust that
// mcphost remembers from /trust (a --trust flag still trusts it for its
// run). A project file's "trust" is ignored, so it never distrusts.
func (s Server) Distrusted() bool { return s.distrusted && !s.Trust }

// RuleSpec is one permission rule as written. The policy package compiles
// it; config only checks that it is a JSON string or object.
type RuleSpec struct {
	Effect string // "allow", "ask" or "deny"
	// Source is the file path for a rule from a config file, or the flag
	// ("--allow", "--ask", "--deny") for a rule from the command line.
	Source string
	// Index is the rule's position in its file list ("deny"[Index]) or
	// among the flags of the same name, counting from 0.
	Index int
	// Line and Col locate the rule in Source when it is a file; 0 for flags.
	Line, Col int
	Raw       json.RawMessage // compact JSON: a string (glob) or an object
}

// Config is the merged configuration.
type Config struct {
	Servers     []Server   // sorted by Name
	Rules       []RuleSpec // from the user's own config and flags only
	AutoApprove string     // one of AutoApproveLevels; "" means the default
	Model       string     // "provider:model"; "" means unset
	// Models holds per-model settings by "provider:model" spec, from the
	// user's own config only.
	Models map[string]ModelSettings
	// ToolSearch is one of ToolSearchModes; "" means "auto".
	ToolSearch string
	// Notify is one of NotifyModes; "" means both the bell and a desktop
	// notification. From the user's own config only.
	Notify string
	// SamplingBudget is how many tokens of the person's model each server
	// may spend through sampling in one run or chat, from the user's own
	// config only; nil means DefaultSamplingBudget, 0 refuses sampling.
	SamplingBudget *int
	// Telemetry is where the user's own config exports OpenTelemetry; nil
	// means the OTEL_* variables decide (off unless they name an endpoint).
	Telemetry *Telemetry
	// AskVia says which channels' answers may approve a call of each tier
	// (the "askVia" setting); nil: DefaultAskVia. A managed policy can
	// narrow it (EffectiveAskVia).
	AskVia AskVia
	// Serve is how serve --http lets callers in (the "serve" setting), from
	// the user's own config only; nil: serve's one bearer token.
	Serve *Serve
	// Store is the PostgreSQL database (a postgres:// URL) where the audit
	// chain and the calls held for a later approval are kept, shared by
	// every mcphost that names it; "": the files of the state directory.
	// Its password is never shown: print pgstore.Redact(Store).
	Store string
	Files []string // every file that was read, in the order read
}

// Telemetry is the "telemetry" setting: an OTLP/HTTP endpoint and the
// headers sent with every export.
type Telemetry struct {
	Endpoint string
	Headers  map[string]string
}

// Server returns the server with the given name.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// DefaultPath returns the default config file, config.json in the mcphost
// directory under configHome, or under the XDG config home when configHome
// is "". The file may not exist.
func DefaultPath(configHome string) string {
	if configHome == "" {
		configHome = xdg.ConfigHome
	}
	return filepath.Join(configHome, "mcphost", "config.json")
}

// StateDir returns the directory for grants, pins and the audit log: the
// mcphost directory under stateHome, or under the XDG state home when
// stateHome is "". It does not create it.
func StateDir(stateHome string) string {
	if stateHome == "" {
		stateHome = xdg.StateHome
	}
	return filepath.Join(stateHome, "mcphost")
}

// OAuthClient is a pre-registered OAuth client ("oauth" in a server entry).
// ClientSecret may use ${VAR} like headers, so the secret stays out of the
// file.
type OAuthClient struct {
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// TaskModes are the values of a server's "tasks": "required" (the default)
// runs as MCP tasks only the tools whose execution.taskSupport is
// "required"; "auto" also those that declare "optional", so that their
// outcome can be asked for after a lost connection; "never" creates no
// task, and tools that require one are refused before anything is sent.
var TaskModes = []string{"required", "auto", "never"}
