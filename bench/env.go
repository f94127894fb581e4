//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// benchEnv is what every set shares: the built binaries, the model server,
// the temporary directory.
type benchEnv struct {
	root         string // module root
	tmp          string
	keep         bool
	self         string // this program, re-run as the floor
	mcphost      string
	fixture      string // "" unless a tasks set was chosen
	node         string // "" unless a memory set was chosen
	memoryServer string
	binaryBytes  int64
	machine      machine
	model        *modelServer
	progress     io.Writer
}

// processLimit bounds one run of either side; a run that takes longer has
// hung and is stopped.
const processLimit = 2 * time.Minute

func prepare(ctx context.Context, o *options, progress io.Writer) (*benchEnv, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to re-run it as the floor: %w", err)
	}
	if err := becomeSubreaper(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mcphost-bench-")
	if err != nil {
		return nil, err
	}
	e := &benchEnv{root: root, tmp: tmp, keep: o.Keep, self: self, machine: describeMachine(), progress: progress}

	needMemory, needTasks := false, false
	for _, s := range o.Sets {
		needMemory = needMemory || s.Kind == memoryServer
		needTasks = needTasks || s.Kind == tasksServer
	}
	if needMemory {
		if e.node, err = exec.LookPath("node"); err != nil {
			return e, errors.New("the server-memory sets need Node.js: node is not on PATH (or choose -sets tasks1,tasks10,tasks50)")
		}
		e.memoryServer = filepath.Join(root, "interop", "node_modules", ".bin", "mcp-server-memory")
		if _, err := os.Stat(e.memoryServer); err != nil {
			return e, errors.New("interop/node_modules/.bin/mcp-server-memory is missing: run npm ci in interop/ (or choose -sets tasks1,tasks10,tasks50)")
		}
		if out, err := exec.CommandContext(ctx, e.node, "--version").Output(); err == nil {
			e.machine.NodeVersion = strings.TrimSpace(string(out))
		}
	}

	e.mcphost = filepath.Join(tmp, "bin", "mcphost")
	if err := e.build(ctx, "./cmd/mcphost", e.mcphost); err != nil {
		return e, err
	}
	fi, err := os.Stat(e.mcphost)
	if err != nil {
		return e, err
	}
	e.binaryBytes = fi.Size()
	if needTasks {
		e.fixture = filepath.Join(tmp, "bin", "fixture")
		if err := e.build(ctx, "./fixtures/cmd/fixture", e.fixture); err != nil {
			return e, err
		}
	}
	if e.model, err = startModelServer(); err != nil {
		return e, fmt.Errorf("starting the model server: %w", err)
	}
	return e, nil
}

func (e *benchEnv) build(ctx context.Context, pkg, out string) error {
	fmt.Fprintf(e.progress, "bench: go build %s\n", pkg)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = e.root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, stderr.String())
	}
	return nil
}

func (e *benchEnv) cleanup(progress io.Writer) {
	if e.model != nil {
		e.model.close()
	}
	if left := reapOrphans(); len(left) > 0 {
		fmt.Fprintf(progress, "bench: stopped leftover processes: %s\n", strings.Join(left, ", "))
	}
	if e.keep {
		fmt.Fprintf(progress, "bench: kept %s\n", e.tmp)
		return
	}
	if err := os.RemoveAll(e.tmp); err != nil {
		fmt.Fprintf(progress, "bench: removing the temporary directory: %v\n", err)
	}
}

// moduleRoot finds the mcphost module from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			sc.Scan()
			f.Close()
			if strings.TrimSpace(sc.Text()) == "module github.com/mcphost/mcphost" {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run bench from inside the mcphost module (go run ./bench)")
		}
		dir = parent
	}
}

// childEnv is the environment of both sides: this process's, without model
// keys and settings that could send the run elsewhere, with its own XDG
// directories.
func childEnv(dir string) []string {
	drop := map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "MCPHOST_MODEL": true,
		"OPENAI_BASE_URL": true, "ANTHROPIC_BASE_URL": true,
		"XDG_CONFIG_HOME": true, "XDG_STATE_HOME": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env,
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"NO_COLOR=1")
}

// serverEnv is what a stdio server of mcphost inherits (the variables the
// README lists) plus its own env; the floor gives its servers the same.
func serverEnv(extra map[string]string) []string {
	var env []string
	for _, k := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"} {
		if _, over := extra[k]; over {
			continue
		}
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// setFiles are the files of one set: the same servers for both sides.
type setFiles struct {
	dir, config, floorSpec string
	callServer, callTool   string
}

func (e *benchEnv) writeSetFiles(set serverSet) (*setFiles, error) {
	dir := filepath.Join(e.tmp, set.Name)
	for _, d := range []string{dir, filepath.Join(dir, "config"), filepath.Join(dir, "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	specs, err := e.servers(set, dir)
	if err != nil {
		return nil, err
	}
	type hostServer struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
		Trust   bool              `json:"trust"`
	}
	// Tool search stays off: the floor lists every tool and calls one in
	// a single step, and the model server checks that every tool is
	// offered on the first turn. bench/ctxbench measures search.
	cfg := struct {
		ToolSearch string                `json:"toolSearch"`
		MCPServers map[string]hostServer `json:"mcpServers"`
	}{ToolSearch: "never", MCPServers: map[string]hostServer{}}
	for _, s := range specs {
		cfg.MCPServers[s.Name] = hostServer{Command: s.Command, Args: s.Args, Env: s.Env, Trust: true}
	}
	f := &setFiles{
		dir:        dir,
		config:     filepath.Join(dir, "config.json"),
		floorSpec:  filepath.Join(dir, "floor.json"),
		callServer: specs[0].Name,
		callTool:   set.Kind.ReadTool,
	}
	if err := writeJSONFile(f.config, cfg); err != nil {
		return nil, err
	}
	fs := floorSpec{Servers: specs, CallServer: f.callServer, CallTool: f.callTool}
	if err := writeJSONFile(f.floorSpec, fs); err != nil {
		return nil, err
	}
	return f, nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

const (
	benchPrompt = "Read what the first server holds and summarise it."
	finalAnswer = "The benchmark read is done."
)

// runFloor runs the floor once and returns its measurement and the number
// of tools it listed per server.
func (e *benchEnv) runFloor(ctx context.Context, f *setFiles, label string) (sample, map[string]int, error) {
	cmd := exec.Command(e.self, floorArg, f.floorSpec)
	cmd.Dir = f.dir
	cmd.Env = childEnv(f.dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	s, err := measure(ctx, cmd, processLimit)
	if err == nil && s.ExitCode != 0 {
		err = fmt.Errorf("exit code %d", s.ExitCode)
	}
	var out floorResult
	if err == nil {
		if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
			err = fmt.Errorf("reading its output: %w", jerr)
		}
	}
	if left := reapOrphans(); len(left) > 0 && err == nil {
		err = fmt.Errorf("left processes running: %s", strings.Join(left, ", "))
	}
	if err != nil {
		return s, nil, e.failure("floor", label, f, err, stderr.Bytes())
	}
	return s, out.Tools, nil
}

// hostRun is the part of mcphost's --output json the harness checks.
type hostRun struct {
	Text   string `json:"text"`
	Status string `json:"status"`
	Calls  []struct {
		ModelName string `json:"modelName"`
		Verdict   string `json:"verdict"`
		Status    string `json:"status"`
	} `json:"calls"`
	Error string `json:"error"`
}

// runHost runs mcphost once against the model server, which checks that
// the first turn offers perServer tools of each server.
func (e *benchEnv) runHost(ctx context.Context, f *setFiles, perServer map[string]int, label string) (sample, error) {
	call := f.callServer + "__" + f.callTool
	e.model.expect(perServer, call)
	cmd := exec.Command(e.mcphost, "--config", f.config, "run", "-p", benchPrompt,
		"--model", "openai-compatible:bench", "--base-url", e.model.url, "--output", "json")
	cmd.Dir = f.dir
	cmd.Env = childEnv(f.dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	s, err := measure(ctx, cmd, processLimit)
	turns, problems := e.model.finish()
	switch {
	case err != nil:
	case len(problems) > 0:
		err = errors.New("model server: " + strings.Join(problems, "; "))
	case s.ExitCode != 0:
		err = fmt.Errorf("exit code %d", s.ExitCode)
	case turns != 2:
		err = fmt.Errorf("%d model turns, want 2", turns)
	}
	if err == nil {
		var out hostRun
		if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
			err = fmt.Errorf("reading --output json: %w", jerr)
		} else if out.Status != "done" || len(out.Calls) != 1 || out.Calls[0].ModelName != call || out.Calls[0].Verdict != "allow" || out.Calls[0].Status != "success" || out.Text != finalAnswer {
			err = fmt.Errorf("got %s, want status done, one allowed and successful call of %s, text %q", strings.TrimSpace(stdout.String()), call, finalAnswer)
		}
	}
	if left := reapOrphans(); len(left) > 0 && err == nil {
		err = fmt.Errorf("left server processes running after exit: %s", strings.Join(left, ", "))
	}
	if err != nil {
		return s, e.failure("mcphost", label, f, err, stderr.Bytes())
	}
	return s, nil
}

// failure describes a failed run with the end of its stderr, and keeps the
// whole of it when -keep is set.
func (e *benchEnv) failure(side, label string, f *setFiles, err error, stderr []byte) error {
	msg := fmt.Sprintf("%s (%s): %v", side, label, err)
	if e.keep {
		path := filepath.Join(f.dir, side+"-"+strings.ReplaceAll(label, " ", "-")+".stderr")
		if werr := os.WriteFile(path, stderr, 0o644); werr == nil {
			msg += "; stderr in " + path
		}
	}
	lines := strings.Split(strings.TrimSpace(string(stderr)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	if tail := strings.TrimSpace(strings.Join(lines, "\n")); tail != "" {
		msg += "\n  stderr: " + strings.ReplaceAll(tail, "\n", "\n  ")
	}
	return errors.New(msg)
}

// measureSet runs the warm-up pair and then runs pairs, floor first, so
// that slow drift of the machine touches both sides alike.
func (e *benchEnv) measureSet(ctx context.Context, set serverSet, runs int) *setResult {
	res := &setResult{Name: set.Name, Server: set.Kind.Label, Servers: set.N, RatioTarget: set.ratioTarget()}
	fail := func(err error) *setResult {
		res.Failure = err.Error()
		return res
	}
	f, err := e.writeSetFiles(set)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(e.progress, "bench: %s (%d × %s): warm-up\n", set.Name, set.N, set.Kind.Label)
	_, perServer, err := e.runFloor(ctx, f, "warm-up")
	if err != nil {
		return fail(err)
	}
	if len(perServer) != set.N {
		return fail(fmt.Errorf("floor (warm-up): listed %d servers, want %d", len(perServer), set.N))
	}
	for name, n := range perServer {
		if n == 0 {
			return fail(fmt.Errorf("floor (warm-up): server %s listed no tools", name))
		}
		res.Tools += n
	}
	if _, err := e.runHost(ctx, f, perServer, "warm-up"); err != nil {
		return fail(err)
	}
	for i := range runs {
		label := fmt.Sprintf("run %d", i+1)
		fs, tools, err := e.runFloor(ctx, f, label)
		if err != nil {
			return fail(err)
		}
		if !sameCounts(tools, perServer) {
			return fail(fmt.Errorf("floor (%s): tool counts changed between runs: %v, then %v", label, perServer, tools))
		}
		hs, err := e.runHost(ctx, f, perServer, label)
		if err != nil {
			return fail(err)
		}
		res.Pairs = append(res.Pairs, pair{Floor: fs, Host: hs})
		fmt.Fprintf(e.progress, "bench: %s %s/%d: floor %s, mcphost %s (×%.2f), mcphost RSS %s\n",
			set.Name, label, runs, ms(fs.Wall), ms(hs.Wall), ratio(hs.Wall, fs.Wall), mib(hs.PeakRSS))
	}
	res.summarize()
	return res
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
