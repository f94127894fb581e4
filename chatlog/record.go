package chatlog

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// Version is the format of the files this package writes; a file of a
// later version is reported, not guessed at.
const Version = 1

// Record types.
const (
	TypeSession = "session" // the first line: Session is set
	TypeMessage = "message" // Message is set: one entry of the model's conversation
	TypeCall    = "call"    // Call is set: a tool call as it ended
	TypeNote    = "note"    // Note is set: something mcphost said (resumed, cleared)
)

// Notes.
const (
	// NoteCleared is the note of /clear: the model's conversation starts
	// again after it.
	NoteCleared = "cleared"
	// NoteStarted says a call was decided and is about to be sent (Started
	// is set): written before it runs, so that a session that ends in the
	// middle of the call knows it may have run, and its id in the audit log.
	NoteStarted = "call-started"
	// NoteTaint records the session's taint as it grew (Taint is set).
	NoteTaint = "taint"
	// NoteResumed says the session was continued with another model, base
	// URL or set of servers than it last ran with (Session is set, with
	// those; its ID, Dir and Started are the header's).
	NoteResumed = "resumed"
	// NoteModel says the person switched the model in the chat (/model):
	// Session is set, with the new model and base URL only, which a
	// resume uses; the servers are not part of it.
	NoteModel = "model"
	// NoteRewound says the person took back their message Message (as it
	// was sent, attachments included) and everything after it, to send
	// it again edited: the model's conversation goes on from before it.
	NoteRewound = "rewound"
)

// Record is one line of a session file.
type Record struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Session is set on the first line and on a NoteResumed or NoteModel
	// note.
	Session *Header  `json:"session,omitempty"`
	Message *Message `json:"message,omitempty"`
	Call    *Call    `json:"call,omitempty"`
	Note    string   `json:"note,omitempty"`
	// Started is set on a NoteStarted note, Taint on a NoteTaint note.
	Started *Started    `json:"started,omitempty"`
	Taint   *host.Taint `json:"taint,omitempty"`
}

// Started names a call that is about to be sent.
type Started struct {
	ID     string `json:"id"`     // the model's id for the call
	CallID string `json:"callId"` // mcphost's, as in the audit log
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Class and OpenWorld are the gate's decision: what the call's output
	// adds to the session's taint, should it end with one.
	Class     string `json:"class,omitempty"`
	OpenWorld bool   `json:"openWorld,omitempty"`
}

// NewStarted returns the note of a call decided and about to be sent
// (from the loop's decision event).
func NewStarted(e *host.CallEntry) *Started {
	return &Started{ID: e.ID, CallID: e.CallID, Server: e.Server, Tool: e.Tool, Class: e.Class, OpenWorld: openWorld(e)}
}

// Header describes a session. Model, BaseURL and Servers say what it ran
// with, so that a resume can reuse the model and name the servers that
// changed; files written before they existed leave them empty.
type Header struct {
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Dir     string    `json:"dir"` // the working directory it was started in
	Started time.Time `json:"started"`
	Model   string    `json:"model,omitempty"` // provider:model
	// BaseURL is the model's endpoint when it was not the provider's
	// default (--base-url), without user information.
	BaseURL string `json:"baseUrl,omitempty"`
	// Servers are the servers the chat was started with, by config name,
	// sorted; empty, not nil, for none. Nil (null or absent, as in a file
	// that predates the field) is unknown.
	Servers []Server `json:"servers"`
}

// Server is a server a session ran with: its config name and identity
// (client.Spec.Identity), which changes with its command line or URL.
type Server struct {
	Name     string `json:"name"`
	Identity string `json:"identity"`
}

// Message is an entry of the model's conversation (an llm.Message).
type Message struct {
	Role        string       `json:"role"` // user, assistant, tool
	Text        Text         `json:"text,omitzero"`
	ToolCalls   []ToolCall   `json:"toolCalls,omitempty"`
	ToolResults []ToolResult `json:"toolResults,omitempty"`
}

// ToolCall is a call the model asked for; Args is its JSON text.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args Text   `json:"args,omitzero"`
}

// ToolResult is what the model was given for a call.
type ToolResult struct {
	CallID  string `json:"callId"`
	Content Text   `json:"content,omitzero"`
	IsError bool   `json:"isError,omitempty"`
}

// Call is a tool call as it ended: the gate's decision, the person's
// answer, the outcome. Entry.Args is moved to Args, and the result's text
// is Result, so that both may be stored apart when large.
type Call struct {
	Entry  host.CallEntry `json:"entry"`
	Args   Text           `json:"args,omitzero"`
	Result Text           `json:"result,omitzero"`
	// Content is the result as the model was given it; saved with the call
	// as soon as the call ends, before the turn's tool message.
	Content Text `json:"content,omitzero"`
	// CallID is mcphost's id for the call (Entry.CallID), which links it
	// to its audit records.
	CallID string `json:"callId,omitempty"`
	// Manual marks a call the person made from the call form.
	Manual bool `json:"manual,omitempty"`
}

// Text is a string kept in the line or, when long, in a file of its own.
// In JSON it is a string, or {"ref":NAME,"bytes":N}.
type Text struct {
	S string
	// Ref names the file holding the text (its SHA-256 in hex) and Bytes
	// is its length; set when the text is stored apart. After reading, S
	// holds the text, or a note saying why it could not be read.
	Ref   string
	Bytes int
}

// T returns s as a Text.
func T(s string) Text { return Text{S: s} }

// IsZero reports an empty text, which is left out of a record.
func (t Text) IsZero() bool { return t.S == "" && t.Ref == "" }

type textRef struct {
	Ref   string `json:"ref"`
	Bytes int    `json:"bytes"`
}

// MarshalJSON writes a reference when the text is stored apart.
func (t Text) MarshalJSON() ([]byte, error) {
	if t.Ref != "" {
		return json.Marshal(textRef{t.Ref, t.Bytes})
	}
	return json.Marshal(t.S)
}

// UnmarshalJSON reads a string or a reference.
func (t *Text) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var r textRef
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		if !validRef(r.Ref) {
			return errors.New("a text reference is not a SHA-256 in hex")
		}
		*t = Text{Ref: r.Ref, Bytes: r.Bytes}
		return nil
	}
	*t = Text{}
	return json.Unmarshal(b, &t.S)
}

func validRef(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// FromLLM converts a message of the model's conversation.
func FromLLM(m llm.Message) *Message {
	out := &Message{Role: string(m.Role), Text: T(m.Text)}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Args: T(string(c.Args))})
	}
	for _, r := range m.ToolResults {
		out.ToolResults = append(out.ToolResults, ToolResult{CallID: r.CallID, Content: T(r.Content), IsError: r.IsError})
	}
	return out
}

// LLM converts the message back for the model.
func (m *Message) LLM() llm.Message {
	out := llm.Message{Role: llm.Role(m.Role), Text: m.Text.S}
	for _, c := range m.ToolCalls {
		args := json.RawMessage(c.Args.S)
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Args: args})
	}
	for _, r := range m.ToolResults {
		out.ToolResults = append(out.ToolResults, llm.ToolResult{CallID: r.CallID, Content: r.Content.S, IsError: r.IsError})
	}
	return out
}

// NewCall returns the record of a call as it ended; result is the text of
// its result (host.ResultText), "" when there is none.
func NewCall(e *host.CallEntry, result string) *Call {
	c := &Call{Entry: *e, Args: T(string(e.Args)), Result: T(result), CallID: e.CallID}
	c.Entry.Args, c.Entry.Result = nil, nil
	return c
}

// CallEntry returns the call with its arguments back in place.
func (c *Call) CallEntry() *host.CallEntry {
	e := c.Entry
	e.CallID = c.CallID
	if json.Valid([]byte(c.Args.S)) {
		e.Args = json.RawMessage(c.Args.S)
	}
	return &e
}
