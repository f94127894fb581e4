package client

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"
)

// The SDK decodes a server's capabilities into a type that has no "tasks"
// member, so the handshake's answer is read beside it, as sent, by a
// capsRecorder: on stdio and in process from the connection (rawConn), over
// streamable HTTP from the answer's body (capsSniffer).

// maxCapsAnswer bounds the bytes of a handshake answer kept to read the
// capabilities from.
const maxCapsAnswer = 1 << 20

// capsRecorder keeps the "capabilities" object of the first handshake
// answer (initialize or server/discover) of one connection.
type capsRecorder struct {
	mu   sync.Mutex
	seen bool
	// tc is the tasks capability, read once from the capabilities when
	// they are seen: every tools/call asks for it.
	tc TasksCapability
}

// offer reads one JSON-RPC message and keeps its result's capabilities if
// it is the first handshake answer. It reports whether it was.
func (r *capsRecorder) offer(msg []byte) bool {
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	return json.Unmarshal(msg, &m) == nil && r.offerResult(m.Result)
}

// offerResult is offer for a message's result.
func (r *capsRecorder) offerResult(result []byte) bool {
	var m struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if len(result) == 0 || json.Unmarshal(result, &m) != nil || m.ProtocolVersion == "" || m.Capabilities == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seen {
		r.seen, r.tc = true, parseTasks(m.Capabilities)
	}
	return true
}

func (r *capsRecorder) done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

// TasksCapability is what a server declared of the tasks utility at the
// handshake, as sent.
type TasksCapability struct {
	// Known reports that the handshake's answer was read.
	Known bool `json:"known"`
	// Declared reports a "tasks" object among the capabilities.
	Declared bool `json:"declared"`
	// ToolCalls reports tasks.requests.tools.call: tools/call may be
	// task-augmented.
	ToolCalls bool `json:"toolCalls"`
	List      bool `json:"list"`
	Cancel    bool `json:"cancel"`
}

// tasks returns the tasks capability of what was recorded.
func (r *capsRecorder) tasks() TasksCapability {
	if r == nil {
		return TasksCapability{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tc // the zero value until the capabilities are seen
}

// parseTasks reads the tasks capability from a capabilities object.
func parseTasks(raw json.RawMessage) TasksCapability {
	tc := TasksCapability{Known: true}
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil {
		return tc
	}
	var tasks map[string]json.RawMessage
	if raw, ok := caps["tasks"]; !ok || json.Unmarshal(raw, &tasks) != nil || tasks == nil {
		return tc
	}
	tc.Declared = true
	isObject := func(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }
	tc.List, tc.Cancel = isObject(tasks["list"]), isObject(tasks["cancel"])
	var requests map[string]map[string]json.RawMessage
	if json.Unmarshal(tasks["requests"], &requests) == nil {
		tc.ToolCalls = isObject(requests["tools"]["call"])
	}
	return tc
}

// capsSniffer reads the handshake answers of a streamable HTTP server for a
// capsRecorder, leaving every byte as it was for the SDK.
type capsSniffer struct {
	next http.RoundTripper
	rec  *capsRecorder
}

func (c *capsSniffer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || c.rec.done() || !isHandshake(req) {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &sniffBody{ReadCloser: resp.Body, rec: c.rec, events: ct == "text/event-stream"}
	return resp, nil
}

// isHandshake reports whether req posts initialize or server/discover.
func isHandshake(req *http.Request) bool {
	if req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var m struct {
		Method string `json:"method"`
	}
	if json.NewDecoder(io.LimitReader(body, maxCapsAnswer)).Decode(&m) != nil {
		return false
	}
	return m.Method == "initialize" || m.Method == "server/discover"
}

// sniffBody copies what the SDK reads of a handshake answer, up to
// maxCapsAnswer, and offers it to the recorder at the end.
type sniffBody struct {
	io.ReadCloser
	rec    *capsRecorder
	events bool
	buf    []byte
	over   bool
	once   sync.Once
}

func (b *sniffBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.over {
		if len(b.buf)+n > maxCapsAnswer {
			b.over = true
		} else {
			b.buf = append(b.buf, p[:n]...)
		}
	}
	if err != nil {
		b.finish()
	}
	return n, err
}

func (b *sniffBody) Close() error {
	b.finish()
	return b.ReadCloser.Close()
}

func (b *sniffBody) finish() {
	b.once.Do(func() {
		if b.over {
			return
		}
		if !b.events {
			b.rec.offer(b.buf)
			return
		}
		// One message per event; "data:" lines of an event are joined.
		for _, event := range bytes.Split(bytes.ReplaceAll(b.buf, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
			var data [][]byte
			for _, line := range bytes.Split(event, []byte("\n")) {
				if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
					data = append(data, bytes.TrimPrefix(d, []byte(" ")))
				}
			}
			if len(data) > 0 && b.rec.offer(bytes.Join(data, []byte("\n"))) {
				return
			}
		}
	})
}
