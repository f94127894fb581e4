//go:build linux

package client

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerOutlivesStartingThread: a server is started from a goroutine
// locked to its thread, and that goroutine returns, which ends the thread.
// The parent-death signal belongs to the thread that started the process,
// so the server would be killed then, although mcphost runs on; servers are
// therefore started from the starter thread, and this one survives: once
// its input closes it exits on its own, not by a signal.
func TestServerOutlivesStartingThread(t *testing.T) {
	cmd := exec.Command("cat") // exits 0 at the end of its input
	setProcessGroup(cmd)
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("Pdeathsig = %v, want SIGKILL", cmd.SysProcAttr.Pdeathsig)
	}
	pt := &procTransport{inner: &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}}
	type started struct {
		conn mcp.Connection
		err  error
		tid  int
	}
	ch := make(chan started)
	// The runtime never ends the main thread: a goroutine locked to it is
	// kept there, parked until the test ends, and another one tries.
	parked := make(chan struct{})
	defer close(parked)
	var start func()
	start = func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if syscall.Gettid() == os.Getpid() {
			go start()
			<-parked
			return
		}
		c, err := pt.Connect(context.Background())
		ch <- started{c, err, syscall.Gettid()}
	}
	go start()
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	// The kernel sends the parent-death signal while the thread exits,
	// before its /proc entry goes.
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the locked thread did not end")
		}
		time.Sleep(5 * time.Millisecond) // polling the kernel's view of our threads
	}
	_ = s.conn.Close() // closes cat's input and waits for it
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() || ws.ExitStatus() != 0 {
		t.Fatalf("the server ended with %v when the thread that started it ended; want exit 0 at the end of its input", cmd.ProcessState)
	}
}
