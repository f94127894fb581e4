//go:build linux

package client

import (
	"runtime"
	"sync"
	"syscall"
)

// setParentDeathSignal asks the kernel to SIGKILL the server when its parent
// dies, so that a server that ignores end of input and SIGTERM does not
// outlive mcphost even when mcphost itself is killed with SIGKILL and cannot
// stop it. Only the server gets the signal, not its own children: they see
// their input close, as the server did.
//
// The kernel's "parent" here is the thread that started the server, not
// the process: the signal also fires when that thread exits while mcphost
// runs on. The Go runtime ends a thread only when a goroutine locked to it
// (runtime.LockOSThread) returns without unlocking, but any thread can be
// taken that way by code mcphost does not control. So servers are started
// by onStarterThread, from one thread that is locked for the life of the
// process and therefore never ends before mcphost does.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// starter is the goroutine, locked to its thread, that starts servers.
var starter struct {
	once sync.Once
	jobs chan func()
}

// onStarterThread runs start, which starts a server's process, on the
// starter thread, and returns when start has returned.
func onStarterThread(start func()) {
	starter.once.Do(func() {
		starter.jobs = make(chan func())
		go starterLoop(starter.jobs)
	})
	done := make(chan struct{})
	starter.jobs <- func() { start(); close(done) }
	<-done
}

// starterLoop runs jobs on its own thread for the rest of the process's
// life. It never returns, so leak checks in tests must ignore it.
func starterLoop(jobs <-chan func()) {
	runtime.LockOSThread() // never unlocked: the thread must outlive every server
	for job := range jobs {
		job()
	}
}
