//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// pty is a pseudo-terminal: the test holds the master side, mcphost gets
// the other.
type pty struct {
	master, tty *os.File

	mu  sync.Mutex
	out bytes.Buffer // everything mcphost wrote to the terminal
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatal(err)
	}
	p := &pty{master: master, tty: tty}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = tty.Close()
		_ = master.Close()
	})
	return p
}

// output returns what mcphost wrote so far.
func (p *pty) output() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.out.Bytes())
}

// cooked reports whether the terminal echoes and reads lines, as a shell
// leaves it and a TUI must leave it again.
func (p *pty) cooked(t *testing.T) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(p.tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0 && tio.Lflag&unix.ICANON != 0
}

// TestSignalsTUI: SIGTERM and SIGHUP end the interactive interface while
// the model's call is in flight: the terminal is restored (cooked mode,
// main screen), the call is recorded as unknown, mcphost exits 6, and the
// server's process group is gone once it has exited.
func TestSignalsTUI(t *testing.T) {
	bin := buildMcphost(t)
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{{"SIGTERM", syscall.SIGTERM}, {"SIGHUP", syscall.SIGHUP}} {
		t.Run(tc.name, func(t *testing.T) {
			p := openPTY(t)
			if !p.cooked(t) {
				t.Fatal("a new terminal should start in cooked mode")
			}
			h := newHangingCall(t, bin, "--allow", "hang/wait", "--model", "script:$DIR/model.jsonl")
			h.cmd.Env = append(h.cmd.Env, "TERM=xterm-256color")
			h.cmd.Stdin, h.cmd.Stdout, h.cmd.Stderr = p.tty, p.tty, p.tty
			h.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
			h.start(t)
			waitUntil(t, "the TUI is drawn and the server ready", func() bool {
				return bytes.Contains(p.output(), []byte("Write to the model")) && h.readPIDs() == nil
			})
			if _, err := p.master.WriteString("wait\r"); err != nil {
				t.Fatal(err)
			}
			h.waitCalled(t)
			mark := len(p.output())
			if err := h.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			code, took := h.wait(t)
			t.Logf("exit %d %v after %s", code, took, tc.name)
			if code != exitUnknown {
				t.Errorf("exit code %d after %s, want %d (unknown); the terminal shows:\n%q", code, tc.name, exitUnknown, p.output()[mark:])
			}
			if !p.cooked(t) {
				t.Error("the terminal was left in raw mode")
			}
			if after := p.output()[mark:]; !bytes.Contains(after, []byte("\x1b[?1049l")) {
				t.Errorf("the TUI did not leave the alternate screen; it wrote after the signal: %q", after)
			}
			// A race found by the detector changes only an exit code 0.
			if bytes.Contains(p.output(), []byte("DATA RACE")) {
				t.Errorf("the race detector reported a race:\n%q", p.output()[mark:])
			}
			checkUnknownOutcome(t, h.audit)
			waitUntil(t, "the server's process group is gone", func() bool { return len(groupMembers(h.server)) == 0 })
		})
	}
}
