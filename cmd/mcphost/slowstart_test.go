package main

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inMemoryTasks dials the tasks fixture in process.
func inMemoryTasks(ctx context.Context) (mcp.Transport, error) {
	f, err := fixtures.New("tasks", fixtures.Options{})
	if err != nil {
		return nil, err
	}
	return f.InMemory(ctx)
}

// slowSpec is a server configured as npx that starts when release is
// closed; dialing is closed once it has begun.
func slowSpec(dialing, release chan struct{}) client.Spec {
	return client.Spec{Name: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
		StartTimeoutSetting: "--start-timeout",
		Dial: func(ctx context.Context) (mcp.Transport, error) {
			close(dialing) // called once: nothing restarts during a start
			<-release
			return inMemoryTasks(ctx)
		}}
}

const slowNotice = "mcphost: fs is still starting (8s; npx may be downloading the package; --start-timeout raises the limit of 2m0s)\n"

// TestSlowStartNotice: when the notice's moment comes, a command's start
// names on stderr, once, the server that is still starting, with what may
// take the time and the setting that raises its limit. The moment is the
// test's choice, not a clock's.
func TestSlowStartNotice(t *testing.T) {
	dialing, release := make(chan struct{}), make(chan struct{})
	stderr := &firstWrite{wrote: make(chan struct{})}
	fire := make(chan time.Time)
	st := &setup{specs: []client.Spec{slowSpec(dialing, release)}, pins: host.NewPins(nil), trusted: map[string]bool{},
		slow: &slowStart{w: stderr, after: 8 * time.Second, timer: func(time.Duration) <-chan time.Time { return fire }}}

	started := make(chan *client.Manager)
	go func() { started <- st.start(context.Background()) }()
	<-dialing
	select {
	case fire <- time.Now(): // taken by the watcher, which then reads the states
		select {
		case <-stderr.wrote:
		case <-time.After(20 * time.Second):
			t.Error("no notice while the server was still starting")
		}
	case <-time.After(20 * time.Second):
		t.Error("nothing watches the start")
	}
	close(release)
	m := <-started
	defer m.Close()
	if got := stderr.String(); got != slowNotice {
		t.Errorf("stderr:\n%s\nwant exactly:\n%s", got, slowNotice)
	}
}

// TestSlowStartNoticeSkipsReadyServers: a server that is ready when the
// notice's moment comes is not named, and nothing is written once the
// watch has stopped.
func TestSlowStartNoticeSkipsReadyServers(t *testing.T) {
	dialing, release := make(chan struct{}), make(chan struct{})
	m := client.New([]client.Spec{{Name: "tasks", Dial: inMemoryTasks}, slowSpec(dialing, release)}, client.Options{})
	defer m.Close()
	events, unsubscribe := m.Subscribe()
	defer unsubscribe()
	var stderr bytes.Buffer
	fire := make(chan time.Time)
	stop := (&slowStart{w: &stderr, after: 8 * time.Second, timer: func(time.Duration) <-chan time.Time { return fire }}).watch(m)

	done := make(chan struct{})
	go func() { m.Start(context.Background()); close(done) }()
	<-dialing
	for e := range events {
		if e.Server == "tasks" && e.State == client.StateReady {
			break
		}
	}
	fire <- time.Now() // taken by the watcher, which then reads the states
	stop()             // returns once the watcher has written what it will
	close(release)
	<-done
	if got := stderr.String(); got != slowNotice {
		t.Errorf("stderr:\n%s\nwant exactly:\n%s", got, slowNotice)
	}
}

// firstWrite is a buffer that closes wrote when it is first written to.
type firstWrite struct {
	bytes.Buffer
	once  sync.Once
	wrote chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	w.once.Do(func() { close(w.wrote) })
	return n, err
}

// TestConsentHashWithoutStartTimeout: an entry without "startTimeout"
// hashes as it did when the configuration filled in 30s for it, so that
// consents recorded then still hold.
func TestConsentHashWithoutStartTimeout(t *testing.T) {
	srv := config.Server{Name: "linter", Transport: config.TransportStdio, Command: "python3", Args: []string{"linter.py"},
		Source: config.SourceProject, File: "/repo/.mcp.json", ProtocolVersion: config.DefaultProtocolVersion}
	old := srv
	old.StartTimeout = 30 * time.Second
	if consentHash(srv) != consentHash(old) {
		t.Error("an entry without startTimeout no longer hashes as it did with the 30s default")
	}
}
