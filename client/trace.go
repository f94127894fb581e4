package client

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Direction is which way a traced message went.
type Direction string

const (
	Sent     Direction = "send" // from mcphost to the server
	Received Direction = "recv" // from the server to mcphost
)

// Tracer sees every JSON-RPC message exchanged with a server, as encoded on
// the wire, for Options.Trace. It is called on the goroutine that reads or
// writes the message, so it must be quick and must not keep msg, which may
// be reused; it may be called concurrently.
type Tracer func(server string, dir Direction, msg []byte)

// traceConn keeps each message of a connection in the server's ring of
// recent messages and reports it to a Tracer, if one is set: stdio, SSE and
// in-process connections, below the rawConn so that raw requests and the
// messages rawConn consumes are seen too. Only a Tracer costs an encoding.
type traceConn struct {
	mcp.Connection
	server string
	trace  Tracer // nil: none
	recent *recentRing
}

func (c *traceConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.seen(Received, msg)
	}
	return msg, err
}

func (c *traceConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.seen(Sent, msg)
	return c.Connection.Write(ctx, msg)
}

func (c *traceConn) seen(dir Direction, msg jsonrpc.Message) {
	c.recent.add(summarize(dir, msg, time.Now()))
	if c.trace != nil {
		if b, err := jsonrpc.EncodeMessage(msg); err == nil {
			c.trace(c.server, dir, b)
		}
	}
}

// maxTracedBody bounds what traceRoundTrip keeps of one HTTP body or one
// event to report it; a longer one is reported by its size alone (the
// Tracer receives nil).
const maxTracedBody = 1 << 20

// traceRoundTrip keeps and reports (as traceConn) the messages of a
// streamable HTTP server: each request body posted, and each answer,
// whether a JSON body or the events of a stream (also the standing GET
// stream). Bytes pass unchanged.
type traceRoundTrip struct {
	next   http.RoundTripper
	server string
	trace  Tracer // nil: none
	recent *recentRing
}

func (t *traceRoundTrip) seen(dir Direction, msg []byte) {
	t.recent.add(summarizeBytes(dir, msg, time.Now()))
	if t.trace != nil {
		t.trace(t.server, dir, msg)
	}
}

func (t *traceRoundTrip) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, err := io.ReadAll(io.LimitReader(body, maxTracedBody+1))
			body.Close()
			if err == nil && len(bytes.TrimSpace(b)) > 0 {
				t.seen(Sent, keptOrNil(b))
			}
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		resp.Body = &traceEvents{ReadCloser: resp.Body, seen: t.seen}
	case "application/json":
		resp.Body = &traceJSON{ReadCloser: resp.Body, seen: t.seen}
	}
	return resp, nil
}

func keptOrNil(b []byte) []byte {
	if len(b) > maxTracedBody {
		return nil
	}
	return b
}

// traceJSON reports a JSON answer once it has been read to its end.
type traceJSON struct {
	io.ReadCloser
	seen func(Direction, []byte)
	buf  []byte
	size int
	done bool
}

func (b *traceJSON) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.size += n
	if len(b.buf) <= maxTracedBody {
		b.buf = append(b.buf, p[:n]...)
	}
	if err != nil && !b.done {
		b.done = true
		if len(bytes.TrimSpace(b.buf)) > 0 {
			b.seen(Received, keptOrNil(b.buf))
		}
	}
	return n, err
}

// traceEvents reports each event's data of a stream as it is read: the
// "data:" lines of one event joined by newlines, as the SSE format says.
type traceEvents struct {
	io.ReadCloser
	seen func(Direction, []byte)
	line []byte   // the line being read
	data [][]byte // the data lines of the event being read
	size int      // the bytes of data in the event
}

func (e *traceEvents) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			e.keep(rest)
			break
		}
		e.keep(rest[:i])
		e.endLine()
		rest = rest[i+1:]
	}
	return n, err
}

// keep adds to the line being read, up to the bound.
func (e *traceEvents) keep(b []byte) {
	if room := maxTracedBody + 1 - len(e.line); room > 0 {
		e.line = append(e.line, b[:min(len(b), room)]...)
	}
}

func (e *traceEvents) endLine() {
	line := bytes.TrimSuffix(e.line, []byte("\r"))
	e.line = e.line[:0]
	if len(line) == 0 { // the end of an event
		if len(e.data) > 0 {
			msg := bytes.Join(e.data, []byte("\n"))
			if e.size > maxTracedBody {
				msg = nil
			}
			e.seen(Received, msg)
		}
		e.data, e.size = nil, 0
		return
	}
	if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		d = bytes.TrimPrefix(d, []byte(" "))
		e.size += len(d)
		if e.size <= maxTracedBody {
			e.data = append(e.data, bytes.Clone(d))
		}
	}
}
