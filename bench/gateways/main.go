//go:build linux

// Command gateways measures what a gateway in front of an MCP server adds
// to a read, side by side with its peers in one run: the same go-sdk client
// calls server-memory's read_graph straight on the server, through a go-sdk
// pass-through proxy (go-sdk's own client and server, no mcphost code) and
// mcphost serve, each on stdio and on streamable HTTP, and through the
// Node gateways mcp-proxy and supergateway (--stateful), both pinned in
// interop/package.json. Run it from the repository root after
// "npm ci" in interop/:
//
//	go run ./bench/gateways
//
// It builds mcphost from ./cmd/mcphost (or takes -mcphost), starts every
// path, warms each up, then makes -reads reads per path in -rounds rounds,
// the order of the paths rotating from round to round, so that every path
// sees the same load of a shared machine. It prints a markdown table: p50
// and p99 of the calls; the p50 over the direct path's, and over the go-sdk
// pass-through's on the same transport (a gateway's own work); the
// processor time per call of the gateway process alone (of the server for
// the direct path; /proc counts it in 10 ms ticks); and its peak resident
// set alone. With -baseline, a second mcphost (say, built before a change)
// is measured in the same rounds. Every listener is on 127.0.0.1
// (supergateway, which has no host flag, is held there by a preloaded
// module). Figures are measured, not judged: the program exits 1 only when
// it cannot run.
package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/procstat"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// proxyEnv makes this program the go-sdk pass-through proxy in front of
// the command in its arguments: on stdio when it is "stdio", on streamable
// HTTP at 127.0.0.1 when it is "http".
const proxyEnv = "MCPHOST_BENCH_GATEWAYS_PROXY"

//go:embed loopback.cjs
var loopbackJS []byte

func main() {
	if mode := os.Getenv(proxyEnv); mode != "" {
		if err := proxy(context.Background(), mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "gateways proxy:", err)
			os.Exit(1)
		}
		return
	}
	reads := flag.Int("reads", 1000, "reads per path, measured")
	rounds := flag.Int("rounds", 10, "rounds the reads are split into, the order of the paths rotating")
	warm := flag.Int("warm", 50, "reads per path before measuring")
	mcphost := flag.String("mcphost", "", "the mcphost binary (default: built from ./cmd/mcphost)")
	interop := flag.String("interop", "interop", "the directory where npm ci installed the Node packages")
	protocol := flag.String("protocol", "", "the protocol `VERSION` the client asks for (default: go-sdk's newest)")
	only := flag.String("only", "", "measure only the paths whose names match `REGEXP` (and direct)")
	baseline := flag.String("baseline", "", "also measure mcphost serve built as `BIN`, say before a change, in the same rounds")
	profile := flag.String("profile", "", "write CPU profiles of mcphost serve to `DIR` (serve-stdio.pprof, serve-http.pprof, ...)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gateways [flags]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 || *reads < 1 || *rounds < 1 || *rounds > *reads {
		flag.Usage()
		os.Exit(2)
	}
	if *protocol != "" {
		sessionOpts = &mcp.ClientSessionOptions{ProtocolVersion: *protocol}
	}
	if err := run(*mcphost, *baseline, *interop, *only, *profile, *reads, *rounds, *warm); err != nil {
		fmt.Fprintln(os.Stderr, "gateways:", err)
		os.Exit(1)
	}
}

// start starts a path and connects to it.
type start struct {
	name  string
	start func(name string) (*path, error)
}

// path is one way to reach the server, started and connected.
type path struct {
	name string
	tool string
	cs   *mcp.ClientSession
	pid  int  // the process whose CPU and memory are counted
	http bool // the client speaks streamable HTTP to it, not stdio
	stop func()

	durs []time.Duration
	cpu  time.Duration
}

func run(mcphost, baseline, interop, only, profile string, reads, rounds, warm int) error {
	onlyRE, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	dir, err := os.MkdirTemp("", "gateways-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if mcphost == "" {
		mcphost = filepath.Join(dir, "mcphost")
		fmt.Fprintln(os.Stderr, "building mcphost…")
		b := exec.Command("go", "build", "-o", mcphost, "./cmd/mcphost")
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			return fmt.Errorf("build mcphost (run from the repository root, or pass -mcphost): %w", err)
		}
	}
	mods, err := filepath.Abs(filepath.Join(interop, "node_modules"))
	if err != nil {
		return err
	}
	server := filepath.Join(mods, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	for _, f := range []string{server, filepath.Join(mods, "mcp-proxy"), filepath.Join(mods, "supergateway")} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%w: run \"npm ci\" in %s first", err, interop)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("the Node gateways and server-memory need node: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	loopback := filepath.Join(dir, "loopback.cjs")
	if err := os.WriteFile(loopback, loopbackJS, 0o600); err != nil {
		return err
	}
	// Each path has a server of its own, with a graph file of its own.
	serverCmd := func(name string) []string { return []string{node, server} }
	serverEnv := func(name string) []string {
		return append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(dir, name+"-memory.jsonl"))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	starts := []start{
		{"direct", func(name string) (*path, error) {
			cmd := exec.Command(node, server)
			cmd.Env = serverEnv("direct")
			return stdioPath(ctx, name, "read_graph", cmd)
		}},
		{"go-sdk pass-through (stdio)", func(name string) (*path, error) {
			cmd := exec.Command(self, serverCmd("proxy")...)
			cmd.Env = append(serverEnv("proxy"), proxyEnv+"=stdio")
			return stdioPath(ctx, name, "read_graph", cmd)
		}},
		{"go-sdk pass-through (HTTP)", func(name string) (*path, error) {
			cmd := exec.Command(self, serverCmd("proxy-http")...)
			cmd.Env = append(serverEnv("proxy-http"), proxyEnv+"=http")
			url, err := startServing(cmd)
			if err != nil {
				return nil, fmt.Errorf("pass-through on HTTP: %w", err)
			}
			return httpPath(ctx, name, "read_graph", url, "", cmd)
		}},
		{"mcp-proxy (npm, stream)", func(name string) (*path, error) {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(node, filepath.Join(mods, "mcp-proxy", "dist", "bin", "mcp-proxy.mjs"),
				"--host", "127.0.0.1", "--port", port, "--server", "stream", "--", node, server)
			cmd.Env = serverEnv("mcp-proxy")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			return httpPath(ctx, name, "read_graph", "http://127.0.0.1:"+port+"/mcp", "", cmd)
		}},
		{"supergateway --stateful (npm)", func(name string) (*path, error) {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(node, "--require", loopback, filepath.Join(mods, "supergateway", "dist", "index.js"),
				"--stdio", shellQuote(node)+" "+shellQuote(server), "--outputTransport", "streamableHttp",
				"--stateful", "--port", port, "--logLevel", "none")
			cmd.Env = serverEnv("supergateway")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			return httpPath(ctx, name, "read_graph", "http://127.0.0.1:"+port+"/mcp", "", cmd)
		}},
	}
	serves := func(label, bin string) []start {
		return []start{{"mcphost serve (stdio)" + label, func(name string) (*path, error) {
			cmd, err := mcphostCmd(bin, dir, "stdio"+label, profile, serverCmd(name), serverEnv(name))
			if err != nil {
				return nil, err
			}
			return stdioPath(ctx, name, "memory__read_graph", cmd)
		}}, {"mcphost serve (HTTP)" + label, func(name string) (*path, error) {
			cmd, err := mcphostCmd(bin, dir, "http"+label, profile, serverCmd(name), serverEnv(name))
			if err != nil {
				return nil, err
			}
			cmd.Args = append(cmd.Args, "--http", "127.0.0.1:0", "--token-file", filepath.Join(dir, "http-token"))
			url, err := startServing(cmd)
			if err != nil {
				return nil, fmt.Errorf("mcphost serve --http: %w", err)
			}
			return httpPath(ctx, name, "memory__read_graph", url, benchToken, cmd)
		}}}
	}
	starts = slices.Insert(starts, 3, serves("", mcphost)...)
	if baseline != "" {
		starts = slices.Insert(starts, 5, serves(" baseline", baseline)...)
	}
	var paths []*path
	defer func() {
		for _, p := range paths {
			p.stop()
		}
	}()
	for _, s := range starts {
		if s.name != "direct" && !onlyRE.MatchString(s.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "starting %s…\n", s.name)
		p, err := s.start(s.name)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		paths = append(paths, p)
		for range warm {
			if err := read(ctx, p); err != nil {
				return fmt.Errorf("%s: warm-up: %w", p.name, err)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "measuring %d reads per path in %d rounds…\n", reads, rounds)
	for r := range rounds {
		n := reads / rounds
		if r < reads%rounds {
			n++
		}
		for i := range paths {
			p := paths[(i+r)%len(paths)]
			before, ok1 := procstat.CPUTime(p.pid)
			for range n {
				start := time.Now()
				if err := read(ctx, p); err != nil {
					return fmt.Errorf("%s: %w", p.name, err)
				}
				p.durs = append(p.durs, time.Since(start))
			}
			after, ok2 := procstat.CPUTime(p.pid)
			if !ok1 || !ok2 {
				return fmt.Errorf("%s: no processor time for process %d", p.name, p.pid)
			}
			p.cpu += after - before
		}
	}
	fmt.Println("| path | p50 | p99 | p50 over direct | p50 over go-sdk pass-through | CPU per call | peak RSS |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|")
	// The pass-through on the same transport is what a gateway's own work
	// is measured against.
	var direct time.Duration
	through := map[bool]time.Duration{}
	for _, p := range paths {
		slices.Sort(p.durs)
		switch p.name {
		case "direct":
			direct = at(p.durs, 0.50)
		case "go-sdk pass-through (stdio)", "go-sdk pass-through (HTTP)":
			through[p.http] = at(p.durs, 0.50)
		}
	}
	for _, p := range paths {
		p50, p99 := at(p.durs, 0.50), at(p.durs, 0.99)
		rss, ok := procstat.PeakRSS(p.pid)
		if !ok {
			return fmt.Errorf("%s: no peak memory for process %d", p.name, p.pid)
		}
		over, overThrough := "—", "—"
		if p.name != "direct" {
			over = fmt.Sprintf("%+.2f ms", ms(p50-direct))
		}
		if t, ok := through[p.http]; ok && p.name != "direct" && !strings.HasPrefix(p.name, "go-sdk pass-through") {
			overThrough = fmt.Sprintf("%+.2f ms", ms(p50-t))
		}
		fmt.Printf("| %s | %.2f ms | %.2f ms | %s | %s | %.3f ms | %.0f MiB |\n", p.name, ms(p50), ms(p99), over, overThrough,
			ms(p.cpu)/float64(len(p.durs)), float64(rss)/(1<<20))
	}
	return nil
}

func read(ctx context.Context, p *path) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: p.tool, Arguments: map[string]any{}})
	if err != nil {
		return err
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return fmt.Errorf("%s answered an error: %s", p.tool, b)
	}
	return nil
}

func at(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

var (
	client = mcp.NewClient(&mcp.Implementation{Name: "gateways-bench", Version: "1"}, nil)
	// sessionOpts pins the protocol version when -protocol is set.
	sessionOpts *mcp.ClientSessionOptions
)

func stdioPath(ctx context.Context, name, tool string, cmd *exec.Cmd) (*path, error) {
	cmd.Stderr = io.Discard
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, sessionOpts)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return &path{name: name, tool: tool, cs: cs, pid: cmd.Process.Pid, stop: func() { cs.Close() }}, nil
}

// httpPath connects to a gateway started by cmd that will listen at url,
// waiting up to 30 seconds for it to answer.
func httpPath(ctx context.Context, name, tool, url, token string, cmd *exec.Cmd) (*path, error) {
	hc := &http.Client{Transport: &bearer{token, &http.Transport{}}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, sessionOpts)
		if err == nil {
			return &path{name: name, tool: tool, cs: cs, pid: cmd.Process.Pid, http: true, stop: func() { cs.Close(); kill(cmd) }}, nil
		}
		if time.Now().After(deadline) {
			kill(cmd)
			return nil, fmt.Errorf("initialize at %s: %w", url, err)
		}
		time.Sleep(100 * time.Millisecond) // the gateway is still starting its server
	}
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.rt.RoundTrip(r)
}

// kill interrupts cmd, as ctrl+c would, so that it can write what it
// keeps (a profile), and kills it if it is still there after 5 seconds.
func kill(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	t := time.AfterFunc(5*time.Second, func() { _ = cmd.Process.Kill() })
	_ = cmd.Wait()
	t.Stop()
}

// mcphostCmd returns mcphost serve in front of the server, with a
// configuration and state of its own under dir/name.
func mcphostCmd(mcphost, dir, name, profile string, server, env []string) (*exec.Cmd, error) {
	home := filepath.Join(dir, name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	senv := map[string]string{}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "MEMORY_FILE_PATH" {
			senv[k] = v
		}
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"memory": map[string]any{"command": server[0], "args": server[1:], "env": senv, "trust": true}}})
	cfgPath := filepath.Join(home, "config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "http-token"), []byte(benchToken+"\n"), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(mcphost, "--config", cfgPath, "serve")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	if profile != "" {
		abs, err := filepath.Abs(filepath.Join(profile, "serve-"+name+".pprof"))
		if err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, "MCPHOST_CPUPROFILE="+abs)
	}
	return cmd, nil
}

// waitLine reads r until a line matches re and returns its first group;
// the rest of r is drained in the background.
func waitLine(r io.Reader, re *regexp.Regexp) (string, error) {
	sc := bufio.NewScanner(r)
	var seen []string
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return m[1], nil
		}
		seen = append(seen, sc.Text())
	}
	return "", fmt.Errorf("exited before listening: %s", strings.Join(seen, "\n"))
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// proxy serves every tool of the server that args start, on stdio or on
// streamable HTTP (mode), passing each call through with go-sdk's client
// and server and nothing else.
func proxy(ctx context.Context, mode string, args []string) error {
	if len(args) == 0 {
		return errors.New("no server command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	up, err := mcp.NewClient(&mcp.Implementation{Name: "pass-through", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer up.Close()
	lst, err := up.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "pass-through", Version: "1"}, nil)
	for _, t := range lst.Tools {
		s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
		})
	}
	if mode != "http" {
		return s.Run(ctx, &mcp.StdioTransport{})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "serving MCP on http://%s/mcp\n", ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	return http.Serve(ln, mux)
}

// benchToken is the bearer token of the measured serve: long enough for
// serve to take it as a secret.
const benchToken = "bench-token-of-the-gateways-run"

// servingLine is what mcphost serve and the HTTP pass-through print once
// they listen.
var servingLine = regexp.MustCompile(`serving MCP on (http://\S+)`)

// startServing starts cmd and returns the URL it says it serves on; cmd is
// killed if it never says so.
func startServing(cmd *exec.Cmd) (string, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	url, err := waitLine(stderr, servingLine)
	if err != nil {
		kill(cmd)
		return "", err
	}
	return url, nil
}
