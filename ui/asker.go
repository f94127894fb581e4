package ui

import (
	"context"
	"errors"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/ui/dialog"
)

// errClosed answers questions asked after the UI has gone.
var errClosed = errors.New("the interface was closed before the question was answered")

// asker is the gate's Asker for the TUI. Ask hands the question to the
// program as a message and waits for the dialog's answer; a cancelled
// context withdraws the question.
type asker struct {
	inbox chan<- tea.Msg
	done  <-chan struct{} // closed when the UI stops
	seq   atomic.Int64
}

// askMsg carries a question to the program.
type askMsg struct {
	id    int64
	q     *host.Question
	reply chan<- host.Answer // buffered: the program never blocks on it
}

// askWithdrawnMsg tells the program that a question's context ended.
type askWithdrawnMsg struct{ id int64 }

// Channel: every answer comes from the chat's dialog (or its Ctrl-C).
func (a *asker) Channel() audit.Channel { return audit.ChannelDialog }

func (a *asker) Ask(ctx context.Context, q *host.Question) (host.Answer, error) {
	id := a.seq.Add(1)
	reply := make(chan host.Answer, 1)
	select {
	case a.inbox <- askMsg{id: id, q: q, reply: reply}:
	case <-ctx.Done():
		return host.Answer{}, ctx.Err()
	case <-a.done:
		return host.Answer{}, errClosed
	}
	select {
	case ans := <-reply:
		return ans, nil
	case <-ctx.Done():
		// Withdraw the question, unless the UI is gone anyway.
		select {
		case a.inbox <- askWithdrawnMsg{id: id}:
		case <-a.done:
		}
		return host.Answer{}, ctx.Err()
	case <-a.done:
		return host.Answer{}, errClosed
	}
}

// pendingAsk is a question waiting in the queue: the gate's, or a
// server's request (an elicitation, a sampling request). The first one is
// on screen.
type pendingAsk struct {
	id int64
	// q is the gate's question, nil for a server's request: its card says
	// that the call asks.
	q *host.Question
	// open builds the dialog that shows the question, which answers it.
	open func(dialog.Options) modal
}
