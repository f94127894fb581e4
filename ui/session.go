package ui

import (
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder saves the chat as it happens. Its methods may be called from
// the loop's goroutine and the program's; a nil recorder saves nothing.
// The first failure to save is reported once, and saving stops: a chat
// never stops because its log cannot be written.
type recorder struct {
	log  *chatlog.Log
	post func(noticeMsg)

	mu      sync.Mutex
	stopped bool
	// history is the resumed conversation, given to the first loop only,
	// and past the calls whose results it holds.
	history []llm.Message
	past    []*host.CallEntry
}

func newRecorder(log *chatlog.Log, resumed *chatlog.Session, post func(noticeMsg)) *recorder {
	if log == nil {
		return nil
	}
	r := &recorder{log: log, post: post}
	if resumed != nil {
		r.history, r.past = resumed.History(), resumed.Calls()
	}
	return r
}

func (r *recorder) append(rec chatlog.Record) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	if err := r.log.Append(rec); err != nil {
		r.stopped = true
		go r.post(noticeMsg{levelWarn, "this chat is no longer saved: " + cleanLine(err.Error())})
	}
}

// message saves a message of the model's conversation (LoopOptions.OnMessage).
func (r *recorder) message(m llm.Message) {
	r.append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(m)})
}

// event saves that a call of the model's was decided and is about to be
// sent (from LoopOptions.OnEvent), with mcphost's id for it: a session that
// ends before the call does then knows it may have run.
func (r *recorder) event(ev host.LoopEvent) {
	if ev.Kind != host.EvDecision || ev.Call == nil || ev.Call.CallID == "" {
		return
	}
	r.append(chatlog.Record{Type: chatlog.TypeNote, Note: chatlog.NoteStarted, Started: chatlog.NewStarted(ev.Call)})
}

// result saves a call of the model's as it ends, with the result the model
// is given (LoopOptions.OnResult), before the next call starts.
func (r *recorder) result(e *host.CallEntry, res llm.ToolResult) {
	c := chatlog.NewCall(e, callResultText(e.Result))
	c.Content = chatlog.T(res.Content)
	r.append(chatlog.Record{Type: chatlog.TypeCall, Call: c})
}

// manual saves a call made from the call form.
func (r *recorder) manual(c *card) {
	e := &host.CallEntry{Server: c.server, Tool: c.tool, Args: c.args, Verdict: c.verdict, Tier: int(c.tier),
		Class: c.class.String(), Reasons: c.reasons, DecidedBy: c.decidedBy, Status: c.status,
		Attempts: c.attempts, Message: c.message, ResultBytes: c.resultBytes, Duration: c.duration}
	rec := chatlog.NewCall(e, callResultText(c.result))
	rec.Manual = true
	r.append(chatlog.Record{Type: chatlog.TypeCall, Call: rec})
}

// cleared saves that /clear started a new conversation.
func (r *recorder) cleared() {
	r.append(chatlog.Record{Type: chatlog.TypeNote, Note: chatlog.NoteCleared})
}

// takeHistory returns the resumed conversation and its calls once: a loop
// made after /clear starts empty.
func (r *recorder) takeHistory() ([]llm.Message, []*host.CallEntry) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, p := r.history, r.past
	r.history, r.past = nil, nil
	return h, p
}

func (r *recorder) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	_ = r.log.Close()
}

func callResultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return host.ResultText(res)
}

// openSession fills the transcript of a resumed chat and says what a
// person must know at the start: the configuration's warnings (on a
// resume, which servers changed), and that session grants did not
// survive. On a resume the warnings come after the old transcript, next
// to "continuing the chat", where the person looks, not above it.
func (m *Model) openSession() {
	defer func() {
		for _, w := range m.cfg.Warnings {
			m.notice(levelWarn, "warning: "+cleanLine(w))
		}
	}()
	s := m.cfg.Resumed
	if s == nil {
		return
	}
	for i, rec := range s.Records {
		switch rec.Type {
		case chatlog.TypeMessage:
			switch rec.Message.Role {
			case "user":
				m.tr.add(&entry{kind: entryUser, text: rec.Message.Text.S})
			case "assistant":
				if rec.Message.Text.S != "" {
					m.tr.add(&entry{kind: entryAssistant, text: rec.Message.Text.S, done: true})
				}
			}
		case chatlog.TypeCall:
			e := rec.Call.CallEntry()
			if rec.Call.Result.S != "" {
				e.Result = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: rec.Call.Result.S}}, IsError: e.Status == host.StatusToolError}
			}
			c := &card{id: fmt.Sprintf("resumed/%d", i), manual: rec.Call.Manual}
			c.fromEntry(e)
			if !c.done { // saved before it ended: say so rather than spin
				c.done, c.status, c.message = true, host.StatusError, "the chat ended before this call did"
			}
			m.cards[c.id] = c
			m.tr.add(&entry{kind: entryCard, card: c})
		case chatlog.TypeNote:
			if rec.Note == chatlog.NoteCleared {
				m.notice(levelInfo, "transcript cleared; the model did not see what is above")
			}
			if rec.Note == chatlog.NoteRewound && rec.Message != nil {
				m.rewound(rec.Message.Text.S) // habits.go
			}
		}
	}
	m.notice(levelInfo, fmt.Sprintf("continuing the chat %s of %s (%s); the model has its history. "+
		"Approvals given \"for this session\" ended with it: you will be asked again.",
		cleanLine(s.Header.ID), s.Header.Started.Local().Format(time.DateTime), cleanLine(s.Header.Dir)))
}
