//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// floorArg makes this program run as the floor: the least a host can do
// with the same servers. It is an argument rather than a flag so that it
// stays out of the usage text.
const floorArg = "-floor-child"

// floorSpec is what the harness hands the floor: the servers, and the tool
// to call.
type floorSpec struct {
	Servers    []serverSpec `json:"servers"`
	CallServer string       `json:"callServer"`
	CallTool   string       `json:"callTool"`
}

// floorResult is the floor's stdout.
type floorResult struct {
	Tools       map[string]int `json:"tools"` // tools listed, per server
	ResultBytes int            `json:"resultBytes"`
}

// protocolVersion is the version both sides ask for (mcphost's default).
const protocolVersion = "2025-11-25"

// floorMain starts every server in parallel, initializes and lists its
// tools, calls one tool, and closes everything: no model, no gate, no
// audit. It stops the servers the way mcphost does — close stdin, wait,
// then end the server's process group.
func floorMain(specPath string, stdout, stderr io.Writer) int {
	b, err := os.ReadFile(specPath)
	if err != nil {
		fmt.Fprintln(stderr, "floor:", err)
		return 1
	}
	var spec floorSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		fmt.Fprintf(stderr, "floor: %s: %v\n", specPath, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost-bench-floor", Version: "1"}, nil)
	sessions := make([]*mcp.ClientSession, len(spec.Servers))
	pids := make([]int, len(spec.Servers))
	counts := make([]int, len(spec.Servers))
	errs := make([]error, len(spec.Servers))
	var wg sync.WaitGroup
	for i, s := range spec.Servers {
		wg.Go(func() {
			cmd := exec.Command(s.Command, s.Args...)
			cmd.Env = serverEnv(s.Env)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.WaitDelay = 2 * time.Second
			t := &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
			cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
			if cmd.Process != nil {
				pids[i] = cmd.Process.Pid
			}
			if err != nil {
				errs[i] = fmt.Errorf("connect %q: %w", s.Name, err)
				return
			}
			sessions[i] = cs
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					errs[i] = fmt.Errorf("list tools of %q: %w", s.Name, err)
					return
				}
				_ = tool
				counts[i]++
			}
		})
	}
	wg.Wait()

	out := floorResult{Tools: map[string]int{}}
	err = errors.Join(errs...)
	if err == nil {
		for i, s := range spec.Servers {
			out.Tools[s.Name] = counts[i]
			if s.Name == spec.CallServer {
				out.ResultBytes, err = floorCall(ctx, sessions[i], spec.CallTool)
				if err != nil {
					err = fmt.Errorf("call %s/%s: %w", s.Name, spec.CallTool, err)
				}
			}
		}
	}

	for i, cs := range sessions {
		wg.Go(func() {
			if cs != nil {
				_ = cs.Close()
			}
			if pids[i] > 0 {
				_ = syscall.Kill(-pids[i], syscall.SIGKILL)
			}
		})
	}
	wg.Wait()

	if err != nil {
		fmt.Fprintln(stderr, "floor:", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintln(stderr, "floor:", err)
		return 1
	}
	return 0
}

func floorCall(ctx context.Context, cs *mcp.ClientSession, tool string) (int, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return 0, err
	}
	if res.IsError {
		return 0, errors.New("the tool returned isError")
	}
	b, err := json.Marshal(res.Content)
	return len(b), err
}
