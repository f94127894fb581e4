//go:build linux

// Command bench measures the time and memory mcphost adds on top of the MCP
// servers it runs.
//
// For each set of servers it alternates two programs, run as separate
// processes: the floor, a minimal go-sdk client that starts the same servers,
// lists their tools and calls one tool, and "mcphost run" in headless mode
// against a local OpenAI-compatible model served by this program, which asks
// for the same call. It prints the medians and the paired ratio
// mcphost/floor as a markdown table (or JSON with -json).
//
//	go run ./bench -runs 5
//
// Benchmarks measure; the targets are printed beside the figures and never
// fail a run. The program exits 1 when a run fails functionally (a process
// fails, the model is not offered every server's tools on its first turn,
// the call does not succeed, a server is left running) and 2 on a usage or
// setup error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == floorArg {
		os.Exit(floorMain(os.Args[2], os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const (
	exitOK     = 0
	exitFailed = 1 // a run failed functionally
	exitUsage  = 2 // bad flags or a missing prerequisite
)

// options are the command-line flags.
type options struct {
	Runs int
	Sets []serverSet
	JSON bool
	Keep bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	var sets string
	fs.IntVar(&o.Runs, "runs", 5, "measured runs of each side per server set (at least 5 for a median worth quoting)")
	fs.StringVar(&sets, "sets", "all", "comma-separated server sets: "+strings.Join(setNames(), ", ")+", or all")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON instead of a markdown table")
	fs.BoolVar(&o.Keep, "keep", false, "keep the temporary directory (configs, state, audit logs, stderr of failed runs)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./bench [-runs N] [-sets LIST] [-json] [-keep]\n\n"+
			"Measures mcphost run against a minimal go-sdk client over the same MCP servers.\n"+
			"Run it from the root of the mcphost module.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.Runs < 1 {
		return nil, fmt.Errorf("-runs %d: want at least 1", o.Runs)
	}
	if sets == "all" {
		o.Sets = allSets
		return o, nil
	}
	for name := range strings.SplitSeq(sets, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(allSets, func(s serverSet) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("-sets: unknown set %q; want %s or all", name, strings.Join(setNames(), ", "))
		}
		if !slices.ContainsFunc(o.Sets, func(s serverSet) bool { return s.Name == name }) {
			o.Sets = append(o.Sets, allSets[i])
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return exitUsage
	}
	if o.Runs < 5 {
		fmt.Fprintf(stderr, "bench: warning: -runs %d; medians of fewer than 5 runs are noisy\n", o.Runs)
	}

	env, err := prepare(ctx, o, stderr)
	if env != nil {
		defer env.cleanup(stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return exitUsage
	}

	rep := &report{
		Runs:         o.Runs,
		Machine:      env.machine,
		BinaryBytes:  env.binaryBytes,
		RSSTargetMiB: rssTargetMiB,
	}
	failed := false
	for _, set := range o.Sets {
		res := env.measureSet(ctx, set, o.Runs)
		if res.Failure != "" {
			failed = true
			fmt.Fprintf(stderr, "bench: %s FAILED: %s\n", set.Name, res.Failure)
		}
		rep.Sets = append(rep.Sets, res)
		if ctx.Err() != nil {
			break
		}
	}
	if o.JSON {
		err = rep.writeJSON(stdout)
	} else {
		err = rep.writeMarkdown(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench: writing the report:", err)
		return exitFailed
	}
	if failed || ctx.Err() != nil {
		return exitFailed
	}
	return exitOK
}

// machine describes where the figures were taken.
type machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpuModel"`
	OS          string `json:"os"`
	GoVersion   string `json:"goVersion"`
	NodeVersion string `json:"nodeVersion,omitempty"`
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.Join(strings.Fields(v), " ")
				break
			}
		}
	}
	return m
}
