package approver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/host"
)

// harnessEnv, set to a directory, makes the test binary a stand-in for
// mcphost serve in scripts/tui-e2e-approve.sh: a Broker on the socket of
// DIR/state/mcphost, two gates over the flaky fixture (one trusted, one
// not), and three calls that need a person, asked one after the other so
// that they queue in a known order:
//
//  1. trusted set_value colour=blue   (T2)
//  2. untrusted set_value colour=green (T3: the typed name)
//  3. trusted set_value colour=red     (T2)
//
// Each result goes to DIR/results.jsonl as {"n","status","runs"} (runs:
// how often the fixture of that gate executed set_value so far); DIR/ready
// is written once the socket listens, DIR/done when all three returned;
// then it waits for SIGTERM.
const harnessEnv = "MCPHOST_APPROVER_HARNESS"

// harnessClient is the client the stand-in's calls are for, as serve's
// client names itself: the approver shows it.
var harnessClient = &audit.Client{Name: "e2e client", Version: "1.0"}

type harnessResult struct {
	N      int    `json:"n"`
	Status string `json:"status"`
	Runs   int    `json:"runs"`
}

func harness(dir string) int {
	if err := runHarness(dir); err != nil {
		fmt.Fprintln(os.Stderr, "approver harness:", err)
		return 1
	}
	return 0
}

func runHarness(dir string) error {
	b, err := Listen(SocketPath(filepath.Join(dir, "state", "mcphost")), Options{Label: "e2e harness"})
	if err != nil {
		return err
	}
	defer b.Close()
	logs := map[bool]string{true: filepath.Join(dir, "exec-trusted.jsonl"), false: filepath.Join(dir, "exec-untrusted.jsonl")}
	gates := map[bool]*host.Gate{}
	for _, trusted := range []bool{true, false} {
		sub := filepath.Join(dir, fmt.Sprint("gate-", trusted))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return err
		}
		g, stop, err := newGateFor(sub, logs[trusted], trusted, b, harnessClient)
		if err != nil {
			return err
		}
		defer stop()
		gates[trusted] = g
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The calls are asked only once an approver listens: asked earlier,
	// the broker refuses them, as serve would.
	if err := until(ctx, b.Waiting); err != nil {
		return fmt.Errorf("no approver connected: %w", err)
	}
	calls := []struct {
		trusted bool
		args    string
	}{{true, `{"key":"colour","value":"blue"}`}, {false, `{"key":"colour","value":"green"}`}, {true, `{"key":"colour","value":"red"}`}}
	results := make([]chan *host.Result, len(calls))
	for i, c := range calls {
		results[i] = make(chan *host.Result, 1)
		go func() {
			results[i] <- gates[c.trusted].Call(ctx, host.Call{Server: "f", Tool: "set_value", Args: json.RawMessage(c.args)})
		}()
		if err := until(ctx, func() bool { return b.queued() == i+1 }); err != nil {
			return fmt.Errorf("call %d was not queued: %w", i+1, err)
		}
	}
	f, err := os.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for i, ch := range results {
		r := <-ch
		runs, err := runsOf(logs[calls[i].trusted], "set_value")
		if err != nil {
			return err
		}
		if err := enc.Encode(harnessResult{N: i + 1, Status: string(r.Status), Runs: runs}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o600); err != nil {
		return err
	}
	// Stay, as serve does, until stopped: the approver is connected still.
	stop, cancelStop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer cancelStop()
	<-stop.Done()
	return nil
}

// until polls cond; the harness is a process of its own, not a test.
func until(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// queued counts the questions waiting for an answer.
func (b *Broker) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.order)
}
