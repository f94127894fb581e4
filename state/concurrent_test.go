package state

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
)

// A test binary started with these variables set is a worker for
// TestConcurrentProcesses: it runs its updates and exits.
const (
	envWorkerPath = "MCPHOST_STATE_TEST_WORKER_PATH"
	envWorkerName = "MCPHOST_STATE_TEST_WORKER_NAME"
)

// updatesPerWorker is how many read-modify-write cycles each goroutine or
// process runs; enough for the cycles to overlap.
const updatesPerWorker = 15

func TestMain(m *testing.M) {
	if path := os.Getenv(envWorkerPath); path != "" {
		if err := work(path, os.Getenv(envWorkerName)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// work adds one grant, one pin and one trust per update, each named after
// the worker, so that a lost update shows as a missing entry.
func work(path, name string) error {
	for i := range updatesPerWorker {
		tool := fmt.Sprintf("t%03d", i)
		err := Update(path, clock(), func(s *State) error {
			s.SetPin(name, tool, "h")
			s.SetTrust(name+"/"+tool, name, true)
			return s.AddGrant(always(name, tool, "h"), name)
		})
		if err != nil {
			return fmt.Errorf("worker %s, update %d: %w", name, i, err)
		}
	}
	return nil
}

func checkAllPresent(t *testing.T, path string, workers []string) {
	t.Helper()
	s := mustLoad(t, path)
	for _, w := range workers {
		for i := range updatesPerWorker {
			tool := fmt.Sprintf("t%03d", i)
			if _, ok := s.Pin(w, tool); !ok {
				t.Errorf("pin %s/%s lost", w, tool)
			}
			if !s.Trusted(w + "/" + tool) {
				t.Errorf("trust %s/%s lost", w, tool)
			}
		}
	}
	if got, want := len(s.Grants()), len(workers)*updatesPerWorker; got != want {
		t.Errorf("%d grants after the updates, want %d", got, want)
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	path := statePath(t)
	var workers []string
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		name := "g" + strconv.Itoa(i)
		workers = append(workers, name)
		wg.Go(func() { errs <- work(path, name) })
	}

	// A reader that never takes the lock always sees a whole file.
	done := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() {
		for {
			select {
			case <-done:
				readerErr <- nil
				return
			default:
			}
			if _, err := Load(path); err != nil {
				readerErr <- err
				return
			}
		}
	}()

	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := <-readerErr; err != nil {
		t.Errorf("Load during updates: %v", err)
	}
	checkAllPresent(t, path, workers)
}

func TestConcurrentProcesses(t *testing.T) {
	if !lockAcrossProcesses {
		t.Skip("no lock across processes on this system")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	path := statePath(t)
	var workers []string
	var cmds []*exec.Cmd
	for i := range 4 {
		name := "p" + strconv.Itoa(i)
		workers = append(workers, name)
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envWorkerPath+"="+path, envWorkerName+"="+name)
		cmds = append(cmds, cmd)
	}
	outs := make([][]byte, len(cmds))
	errs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Go(func() { outs[i], errs[i] = cmd.CombinedOutput() })
	}
	// This process takes part too.
	for i := range 2 {
		name := "self" + strconv.Itoa(i)
		workers = append(workers, name)
		wg.Go(func() {
			if err := work(path, name); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range cmds {
		if errs[i] != nil {
			t.Errorf("worker %s: %v\n%s", workers[i], errs[i], outs[i])
		}
	}
	checkAllPresent(t, path, workers)
}
