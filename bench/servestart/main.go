//go:build linux

// Command servestart measures how `mcphost serve` starts and what it costs
// to keep running, driving the real binary on stdio as a host would, with
// go-sdk's client. For each setup it prints, as a markdown table: the time
// from starting the process to the answer of initialize, to the answer of
// the first tools/list and the tools in it, and the peak resident set of
// mcphost alone after 100 reads through it.
//
//	go build -o mcphost ./cmd/mcphost
//	go build -o fixture ./fixtures/cmd/fixture
//	go run ./bench/servestart ./mcphost ./fixture
//
// The setups: "hanging", one tasks fixture beside a server that never
// answers (sleep), whose first tools/list must not wait past the second
// serve gives a server with nothing pinned while other tools are ready;
// "ten", ten tasks fixtures. Figures are measured, not judged: the program
// exits 1 only when it cannot run.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/mcphost/mcphost/internal/procstat"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	reads := flag.Int("reads", 100, "reads made through serve before the peak memory is read")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: servestart [flags] MCPHOST FIXTURE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	mcphost, fixture := flag.Arg(0), flag.Arg(1)
	fmt.Println("| setup | initialize | first tools/list | tools listed | peak RSS after reads |")
	fmt.Println("|---|--:|--:|--:|--:|")
	for _, s := range []struct {
		name    string
		tasks   int
		hanging bool
	}{{"hanging", 1, true}, {"ten", 10, false}} {
		r, err := measure(mcphost, fixture, s.tasks, s.hanging, *reads)
		if err != nil {
			fmt.Fprintf(os.Stderr, "servestart: %s: %v\n", s.name, err)
			os.Exit(1)
		}
		fmt.Printf("| %s (%d tasks fixtures%s) | %.0f ms | %.2f s | %d | %.1f MiB |\n", s.name, s.tasks,
			map[bool]string{true: ", one server that never answers"}[s.hanging],
			ms(r.initialize), r.firstList.Seconds(), r.tools, float64(r.peakRSS)/(1<<20))
	}
}

type result struct {
	initialize, firstList time.Duration
	tools                 int
	peakRSS               int64
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// measure runs one setup in a fresh configuration and state directory.
func measure(mcphost, fixture string, tasks int, hanging bool, reads int) (result, error) {
	var r result
	dir, err := os.MkdirTemp("", "servestart-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	servers := map[string]any{}
	for i := 1; i <= tasks; i++ {
		servers[fmt.Sprint("tasks", i)] = map[string]any{"command": fixture, "args": []string{"tasks"}, "trust": true}
	}
	if hanging {
		servers["hang"] = map[string]any{"command": "sleep", "args": []string{"600"}}
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcphost, "--config", cfgPath, "serve")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	start := time.Now()
	c := mcp.NewClient(&mcp.Implementation{Name: "servestart", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return r, fmt.Errorf("initialize: %w", err)
	}
	defer cs.Close()
	r.initialize = time.Since(start)
	lst, err := cs.ListTools(ctx, nil)
	if err != nil {
		return r, fmt.Errorf("tools/list: %w", err)
	}
	r.firstList, r.tools = time.Since(start), len(lst.Tools)
	for range reads {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tasks1__list_tasks", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			return r, fmt.Errorf("read through serve: %v %v", err, res)
		}
	}
	var ok bool
	if r.peakRSS, ok = procstat.PeakRSS(cmd.Process.Pid); !ok {
		return r, fmt.Errorf("no peak memory for process %d", cmd.Process.Pid)
	}
	return r, nil
}
