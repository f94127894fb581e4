package ui

import (
	"context"
	"encoding/json"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/ui/dialog"
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

// afterElicit answers the elicitation on screen once the dialog has a
// result.
func (m *Model) afterElicit() tea.Cmd {
	if m.elicitD == nil {
		return nil
	}
	res, ok := m.elicitD.Result()
	if !ok {
		return nil
	}
	a := m.asks[0]
	a.elReply <- res
	m.asks = m.asks[1:]
	return m.openConfirm()
}
