package ui

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/mcphost/mcphost/ui/dialog"
	"github.com/mcphost/mcphost/ui/notify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errSampleDeclined is what a server hears when the person refuses it the
// model.
var errSampleDeclined = errors.New("the person declined to let the server use the model")

// sampleMsg carries a server's sampling request to the program; it waits
// in the same queue as the gate's questions.
type sampleMsg struct {
	id    int64
	r     dialog.SampleRequest
	reply chan<- bool // buffered: approved or not
}

// sample is the client's Sampling handler: it asks the person in a dialog
// and, approved, answers with the person's model once.
func (m *Model) sample(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	name := cleanLine(server)
	model := *m.sampleModel.Load()
	if model == nil {
		m.post(noticeMsg{levelWarn, name + " asked to use the model, and there is none: refused"})
		return nil, errors.New("no model is configured")
	}
	p := req.Params
	if p == nil {
		return nil, errors.New("the sampling request has no parameters")
	}
	if err := m.sampling.Refuses(server, p); err != nil {
		m.post(noticeMsg{levelWarn, name + " asked to use the model past its sampling budget: refused (\"samplingBudget\" in your config raises it)"})
		return nil, err
	}
	r := dialog.SampleRequest{Server: server, Model: model.Name(), MaxTokens: p.MaxTokens, System: p.SystemPrompt}
	for _, msg := range p.Messages {
		if msg == nil {
			continue
		}
		sm := dialog.SampleMessage{Role: string(msg.Role)}
		if tc, ok := msg.Content.(*mcp.TextContent); ok {
			sm.Text = tc.Text
		} else {
			sm.NotText = contentKind(msg.Content)
		}
		r.Messages = append(r.Messages, sm)
	}
	id := m.asker.seq.Add(1)
	reply := make(chan bool, 1)
	ok, err := waitReply(ctx, m, sampleMsg{id: id, r: r, reply: reply}, id, reply)
	if err != nil {
		return nil, err
	}
	if !ok {
		m.post(noticeMsg{levelInfo, "you declined " + name + " the use of the model"})
		return nil, errSampleDeclined
	}
	res, usage, err := m.sampling.Sample(ctx, model, server, p)
	m.post(usageMsg{u: usage, sampled: true})
	if err != nil {
		m.post(noticeMsg{levelError, name + " could not use the model: " + cleanLine(err.Error())})
		return nil, err
	}
	m.post(noticeMsg{levelInfo, fmt.Sprintf("%s used the model: %d input and %d output token%s", name, usage.InputTokens, usage.OutputTokens, plural(usage.OutputTokens))})
	return res, nil
}

func contentKind(c mcp.Content) string {
	switch c.(type) {
	case *mcp.ImageContent:
		return "image"
	case *mcp.AudioContent:
		return "audio"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%T", c)
}

// onSample queues a server's sampling request with the gate's questions.
func (m *Model) onSample(s sampleMsg) tea.Cmd {
	r := s.r
	reply := s.reply
	m.asks = append(m.asks, &pendingAsk{id: s.id, open: func(o dialog.Options) modal {
		return &sampleDialog{d: dialog.NewSample(r, o), reply: reply}
	}})
	return m.openQueued()
}

// sampleDialog asks whether a server may use the person's model once.
type sampleDialog struct {
	d     *dialog.Sample
	reply chan<- bool // buffered, written at most once
}

func (s *sampleDialog) update(m *Model, msg tea.Msg) tea.Cmd {
	if _, ok := msg.(tea.PasteMsg); ok {
		return nil // pastes never answer a server's question
	}
	var cmd tea.Cmd
	s.d, cmd = s.d.Update(msg)
	ok, done := s.d.Result()
	if !done {
		return cmd
	}
	s.reply <- ok
	return tea.Batch(cmd, m.dequeue())
}

func (s *sampleDialog) cancel(m *Model) (tea.Cmd, bool) {
	s.reply <- false
	return m.dequeue(), true
}

func (s *sampleDialog) view() string     { return s.d.View() }
func (s *sampleDialog) setSize(w, h int) { s.d.SetSize(w, h) }
func (s *sampleDialog) keep() bool       { return false }
func (s *sampleDialog) subject() string {
	return notify.Subject(s.d.Request().Server, "") + " (use of the model)"
}
