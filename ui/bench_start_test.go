package ui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// demoSpecs are the demo servers as mcphost starts them: each fixture is
// built when it is dialled, in process.
func demoSpecs() []client.Spec {
	var specs []client.Spec
	for _, name := range []string{"tasks", "bare"} {
		specs = append(specs, client.Spec{Name: name, Dial: func(ctx context.Context) (mcp.Transport, error) {
			f, err := fixtures.New(name, fixtures.Options{})
			if err != nil {
				return nil, err
			}
			return f.InMemory(ctx)
		}})
	}
	return specs
}

// BenchmarkFirstFrame measures the time from a new Model to the first
// frame that shows both demo servers ready, at 80×24: the servers' start,
// their listings, the catalog and every message a program would deliver,
// with the view drawn after each, as Bubble Tea draws it. What comes before
// the Model (the process's start and package initialisation) is not in it.
func BenchmarkFirstFrame(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m := NewModel(Config{Servers: demoSpecs(), Model: fakeModel{}, Dark: dark(true)})
		h := &harness{t: b, m: m, msgs: make(chan tea.Msg, 64), done: make(chan struct{})}
		h.run(m.Init())
		h.send(teaSize(80, 24))
		h.until("a frame shows both servers ready", func() bool {
			return strings.Contains(ansi.Strip(m.View().Content), "servers 2/2 ready")
		})
		close(h.done)
		m.Close()
	}
}
