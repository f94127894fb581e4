//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/internal/procstat"
	"golang.org/x/sys/unix"
)

// sample is one run of one side.
type sample struct {
	Wall time.Duration `json:"wallNs"`
	// OwnCPU is user+system time of the process alone, read from
	// /proc/PID/stat once it has exited and before it is reaped.
	OwnCPU time.Duration `json:"ownCpuNs"`
	// TotalCPU is the process and every child it reaped: its servers.
	TotalCPU time.Duration `json:"totalCpuNs"`
	// PeakRSS is VmHWM of the process alone. wait4's maxrss would be the
	// largest of the process and its children, so it is sampled instead,
	// every pollInterval; the last value read before exit is kept.
	PeakRSS  int64 `json:"peakRssBytes"`
	ExitCode int   `json:"exitCode"`
}

const pollInterval = 5 * time.Millisecond

// clockTick is the unit of the times in /proc/PID/stat. USER_HZ is 100 on
// every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// measure starts cmd, samples it until it exits, and reaps it. It stops the
// process (SIGTERM, then SIGKILL) when limit passes or ctx ends, and then
// returns an error.
func measure(ctx context.Context, cmd *exec.Cmd, limit time.Duration) (sample, error) {
	var s sample
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	pid := cmd.Process.Pid

	var peak atomic.Int64
	stopPolling, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		for {
			if v, ok := procstat.PeakRSS(pid); ok {
				peak.Store(v)
			}
			select {
			case <-stopPolling:
				return
			case <-t.C:
			}
		}
	}()

	exited := make(chan struct{})
	var waitErr error
	go func() {
		defer close(exited)
		waitErr = waitExited(pid)
	}()
	var stopped error
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		stopped = fmt.Errorf("still running after %s; stopped", limit)
	case <-ctx.Done():
		stopped = errors.New("interrupted")
	}
	if stopped != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	s.Wall = time.Since(start)
	if own, err := readCPU(pid); err == nil {
		s.OwnCPU = own
	}
	close(stopPolling)
	<-polled
	s.PeakRSS = peak.Load()

	err := cmd.Wait()
	if ps := cmd.ProcessState; ps != nil {
		s.ExitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			s.TotalCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	var exitErr *exec.ExitError
	switch {
	case stopped != nil:
		return s, stopped
	case waitErr != nil:
		return s, fmt.Errorf("waiting for exit: %w", waitErr)
	case err != nil && !errors.As(err, &exitErr):
		return s, err
	}
	return s, nil
}

// waitExited blocks until pid has exited and leaves it unreaped, so that
// its /proc entry still holds its final CPU times.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// statFields returns the fields of /proc/PID/stat after the command name,
// which may itself hold spaces; index 0 is the state (field 3).
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

// readCPU returns utime+stime (fields 14 and 15) of pid.
func readCPU(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// becomeSubreaper makes this process inherit the orphans of its
// descendants, so that a server left behind by either side is found and
// stopped instead of outliving the benchmark.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a child subreaper: %w", err)
	}
	return nil
}

// reapOrphans stops and reaps every child of this process: called when no
// run is in progress, any child is a process someone left behind. It
// returns those that were still running, as "name[pid]".
func reapOrphans() []string {
	var running []string
	for range 5 {
		pids := childPIDs()
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if f, err := statFields(pid); err == nil && len(f) > 0 && f[0] != "Z" {
				running = append(running, processName(pid)+"["+strconv.Itoa(pid)+"]")
			}
			// A left-behind server leads its own process group.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, 0, nil)
		}
	}
	return running
}

func childPIDs() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
