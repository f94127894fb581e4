package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceReadTool is the tool name under which the gate decides, asks
// about and audits a read of a server's resource: rules name it as
// SERVER/resources/read (or match it with SERVER/*), and the dialog and the
// audit log show it so. The protocol advises against "/" in tool names; a
// server's own tool of that name would share its rules, never its grants
// (grants are bound to the definition hash, and this one is no SHA-256).
const ResourceReadTool = "resources/read"

// ResourceReader is the part of the catalog that reads resources
// (client.Manager has it).
type ResourceReader interface {
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// errNoReader: the gate's catalog cannot read resources.
var errNoReader = errors.New("this catalog cannot read resources")

// resourceHints are what the protocol itself says of resources/read, not
// what a server claims: it reads, changes nothing, and returns the
// server's own data. They are believed only as far as the server is
// trusted, like any tool's hints.
var resourceHints = func() client.Annotations {
	t, f := true, false
	return client.Annotations{Present: true, ReadOnly: &t, Destructive: &f, Idempotent: &t, OpenWorld: &f}
}()

// resourceTool is the stand-in the engine decides on for reads of server's
// resources. Its definition never changes, so no pin is kept for it.
func resourceTool(server string) *client.Tool {
	t := &client.Tool{Server: server, Name: ResourceReadTool, Title: "read a resource",
		Description: "Reads one resource of the server (MCP resources/read).", Annotations: resourceHints,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}`)}
	t.Hash = resourceToolHash
	return t
}

// OwnWords reports whether t is one of the gate's stand-ins for a request
// that is not a tool call (ResourceReadTool, PromptGetTool): its title and
// description are mcphost's own words, and a question about it must not
// present them as the server's. It goes by the stand-in's definition
// hash, which no server's tool can have (theirs are SHA-256), never by
// the name, which a server may copy.
func OwnWords(t *client.Tool) bool {
	return t != nil && (t.Hash == resourceToolHash || t.Hash == promptToolHash)
}

// The definition hashes of the stand-ins.
const (
	resourceToolHash = "resources/read@1"
	promptToolHash   = "prompts/get@1"
)

// PromptGetTool is the tool name under which the gate decides, asks about
// and audits a prompts/get of a server's prompt, as ResourceReadTool is
// for reads: rules name it SERVER/prompts/get.
const PromptGetTool = "prompts/get"

// PromptGetter is the part of the catalog that gets prompts
// (client.Manager has it).
type PromptGetter interface {
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error)
}

// errNoPrompts: the gate's catalog cannot get prompts.
var errNoPrompts = errors.New("this catalog cannot get prompts")

// promptTool is the stand-in the engine decides on for prompts/get of
// server's prompts: like a read, it returns the server's own text and
// changes nothing.
func promptTool(server string) *client.Tool {
	t := &client.Tool{Server: server, Name: PromptGetTool, Title: "get a prompt",
		Description: "Gets one prompt of the server, filled with arguments (MCP prompts/get).", Annotations: resourceHints,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"arguments":{"type":"object"}},"required":["name"]}`)}
	t.Hash = promptToolHash
	return t
}

// ReadResource reads the resource uri of server through the gate, as a call
// of SERVER/resources/read with the arguments {"uri": uri}: it is decided
// with the same policy, trust, grants, taint and mode as a tool call, asked
// about when the decision says so, audited (an intent before the read, an
// outcome after), and it adds to the session's taint. A trusted server's
// read is a closed-world read; an untrusted server's counts as the worst
// case, as its tools' hints do. A file:// URI is examined as a path, as a
// tool's arguments are, so a read of mcphost's own configuration or state
// is asked at tier 3 whatever the rules say. The Result says how the call
// ended; its Result field is unused, the contents are returned instead (nil
// unless the status is StatusSuccess).
func (g *Gate) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, *Result) {
	return Asking{Gate: g}.ReadResource(ctx, server, uri)
}

// Asking is a gate whose reads, prompts/get and subscriptions ask Asker
// instead of GateOptions.Asker (nil: GateOptions.Asker), as Call.Asker does
// for a call: the asker of the one request they came in, when a gate serves
// several requests of a client at once (mcphost serve). It has no Call: a
// call names its asker itself (Call.Asker).
type Asking struct {
	Gate  *Gate
	Asker Asker
}

// ReadOwn reads the resource uri of server as ReadResource does, for a
// read the person asked for themselves: an @server:uri mention in a
// message they typed. It is decided
// as their own action (decide.Input.ByPerson), not as a model's guess: it
// runs without asking whatever the server's trust, unless a deny or ask
// rule, or a protected path (a file:// URI of mcphost's own files), holds
// it back. It is audited and taints the session as any read. Never call it
// for a read the model asked for.
func (g *Gate) ReadOwn(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, *Result) {
	return Asking{Gate: g}.read(ctx, server, uri, true)
}

// ReadResource: see Gate.ReadResource.
func (x Asking) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, *Result) {
	return x.read(ctx, server, uri, false)
}

func (x Asking) read(ctx context.Context, server, uri string, byPerson bool) (*mcp.ReadResourceResult, *Result) {
	g, args := x.Gate, ReadArgs(uri)
	reader, _ := g.o.Catalog.(ResourceReader)
	var res *mcp.ReadResourceResult
	r := g.pass(ctx, g.requestOp(server, request{tool: resourceTool(server), args: args, can: reader != nil, cannot: errNoReader, asker: x.Asker, byPerson: byPerson,
		valid: func(args json.RawMessage) bool { return readURI(args) != "" },
		do: func(ctx context.Context, args json.RawMessage) (err error) {
			res, err = reader.ReadResource(ctx, server, readURI(args))
			return err
		}}))
	if r.Status != StatusSuccess {
		return nil, r
	}
	return res, r
}

// readURI is the URI a read's arguments name, "" if none.
func readURI(args json.RawMessage) string {
	var a struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(args, &a)
	return a.URI
}

// GetPrompt gets the prompt name of server filled with args through the
// gate, as a call of SERVER/prompts/get with the arguments {"name": name,
// "arguments": args}: decided, asked, audited and tainting exactly as
// ReadResource is (a prompt is the server's text, as a resource is).
func (g *Gate) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, *Result) {
	return Asking{Gate: g}.GetPrompt(ctx, server, name, args)
}

// GetPrompt: see Gate.GetPrompt.
func (x Asking) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, *Result) {
	g, raw := x.Gate, PromptArgs(name, args)
	getter, _ := g.o.Catalog.(PromptGetter)
	var res *mcp.GetPromptResult
	r := g.pass(ctx, g.requestOp(server, request{tool: promptTool(server), args: raw, can: getter != nil, cannot: errNoPrompts, asker: x.Asker,
		valid: func(raw json.RawMessage) bool {
			var a promptArgs
			return json.Unmarshal(raw, &a) == nil && a.Name != ""
		},
		do: func(ctx context.Context, raw json.RawMessage) error {
			var a promptArgs
			_ = json.Unmarshal(raw, &a)
			var err error
			res, err = getter.GetPrompt(ctx, server, a.Name, a.Arguments)
			return err
		}}))
	if r.Status != StatusSuccess {
		return nil, r
	}
	return res, r
}

// Subscribe decides a subscription to the resource uri of server as a read
// of it (SERVER/resources/read, with the arguments {"subscribe": true,
// "uri": uri}): decided, asked about and audited as a read is, so that
// what a client may not read it may not watch either. subscribe makes the
// subscription once it is allowed. It adds nothing to the taint: an update
// says only that the URI changed, and its contents are read (and decided)
// on their own.
func (g *Gate) Subscribe(ctx context.Context, server, uri string, subscribe func(context.Context) error) *Result {
	return Asking{Gate: g}.Subscribe(ctx, server, uri, subscribe)
}

// Subscribe: see Gate.Subscribe.
func (x Asking) Subscribe(ctx context.Context, server, uri string, subscribe func(context.Context) error) *Result {
	g := x.Gate
	args, _ := json.Marshal(struct {
		Subscribe bool   `json:"subscribe"`
		URI       string `json:"uri"`
	}{true, uri})
	return g.pass(ctx, g.requestOp(server, request{tool: resourceTool(server), args: args, can: true, noTaint: true, asker: x.Asker,
		valid: func(args json.RawMessage) bool { return readURI(args) == uri },
		do:    func(ctx context.Context, _ json.RawMessage) error { return subscribe(ctx) }}))
}

// ExplainRead returns the decision the gate would make now for a read of
// uri of server, and ExplainPrompt for a prompts/get of name with args:
// the same policy, trust, grants, taint and mode as the request itself.
// They run nothing, ask no one and write no audit record (what a
// completion may be sent for: completion.go in package serve).
func (g *Gate) ExplainRead(server, uri string) (decide.Decision, error) {
	return g.explainOperation(server, resourceTool(server), ReadArgs(uri))
}

// ExplainPrompt: see ExplainRead.
func (g *Gate) ExplainPrompt(server, name string, args map[string]string) (decide.Decision, error) {
	return g.explainOperation(server, promptTool(server), PromptArgs(name, args))
}

// ExplainOperation returns the decision the gate would make now for the
// request op (ResourceReadTool or PromptGetTool) of server with args, as
// ReadResource and GetPrompt would decide it, and the stand-in tool a
// question about it names. It runs nothing and asks no one.
func (g *Gate) ExplainOperation(server, op string, args json.RawMessage) (decide.Decision, *client.Tool, error) {
	var t *client.Tool
	switch op {
	case ResourceReadTool:
		t = resourceTool(server)
	case PromptGetTool:
		t = promptTool(server)
	default:
		return decide.Decision{}, nil, fmt.Errorf("no request %q but a tool call", op)
	}
	d, err := g.explainOperation(server, t, args)
	return d, t, err
}

// ReadArgs and PromptArgs are the arguments the gate decides a read of uri
// and a prompts/get of name with args on, as ReadResource and GetPrompt
// build them.
func ReadArgs(uri string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"uri": uri})
	return b
}

// PromptArgs: see ReadArgs.
func PromptArgs(name string, args map[string]string) json.RawMessage {
	if args == nil {
		args = map[string]string{}
	}
	b, _ := json.Marshal(promptArgs{Name: name, Arguments: args})
	return b
}

func (g *Gate) explainOperation(server string, t *client.Tool, args json.RawMessage) (decide.Decision, error) {
	spec, ok := g.o.Catalog.Spec(server)
	if !ok {
		return decide.Decision{}, fmt.Errorf("no server named %q", server)
	}
	return g.decide(spec, g.o.Trusted(server), t, t.Hash, args), nil
}

// IsOperation reports whether t is the gate's stand-in for a request that
// is not a tool call (a read, a prompts/get, a subscription), which a front
// may have to ask about differently from a call.
func IsOperation(t *client.Tool) bool {
	return t != nil && (t.Hash == resourceTool(t.Server).Hash || t.Hash == promptTool(t.Server).Hash)
}

// promptArgs are the arguments the gate decides a prompts/get on.
type promptArgs struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

// request is one request to a server that is not a tool call, as the gate
// decides it.
type request struct {
	tool   *client.Tool    // the stand-in decided on (resourceTool, promptTool)
	args   json.RawMessage // the arguments decided on, shown and audited
	can    bool            // the catalog can make the request at all
	cannot error           // why not, when it cannot
	// valid reports whether arguments a person edited name something to
	// request; do makes the request with the arguments finally approved.
	valid func(json.RawMessage) bool
	do    func(context.Context, json.RawMessage) error
	// noTaint: what the request returns is not the server's text (a
	// subscription), so it adds nothing to the session's taint.
	noTaint bool
	asker   Asker // Call.Asker of the request
	// byPerson: the person asked for it themselves (operation.byPerson).
	byPerson bool
}

// requestOp is req, a request to server that is not a tool call (a read
// of a resource, a prompts/get, a subscription), as the gate's door (pass)
// takes it: a call of req.tool with req.args, made once, so that each is
// decided with the same policy, trust, grants, taint and mode as a call,
// asked about, audited (an intent before, an outcome after) and added to
// the session's taint once it returned the server's text.
func (g *Gate) requestOp(server string, req request) *operation {
	t := req.tool
	return &operation{call: Call{Server: server, Tool: t.Name, Args: req.args, Asker: req.asker}, once: true, noTaint: req.noTaint, byPerson: req.byPerson,
		find: func(context.Context) (*client.Tool, error) {
			if _, ok := g.o.Catalog.Spec(server); !ok {
				return nil, fmt.Errorf("no server named %q", server)
			}
			if !req.can {
				return nil, req.cannot
			}
			return t, nil
		},
		valid:   req.valid,
		badEdit: "the edited arguments name nothing to request (a read wants {\"uri\": \"...\"}, a prompt {\"name\": \"...\"})",
		exec: func(ctx context.Context, a *account, _ int) *client.CallResult {
			start := g.o.Now()
			err := req.do(ctx, a.Args)
			cr := &client.CallResult{Outcome: client.OutcomeSuccess, Err: err, Duration: max(g.o.Now().Sub(start), 0)}
			if err != nil {
				// A read changes nothing either way; what is unknown is only
				// whether the server answered. An error it sent (no such
				// resource: -32002, bad params) is its refusal of the read.
				cr.Outcome = client.OutcomeUnknown
				if je := (*jsonrpc.Error)(nil); errors.As(err, &je) {
					cr.Outcome = client.OutcomeRejected
				}
			}
			return cr
		}}
}
