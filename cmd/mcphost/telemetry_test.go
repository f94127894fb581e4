package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/internal/otelcoltest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tracedServerArg makes the test binary a raw MCP server that appends the
// params of every tools/call it gets to the file named by the next
// argument, so that a test sees the _meta mcphost sent.
const tracedServerArg = "otel-traced-test-server"

// Values that must never reach the collector.
const (
	secretArg    = "ARG-VALUE-4f1c"
	secretResult = "RESULT-VALUE-9b2e"
	secretHeader = "HEADER-VALUE-77aa"
)

func init() {
	if len(os.Args) > 2 && os.Args[1] == tracedServerArg {
		serveTraced(os.Args[2])
		os.Exit(0)
	}
}

func serveTraced(logPath string) {
	(&fixtures.RawServer{Name: "traced", Tools: []map[string]any{
		{"name": "get_note", "description": "Get a note.", "inputSchema": map[string]any{"type": "object"},
			"annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false}},
		{"name": "drop_note", "description": "Delete a note.", "inputSchema": map[string]any{"type": "object"},
			"annotations": map[string]any{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false}},
	}, Call: func(params json.RawMessage) (any, bool) {
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = f.Write(append(bytes.TrimSpace(params), '\n'))
			f.Close()
		}
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "the note: " + secretResult}}}, true
	}}).Serve(os.Stdin, os.Stdout)
}

// telemetryRun runs mcphost in-process with env (and fresh state and
// config directories), returning the exit code and stderr.
func telemetryRun(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	for k, v := range env {
		all[k] = v
	}
	var out, errOut bytes.Buffer
	s := &streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return all[k] }, WorkDir: dir}
	code := run(context.Background(), args, s)
	return code, errOut.String()
}

// tracedServer returns the --server value of the traced server, logging to
// a file in dir, and that file.
func tracedServer(t *testing.T, dir string) (spec, log string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "calls.jsonl")
	return "traced=" + exe + " " + tracedServerArg + " " + log, log
}

// TestTelemetry runs call and run against a real OpenTelemetry Collector
// and checks what it wrote: the MCP conventions' spans with mcphost's
// decision, child spans per attempt whose trace context reached the server,
// the decision events and the metrics, and never an argument value, a
// result or a header.
func TestTelemetry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an OpenTelemetry Collector")
	}
	bin := otelcoltest.Build(t, t.TempDir())

	t.Run("call", func(t *testing.T) {
		col := otelcoltest.Start(t, bin)
		dir := t.TempDir()
		srv, calls := tracedServer(t, dir)
		env := map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint,
			"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=Bearer%20" + secretHeader,
			"OTEL_SERVICE_NAME":           "team-host",
			"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment=ci",
		}
		args := `{"id": "` + secretArg + `"}`
		if code, errOut := telemetryRun(t, env, "call", "--server", srv, "--trust", "traced", "traced/get_note", args); code != exitOK {
			t.Fatalf("call: exit %d: %s", code, errOut)
		}
		if code, errOut := telemetryRun(t, env, "call", "--server", srv, "--trust", "traced", "traced/drop_note", args); code != exitBlocked {
			t.Fatalf("headless destructive call: exit %d, want %d: %s", code, exitBlocked, errOut)
		}
		if code, errOut := telemetryRun(t, env, "call", "--yes", "--server", srv, "--trust", "traced", "traced/drop_note", args); code != exitOK {
			t.Fatalf("approved destructive call: exit %d: %s", code, errOut)
		}
		raw, data := col.Output(t)
		for _, secret := range []string{secretArg, secretResult, secretHeader} {
			if strings.Contains(raw, secret) {
				t.Errorf("the collector received %q", secret)
			}
		}

		ran := oneSpan(t, data, "tools/call get_note")
		wantAttrs(t, "call span", ran.Attrs, map[string]any{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "get_note", "gen_ai.operation.name": "execute_tool",
			"mcphost.server": "traced", "mcphost.verdict": "allow", "mcphost.tier": int64(0), "mcphost.class": "read",
			"mcphost.decided_by": "auto", "mcphost.status": "success", "mcphost.attempts": int64(1),
			"mcphost.arguments.size": int64(len(args)), "network.transport": "pipe",
		})
		for _, k := range []string{"mcphost.definition_hash", "mcphost.arguments.hash", "mcphost.reasons", "mcphost.call.id"} {
			if ran.Attrs[k] == nil || ran.Attrs[k] == "" {
				t.Errorf("call span lacks %s: %v", k, ran.Attrs)
			}
		}
		if _, has := ran.Attrs["error.type"]; has {
			t.Errorf("a successful call has error.type: %v", ran.Attrs)
		}
		if ran.Resource["service.name"] != "team-host" || ran.Resource["deployment.environment"] != "ci" {
			t.Errorf("resource = %v", ran.Resource)
		}
		attempt := oneSpan(t, data, "tools/call get_note attempt")
		if attempt.ParentSpanID != ran.SpanID || attempt.TraceID != ran.TraceID || attempt.Attrs["mcphost.attempt"] != int64(1) {
			t.Errorf("attempt span %+v is not attempt 1 under the call span %s", attempt, ran.SpanID)
		}

		// The server got the attempt's W3C trace context in _meta.
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		var sent struct {
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(bytes.SplitN(b, []byte("\n"), 2)[0], &sent); err != nil {
			t.Fatal(err)
		}
		if want := "00-" + attempt.TraceID + "-" + attempt.SpanID + "-01"; sent.Meta["traceparent"] != want {
			t.Errorf("the server got traceparent %v, want %s", sent.Meta["traceparent"], want)
		}

		drops := map[any]otelcoltest.Span{}
		for _, s := range data.SpansNamed("tools/call drop_note") {
			drops[s.Attrs["mcphost.status"]] = s
		}
		blocked, approved := drops["blocked"], drops["success"]
		if len(drops) != 2 || blocked.SpanID == "" || approved.SpanID == "" {
			t.Fatalf("drop_note spans by status: %v; want one blocked, one success", drops)
		}
		wantAttrs(t, "blocked call span", blocked.Attrs, map[string]any{
			"mcphost.verdict": "deny", "mcphost.status": "blocked", "mcphost.decided_by": "headless", "mcphost.via": "headless",
			"mcphost.attempts": int64(0), "error.type": "blocked", "mcphost.class": "destructive",
		})
		if a := data.SpansNamed("tools/call drop_note attempt"); len(a) != 1 || a[0].ParentSpanID != approved.SpanID {
			t.Errorf("drop_note attempt spans %+v; want one, under the approved call (the blocked one never ran)", a)
		}
		wantAttrs(t, "approved call span", approved.Attrs, map[string]any{"mcphost.verdict": "ask", "mcphost.decided_by": "user:once", "mcphost.via": "yes"})
		if v, has := ran.Attrs["mcphost.via"]; has {
			t.Errorf("a call its tier allowed names a channel: mcphost.via = %v", v)
		}

		decisions := data.EventsNamed("mcphost.tool_decision")
		if len(decisions) != 3 {
			t.Fatalf("%d mcphost.tool_decision events, want 3: %+v", len(decisions), decisions)
		}
		byTool := map[string]otelcoltest.Event{}
		for _, e := range decisions {
			if e.Attrs["status"] != "success" || e.Attrs["tool"] == "get_note" {
				byTool[e.Attrs["tool"].(string)] = e
			}
		}
		wantAttrs(t, "accepted decision", byTool["get_note"].Attrs, map[string]any{
			"server": "traced", "decision": "accept", "source": "auto", "tier": int64(0), "class": "read"})
		wantAttrs(t, "rejected decision", byTool["drop_note"].Attrs, map[string]any{
			"server": "traced", "decision": "reject", "source": "headless", "class": "destructive", "via": "headless"})
		approvedVia := 0
		for _, e := range decisions {
			if e.Attrs["tool"] == "drop_note" && e.Attrs["status"] == "success" {
				wantAttrs(t, "approved decision", e.Attrs, map[string]any{"decision": "accept", "source": "user:once", "via": "yes"})
				approvedVia++
			}
		}
		if approvedVia != 1 {
			t.Errorf("%d decision events for the approved drop_note, want 1", approvedVia)
		}
		if e := byTool["get_note"]; e.TraceID != ran.TraceID || e.SpanID != ran.SpanID {
			t.Errorf("the decision event is not in the call's span: %+v", e)
		}

		// The closed-world read tainted its session with private data.
		if taint := data.EventsNamed("mcphost.taint"); len(taint) == 0 || taint[0].Attrs["private_read"] != true || taint[0].Attrs["open_world"] != false {
			t.Errorf("mcphost.taint events = %+v; want private_read after the read", taint)
		}

		// The person's answer: a consent event and the asks metrics.
		consents := data.EventsNamed("mcphost.consent")
		if len(consents) != 1 {
			t.Fatalf("%d mcphost.consent events, want 1", len(consents))
		}
		wantAttrs(t, "consent", consents[0].Attrs, map[string]any{"tool": "drop_note", "server": "traced", "answer": "approve", "scope": "once", "via": "yes"})
		if consents[0].SpanID != approved.SpanID {
			t.Errorf("the consent event is not in the approved call's span")
		}
		asks, askDur := data.Metrics["mcphost.asks"], data.Metrics["mcphost.ask.duration"]
		if asks == nil || len(asks.Points) != 1 || asks.Points[0].Value != 1 || asks.Points[0].Attrs["mcphost.answer"] != "approve" ||
			askDur == nil || askDur.Unit != "s" || len(askDur.Points) != 1 || askDur.Points[0].Count != 1 {
			t.Errorf("mcphost.asks = %+v, mcphost.ask.duration = %+v", asks, askDur)
		}

		durations := map[any]int64{}
		if dur := data.Metrics["mcp.client.operation.duration"]; dur != nil && dur.Unit == "s" {
			for _, p := range dur.Points {
				durations[p.Attrs["gen_ai.tool.name"]] += p.Count
			}
		}
		if durations["get_note"] != 1 || durations["drop_note"] != 1 || len(durations) != 2 {
			t.Errorf("mcp.client.operation.duration counts by tool = %v; want one execution each", durations)
		}
		counted := map[string]float64{}
		if m := data.Metrics["mcphost.tool.decisions"]; m != nil {
			for _, p := range m.Points {
				counted[p.Attrs["mcphost.verdict"].(string)+"/"+p.Attrs["mcphost.tier"].(string)] += p.Value
			}
		}
		blockedTier := strconv.FormatInt(blocked.Attrs["mcphost.tier"].(int64), 10)
		approvedTier := strconv.FormatInt(approved.Attrs["mcphost.tier"].(int64), 10)
		if counted["allow/0"] != 1 || counted["deny/"+blockedTier] != 1 || counted["ask/"+approvedTier] != 1 || len(counted) != 3 {
			t.Errorf("mcphost.tool.decisions by verdict/tier = %v", counted)
		}
	})

	t.Run("run", func(t *testing.T) {
		col := otelcoltest.Start(t, bin)
		dir := t.TempDir()
		srv, _ := tracedServer(t, dir)
		script := filepath.Join(dir, "model.jsonl")
		turns := `{"toolCalls": [{"name": "traced__get_note", "args": {"id": "` + secretArg + `"}}], "usage": {"inputTokens": 120, "outputTokens": 7}}
{"expectResult": {"contains": "the note"}, "text": "Done.", "usage": {"inputTokens": 150, "outputTokens": 3}}
`
		if err := os.WriteFile(script, []byte(turns), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint}
		if code, errOut := telemetryRun(t, env, "run", "-p", "Get the note", "--model", "script:"+script, "--server", srv, "--trust", "traced"); code != exitOK {
			t.Fatalf("run: exit %d: %s", code, errOut)
		}
		raw, data := col.Output(t)
		if strings.Contains(raw, secretArg) || strings.Contains(raw, secretResult) || strings.Contains(raw, "Get the note") || strings.Contains(raw, "Done.") {
			t.Errorf("the collector received an argument, a result, the prompt or the answer:\n%s", raw)
		}
		agent := oneSpan(t, data, "invoke_agent mcphost")
		chats := data.SpansNamed("chat " + script) // the script model's name is its file
		if len(chats) != 2 {
			t.Fatalf("%d chat spans, want 2: %+v", len(chats), data.Spans)
		}
		var in, out int64
		for _, c := range chats {
			if c.ParentSpanID != agent.SpanID || c.Attrs["gen_ai.operation.name"] != "chat" || c.Attrs["gen_ai.provider.name"] != "script" {
				t.Errorf("chat span %+v is not a chat turn under the run %s", c, agent.SpanID)
			}
			in += c.Attrs["gen_ai.usage.input_tokens"].(int64)
			out += c.Attrs["gen_ai.usage.output_tokens"].(int64)
		}
		if in != 270 || out != 10 {
			t.Errorf("turn usage: %d in, %d out; want 270, 10", in, out)
		}
		call := oneSpan(t, data, "tools/call get_note")
		if call.ParentSpanID != agent.SpanID || call.TraceID != agent.TraceID {
			t.Errorf("the tool call %+v is not under the run %s", call, agent.SpanID)
		}
		if data.Metrics["gen_ai.client.token.usage"] == nil {
			t.Errorf("no gen_ai.client.token.usage metric")
		}
	})

	t.Run("http session", func(t *testing.T) {
		// Over streamable HTTP the call's MCP session is named.
		col := otelcoltest.Start(t, bin)
		fx, err := fixtures.New("tasks", fixtures.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(fx.HTTPHandler())
		defer hs.Close()
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint}
		if code, errOut := telemetryRun(t, env, "call", "--server", "tasks="+hs.URL, "--trust", "tasks", "tasks/get_task", `{"id": "T-1"}`); code != exitOK {
			t.Fatalf("call: exit %d: %s", code, errOut)
		}
		_, data := col.Output(t)
		call := oneSpan(t, data, "tools/call get_task")
		attempt := oneSpan(t, data, "tools/call get_task attempt")
		wantAttrs(t, "http call span", call.Attrs, map[string]any{"network.transport": "tcp", "server.address": "127.0.0.1", "server.port": int64(hs.Listener.Addr().(*net.TCPAddr).Port)})
		sid, _ := call.Attrs["mcp.session.id"].(string)
		if sid == "" || attempt.Attrs["mcp.session.id"] != sid {
			t.Errorf("mcp.session.id: call %v, attempt %v; want the same, non-empty", call.Attrs["mcp.session.id"], attempt.Attrs["mcp.session.id"])
		}
	})

	t.Run("serve", func(t *testing.T) {
		// mcphost serve exports its clients' calls as the chat does: one
		// export for the process, flushed when the client leaves.
		col := otelcoltest.Start(t, bin)
		dir := t.TempDir()
		srv, _ := tracedServer(t, dir)
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint,
			"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		done := make(chan int, 1)
		var errOut bytes.Buffer
		go func() {
			s := &streams{In: inR, Out: outW, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
			done <- run(ctx, []string{"serve", "--server", srv, "--trust", "traced", "--ask-via", "deny"}, s)
			outW.Close()
		}()
		c := mcp.NewClient(&mcp.Implementation{Name: "otel-host", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"traced__get_note", "traced__drop_note"} {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"id": secretArg}}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		cs.Close()
		inW.Close()
		if code := <-done; code != exitOK {
			t.Fatalf("serve exited %d: %s", code, errOut.String())
		}
		raw, data := col.Output(t)
		if strings.Contains(raw, secretArg) || strings.Contains(raw, secretResult) {
			t.Errorf("the collector received an argument or a result")
		}
		wantAttrs(t, "served read", oneSpan(t, data, "tools/call get_note").Attrs, map[string]any{
			"mcphost.verdict": "allow", "mcphost.status": "success", "mcphost.server": "traced"})
		wantAttrs(t, "served destructive call", oneSpan(t, data, "tools/call drop_note").Attrs, map[string]any{
			"mcphost.status": "blocked", "mcphost.attempts": int64(0)})
	})

	t.Run("config key", func(t *testing.T) {
		// No OTEL_* endpoint: the config file's "telemetry" decides, its
		// header's value from the environment and never exported.
		col := otelcoltest.Start(t, bin)
		dir := t.TempDir()
		srv, _ := tracedServer(t, dir)
		cfg := filepath.Join(dir, "config.json")
		data := `{"telemetry": {"endpoint": "` + col.Endpoint + `", "headers": {"x-api-key": "${TEAM_OTEL_KEY}"}}}`
		if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"TEAM_OTEL_KEY": secretHeader}
		if code, errOut := telemetryRun(t, env, "call", "--config", cfg, "--server", srv, "--trust", "traced", "traced/get_note", `{}`); code != exitOK {
			t.Fatalf("call: exit %d: %s", code, errOut)
		}
		raw, data2 := col.Output(t)
		oneSpan(t, data2, "tools/call get_note")
		if len(data2.EventsNamed("mcphost.tool_decision")) != 1 {
			t.Errorf("no decision event from the config key's export")
		}
		if strings.Contains(raw, secretHeader) {
			t.Errorf("the collector received the header's value")
		}
	})

	t.Run("collector down", func(t *testing.T) {
		// Nothing listens on the endpoint: the call's exit code is what it
		// would be without telemetry, and a warning says what was dropped,
		// naming no header value.
		dead := deadEndpoint(t)
		dir := t.TempDir()
		srv, _ := tracedServer(t, dir)
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": dead, "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=" + secretHeader}
		code, errOut := telemetryRun(t, env, "call", "--server", srv, "--trust", "traced", "traced/get_note", `{}`)
		if code != exitOK {
			t.Fatalf("call with a dead collector: exit %d: %s", code, errOut)
		}
		if !strings.Contains(errOut, "mcphost: warning: telemetry: some records could not be exported") || !strings.Contains(errOut, "headers x-api-key") {
			t.Errorf("no warning about the dropped export:\n%s", errOut)
		}
		if strings.Contains(errOut, secretHeader) {
			t.Errorf("the warning shows a header value:\n%s", errOut)
		}
	})
}

// deadEndpoint returns an OTLP endpoint on which no one listens.
func deadEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func oneSpan(t *testing.T, d *otelcoltest.Data, name string) otelcoltest.Span {
	t.Helper()
	spans := d.SpansNamed(name)
	if len(spans) != 1 {
		var names []string
		for _, s := range d.Spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d spans named %q, want 1; spans: %q", len(spans), name, names)
	}
	return spans[0]
}

func wantAttrs(t *testing.T, what string, got otelcoltest.Attrs, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %#v, want %#v", what, k, got[k], v)
		}
	}
}
