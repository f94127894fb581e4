package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Exit codes. The suite ignores them; they help a person running one
// scenario by hand.
const (
	exitOK     = 0
	exitFailed = 1 // the scenario's steps did not all succeed
	exitUsage  = 2
)

const (
	scenarioVar = "MCP_CONFORMANCE_SCENARIO"
	serverName  = "conformance"
	clientName  = "mcphost"
	clientVer   = "0.0.0-conformance"

	startTimeout = 20 * time.Second
	// runTimeout stays below the suite's own 30s limit, so that a hung
	// step ends with this program's error rather than a bare kill.
	runTimeout = 25 * time.Second
)

// A step is what one scenario expects of a client once its server is
// ready (connected, initialized, tools listed).
type step func(ctx context.Context, m *client.Manager) error

// steps maps each client scenario of the suite to what the client does.
// Scenarios under "auth/" share authSteps.
var steps = map[string]step{
	"initialize":                          nothingMore,
	"tools_call":                          call("add_numbers", `{"a":5,"b":3}`),
	"elicitation-sep1034-client-defaults": call("test_client_elicitation_defaults", `{}`),
	// The tool's response stream is closed by the server mid-call; the SDK
	// must wait the announced retry delay and resume with Last-Event-ID.
	"sse-retry": call("test_reconnection", `{}`),

	// The suite's newer line (protocol 2026-07-28, see next/).
	"request-metadata":         nothingMore, // the per-request _meta of every request, the listing's included
	"json-schema-ref-no-deref": nothingMore, // the listing must not fetch a schema's $ref
	"json-schema-2020-12-preservation": func(ctx context.Context, m *client.Manager) error {
		focal, ok := m.Tool(serverName, "json_schema_2020_12_tool")
		if !ok {
			return errors.New(`tool "json_schema_2020_12_tool" is not in the server's tools/list`)
		}
		return call("json_schema_echo", `{"schema":`+string(focal.InputSchema)+`}`)(ctx, m)
	},
	// Multi-round-trip input requests: the server's question comes back in
	// the tool's result, and the client answers it by calling again.
	"sep-2322-client-request-state": tryEach(`{}`, "test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"),
	"http-standard-headers": func(ctx context.Context, m *client.Manager) error {
		if tools := serverTools(m); len(tools) > 0 {
			m.Call(ctx, serverName, tools[0], json.RawMessage(`{}`), client.CallOptions{})
		}
		if res, err := m.Resources(ctx, serverName); err == nil && len(res) > 0 {
			_, _ = m.ReadResource(ctx, serverName, res[0].URI)
		}
		if prompts, err := m.Prompts(ctx, serverName); err == nil && len(prompts) > 0 {
			_, _ = m.GetPrompt(ctx, serverName, prompts[0].Name, map[string]string{})
		}
		return nil
	},
	// Every tool left after the listing refused those with invalid
	// x-mcp-header annotations.
	"http-invalid-tool-headers": func(ctx context.Context, m *client.Manager) error {
		return tryEach(`{"region":"us-west1"}`, serverTools(m)...)(ctx, m)
	},
}

// serverTools names the server's listed tools.
func serverTools(m *client.Manager) []string {
	var names []string
	for _, t := range m.Tools() {
		if t.Server == serverName {
			names = append(names, t.Name)
		}
	}
	return names
}

// tryEach calls each tool with args, whatever the outcome: the suite judges
// what reached its server.
func tryEach(args string, tools ...string) step {
	return func(ctx context.Context, m *client.Manager) error {
		for _, tool := range tools {
			m.Call(ctx, serverName, tool, json.RawMessage(args), client.CallOptions{})
		}
		return nil
	}
}

// protocolVar names the protocol version the suite tests: the client asks
// for it, as a person would write it in the server's "protocolVersion".
const protocolVar = "MCP_CONFORMANCE_PROTOCOL_VERSION"

// authSteps is what the client does once through the server's OAuth flow,
// which runs when the server first answers 401 (see withLogin).
var authSteps = call("test-tool", `{}`)

func nothingMore(context.Context, *client.Manager) error { return nil }

// call calls a tool the server must have listed, and requires a result.
func call(tool, args string) step {
	return func(ctx context.Context, m *client.Manager) error {
		if _, ok := m.Tool(serverName, tool); !ok {
			return fmt.Errorf("tool %q is not in the server's tools/list", tool)
		}
		res := m.Call(ctx, serverName, tool, json.RawMessage(args), client.CallOptions{})
		if res.Outcome != client.OutcomeSuccess {
			return fmt.Errorf("call %q: outcome %s (%s): %v", tool, res.Outcome, res.Detail, res.Err)
		}
		return nil
	}
}

func lookup(scenario string, sc scenarioContext) (step, bool) {
	if scenario == "http-custom-headers" {
		// The calls the suite asks for, with their Mcp-Param-* headers.
		return func(ctx context.Context, m *client.Manager) error {
			for _, c := range sc.ToolCalls {
				m.Call(ctx, serverName, c.Name, c.Arguments, client.CallOptions{})
			}
			return nil
		}, true
	}
	if s, ok := steps[scenario]; ok {
		return s, true
	}
	if strings.HasPrefix(scenario, "auth/") {
		return authSteps, true
	}
	return nil, false
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "usage: client <serverURL> (with %s set)\n", scenarioVar)
		return exitUsage
	}
	scenario := getenv(scenarioVar)
	sc, err := parseContext(getenv(contextVar))
	if err != nil {
		fmt.Fprintf(stderr, "client: %v\n", err)
		return exitUsage
	}
	sc.protocol = getenv(protocolVar)
	s, ok := lookup(scenario, sc)
	if !ok {
		fmt.Fprintf(stderr, "client: unknown scenario %q (%s)\n", scenario, scenarioVar)
		return exitUsage
	}
	store, cleanup, err := tokens()
	if err != nil {
		fmt.Fprintf(stderr, "client: %v\n", err)
		return exitFailed
	}
	defer cleanup()
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	if err := runScenario(ctx, args[0], store, sc, s, stderr); err != nil {
		fmt.Fprintf(stderr, "client: scenario %s: %v\n", scenario, err)
		return exitFailed
	}
	return exitOK
}

// runScenario runs s in a session whose OAuth handler may log in. If that
// stored a token, s runs again in a second session, as every later mcphost
// command runs: with a handler that uses the stored token (refreshing it if
// need be) but cannot log in.
func runScenario(ctx context.Context, url string, store *oauth.Store, sc scenarioContext, s step, stderr io.Writer) error {
	cfg := oauthConfig(url, store, sc)
	h, err := oauth.NewHandler(withLogin(cfg, stderr))
	if err != nil {
		return err
	}
	if err := session(ctx, client.Spec{Name: serverName, Transport: client.TransportHTTP, URL: url, OAuth: h, ProtocolVersion: sc.protocol}, s, stderr); err != nil {
		return err
	}
	if rec, err := store.Load(serverName); err != nil || rec == nil {
		return err
	}
	if h, err = oauth.NewHandler(cfg); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "client: again, with the stored token and no login\n")
	if err := session(ctx, client.Spec{Name: serverName, Transport: client.TransportHTTP, URL: url, OAuth: h, ProtocolVersion: sc.protocol}, s, stderr); err != nil {
		return fmt.Errorf("with the stored token: %w", err)
	}
	return nil
}

// session starts the server of spec, runs s, and closes it.
func session(ctx context.Context, spec client.Spec, s step, stderr io.Writer) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	m := client.New([]client.Spec{spec}, client.Options{
		StartTimeout:  startTimeout,
		ClientName:    clientName,
		ClientVersion: clientVer,
		HTTPTransport: tr,
		// The conformance server is started once per scenario: a restart
		// would only hide the failure being measured.
		MaxCrashes: 1,
		Elicitation: func(_ context.Context, _ string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			res := host.ElicitDefaults(req.Params)
			fmt.Fprintf(stderr, "client: elicitation answered %s with %v\n", res.Action, res.Content)
			return res, nil
		},
	})
	defer m.Close()
	m.Start(ctx)
	st := m.Servers()[0]
	if st.State != client.StateReady {
		return fmt.Errorf("server is %s after start: %s", st.State, st.LastError)
	}
	fmt.Fprintf(stderr, "client: ready, protocol %s, %d tools\n", st.ProtocolVersion, st.Tools)
	err := s(ctx, m)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = errors.Join(err, fmt.Errorf("gave up after %s", runTimeout))
	}
	return err
}
