package client

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MessageSummary is one JSON-RPC message exchanged with a server, as the
// servers panel lists it: which way, what, and how large. Method and ID are
// the server's words when it sent them: sanitize before rendering.
type MessageSummary struct {
	Time   time.Time `json:"time"`
	Dir    Direction `json:"dir"`
	Method string    `json:"method,omitempty"` // for an answer, the request's, when it was seen
	ID     string    `json:"id,omitempty"`
	Size   int       `json:"size"`            // the params' or result's bytes, about the message's size
	Error  bool      `json:"error,omitempty"` // an error answer
}

// recentMessages is how many messages each server's ring keeps.
const recentMessages = 20

// recentRing keeps a server's last messages across its connections.
type recentRing struct {
	mu   sync.Mutex
	buf  [recentMessages]MessageSummary
	next int
	n    int
	// asked names the method of the requests in flight, by direction and
	// id, to name their answers; bounded.
	asked map[string]string
}

func (r *recentRing) add(m MessageSummary) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.ID != "" {
		if r.asked == nil {
			r.asked = map[string]string{}
		}
		if m.Method != "" {
			if len(r.asked) < 1024 {
				r.asked[string(m.Dir)+m.ID] = m.Method
			}
		} else {
			other := Sent
			if m.Dir == Sent {
				other = Received
			}
			if method, ok := r.asked[string(other)+m.ID]; ok {
				m.Method = method
				delete(r.asked, string(other)+m.ID)
			}
		}
	}
	r.buf[r.next] = m
	r.next = (r.next + 1) % recentMessages
	r.n = min(r.n+1, recentMessages)
}

// list returns the kept messages, oldest first.
func (r *recentRing) list() []MessageSummary {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]MessageSummary, 0, r.n)
	for i := range r.n {
		out = append(out, r.buf[(r.next-r.n+i+recentMessages)%recentMessages])
	}
	return out
}

// summarize describes a decoded message without encoding it again.
func summarize(dir Direction, msg jsonrpc.Message, now time.Time) MessageSummary {
	m := MessageSummary{Time: now, Dir: dir}
	switch v := msg.(type) {
	case *jsonrpc.Request:
		m.Method, m.Size = v.Method, len(v.Params)
		if v.IsCall() {
			m.ID = idText(v.ID)
		}
	case *jsonrpc.Response:
		m.ID, m.Size, m.Error = idText(v.ID), len(v.Result), v.Error != nil
	}
	return m
}

// summarizeBytes describes an encoded message; nil is one too large to read.
func summarizeBytes(dir Direction, msg []byte, now time.Time) MessageSummary {
	m := MessageSummary{Time: now, Dir: dir, Size: len(msg)}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  json.RawMessage `json:"error"`
	}
	if msg != nil && json.Unmarshal(msg, &head) == nil {
		m.Method, m.Error = head.Method, len(head.Error) > 0 && string(head.Error) != "null"
		if len(head.ID) > 0 && string(head.ID) != "null" {
			var s string
			if json.Unmarshal(head.ID, &s) == nil {
				m.ID = s
			} else {
				m.ID = string(head.ID)
			}
		}
	}
	return m
}

func idText(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}
