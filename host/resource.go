package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
	t.Hash = "resources/read@1"
	return t
}

// ReadResource reads the resource uri of server through the gate, as a call
// of SERVER/resources/read with the arguments {"uri": uri}: it is decided
// with the same policy, trust, grants, taint and mode as a tool call, asked
// about when the decision says so, audited (an intent before the read, an
// outcome after), and it adds to the session's taint. A trusted server's
// read is a closed-world read; an untrusted server's counts as the worst
// case, as its tools' hints do. The Result says how the call ended; its
// Result field is unused, the contents are returned instead (nil unless the
// status is StatusSuccess).
func (g *Gate) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, *Result) {
	args, _ := json.Marshal(map[string]string{"uri": uri})
	callID := g.NewCallID()
	c := Call{ID: callID, Server: server, Tool: ResourceReadTool, Args: args}
	r := &Result{CallID: callID, Server: server, Tool: ResourceReadTool, Args: args}
	obs, def := g.observer(), ""
	ctx = obs.CallStarted(ctx, callID, server, ResourceReadTool, args)
	defer func() { obs.CallDone(ctx, r, def) }()
	spec, ok := g.o.Catalog.Spec(server)
	if !ok {
		r.Status, r.Err = StatusError, fmt.Errorf("no server named %q", server)
		return nil, r
	}
	reader, ok := g.o.Catalog.(ResourceReader)
	if !ok {
		r.Status, r.Err = StatusError, errNoReader
		return nil, r
	}
	t := resourceTool(server)
	def = t.Hash
	ident, trusted := spec.Identity(), g.o.Trusted(server)
	for edits := 0; ; edits++ {
		d := g.decide(spec, trusted, t, t.Hash, c.Args)
		r.Decision, r.Args = d, c.Args
		switch d.Verdict {
		case decide.Deny:
			r.Status, r.DecidedBy = refusedBy(d)
			g.record(callID, 0, c, ident, trusted, t, r, nil, 0)
			return nil, r
		case decide.Allow:
			r.DecidedBy = allowedBy(d)
		case decide.Ask:
			q := &Question{Server: server, Trusted: trusted, Tool: t, Args: c.Args, Decision: d, Scopes: decide.AllowedScopes(d)}
			asked := time.Now()
			ans, err := g.o.Asker.Ask(ctx, q)
			obs.Asked(ctx, q, ans, err, time.Since(asked))
			if err != nil || !ans.Approve {
				r.Status, r.DecidedBy = notApprovedBy(err)
				r.DenyReason = ans.Reason
				g.record(callID, 0, c, ident, trusted, t, r, nil, 0)
				return nil, r
			}
			if ans.Args != nil {
				// An edited read is another read: decide it again, and
				// never read a URI other than the one just shown.
				var edited struct {
					URI string `json:"uri"`
				}
				if edits >= 3 || json.Unmarshal(ans.Args, &edited) != nil || edited.URI == "" {
					r.Status, r.DecidedBy = StatusDenied, "user"
					r.DenyReason = "the edited arguments name no resource (want {\"uri\": \"...\"})"
					g.record(callID, 0, c, ident, trusted, t, r, nil, 0)
					return nil, r
				}
				uri = edited.URI
				c.Args, _ = json.Marshal(map[string]string{"uri": uri})
				continue
			}
			if !allowed(q.Scopes, ans.Scope) {
				ans.Scope = decide.ScopeOnce
			}
			r.DecidedBy = "user:" + ans.Scope.String()
			g.grant(ans.Scope, ident, server, t, c.Args)
		}
		break
	}
	if err := g.intent(callID, 1, c, ident, trusted, t, r); err != nil && r.Decision.Class != decide.Read {
		r.Status, r.Err = StatusError, fmt.Errorf("%w: %v", errAuditUnavailable, err)
		return nil, r
	}
	start := g.o.Now()
	res, err := reader.ReadResource(ctx, server, uri)
	dur := g.o.Now().Sub(start)
	outcome := client.OutcomeSuccess
	if err != nil {
		// A read changes nothing either way; what is unknown is only
		// whether the server answered. An error it sent (no such
		// resource: -32002, bad params) is its refusal of the read.
		outcome = client.OutcomeUnknown
		if je := (*jsonrpc.Error)(nil); errors.As(err, &je) {
			outcome = client.OutcomeRejected
		}
		r.Err = err
	}
	r.Status = Status(outcome)
	r.Attempts = []Attempt{{N: 1, Outcome: outcome, Duration: max(dur, time.Duration(0))}}
	g.record(callID, 1, c, ident, trusted, t, r, nil, dur)
	if err != nil {
		return nil, r
	}
	g.taint(r.Decision)
	return res, r
}
