package ui

import (
	"context"
	"encoding/json"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/ui/dialog"
	"github.com/mcphost/mcphost/ui/notify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitMsg carries a server's elicitation to the program; it waits in the
// same queue as the gate's questions.
type elicitMsg struct {
	id    int64
	r     dialog.ElicitRequest
	reply chan<- dialog.ElicitResult // buffered
}

// noticeMsg is a line for the transcript from a goroutine.
type noticeMsg struct {
	l    level
	text string
}

// elicit is the client's Elicitation handler: it shows the request in a
// dialog and waits for the person, or for ctx. Opening a URL happens here,
// after the person agreed, without a shell.
func (m *Model) elicit(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p := req.Params
	if p == nil {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	r := dialog.ElicitRequest{Server: server, Message: p.Message}
	urlMode := p.Mode == "url" || (p.Mode == "" && p.URL != "")
	if urlMode {
		if p.URL == "" {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		r.URL = p.URL
	} else if p.RequestedSchema != nil {
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		r.Schema = b
		r.Order = client.FormOrder(req)
	}
	id := m.asker.seq.Add(1)
	reply := make(chan dialog.ElicitResult, 1)
	ans, err := waitReply(ctx, m, elicitMsg{id: id, r: r, reply: reply}, id, reply)
	if err != nil {
		return nil, err
	}
	res := &mcp.ElicitResult{Action: ans.Action.String()}
	if ans.Action != dialog.ElicitAccept {
		return res, nil
	}
	if urlMode {
		if _, err := oauth.CheckVisitURL(r.URL); err != nil {
			// The dialog offers no way to accept such an address; never open one.
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		if err := m.openURL(r.URL); err != nil {
			m.post(noticeMsg{levelError, "could not open the address " + cleanLine(r.URL) + ": " + cleanLine(err.Error())})
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		m.post(noticeMsg{levelInfo, "opened " + cleanLine(r.URL) + " for " + cleanLine(server)})
		return res, nil
	}
	res.Content = ans.Content
	return res, nil
}

// waitReply hands msg to the program and waits for the answer on reply; a
// cancelled ctx withdraws the question.
func waitReply[T any](ctx context.Context, m *Model, msg tea.Msg, id int64, reply <-chan T) (T, error) {
	var zero T
	select {
	case m.inbox <- msg:
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-m.ctx.Done():
		return zero, errClosed
	}
	select {
	case ans := <-reply:
		return ans, nil
	case <-ctx.Done():
		select {
		case m.inbox <- askWithdrawnMsg{id: id}:
		case <-m.ctx.Done():
		}
		return zero, ctx.Err()
	case <-m.ctx.Done():
		return zero, errClosed
	}
}

// elicitDialog shows a server's elicitation: a form, or an address to
// visit.
type elicitDialog struct {
	d     *dialog.Elicit
	reply chan<- dialog.ElicitResult // buffered, written at most once
}

func (e *elicitDialog) update(m *Model, msg tea.Msg) tea.Cmd {
	if _, ok := msg.(tea.PasteMsg); ok {
		return nil // pastes never answer a server's question
	}
	var cmd tea.Cmd
	e.d, cmd = e.d.Update(msg)
	res, ok := e.d.Result()
	if !ok {
		return cmd
	}
	e.reply <- res
	return tea.Batch(cmd, m.dequeue())
}

func (e *elicitDialog) cancel(m *Model) (tea.Cmd, bool) {
	e.reply <- dialog.ElicitResult{Action: dialog.ElicitCancel}
	return m.dequeue(), true
}

func (e *elicitDialog) view() string     { return e.d.View() }
func (e *elicitDialog) setSize(w, h int) { e.d.SetSize(w, h) }
func (e *elicitDialog) keep() bool       { return true }
func (e *elicitDialog) subject() string {
	return notify.Subject(e.d.Request().Server, "") + " (a question)"
}
