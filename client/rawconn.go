package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawPrefix marks the ids of requests that mcphost sends itself, beside the
// SDK, so their responses can be taken off the connection before the SDK
// sees them. The SDK uses numeric ids, so a string prefix cannot collide.
const rawPrefix = "mcphost-raw-"

// rawTransport wraps a transport so that the client can send requests whose
// responses it reads as raw JSON (tools/list), on the same connection and
// session the SDK manages.
type rawTransport struct {
	inner  mcp.Transport
	conn   *rawConn
	trace  Tracer // nil: nothing traces
	name   string
	recent *recentRing
	// onLog, if set, sees each log message as it is read (see Options.OnLog).
	onLog func(*mcp.LoggingMessageParams)
}

func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c = &traceConn{Connection: c, server: t.name, trace: t.trace, recent: t.recent}
	t.conn = &rawConn{Connection: c, pending: map[string]chan *jsonrpc.Response{}, caps: &capsRecorder{}, onLog: t.onLog}
	return t.conn, nil
}

// rawConn is an mcp.Connection that lets its owner interleave raw requests.
type rawConn struct {
	mcp.Connection
	seq atomic.Int64

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response
	closed  error
	// wakers are the task-augmented calls waiting on this connection, by
	// task id (client/tasks.go).
	wakers map[string]chan struct{}
	// meta, if set, is added to every request's _meta (protocol.go); it is
	// set once, after the handshake and before the first raw request.
	meta map[string]any
	// caps reads the handshake's answer as sent (capsniff.go).
	caps *capsRecorder
	// onLog, if set, is handed each notifications/message on the reading
	// goroutine, so before any response read after it is delivered.
	onLog func(*mcp.LoggingMessageParams)
}

// errRawClosed is returned to raw callers when the connection ends before
// their response arrives.
var errRawClosed = errors.New("connection closed")

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.fail(err)
			return nil, err
		}
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == taskStatusNote {
			c.taskNotification(req.Params)
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && c.onLog != nil && !req.IsCall() && req.Method == logNote {
			var p mcp.LoggingMessageParams
			if json.Unmarshal(req.Params, &p) == nil {
				c.onLog(&p)
			}
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			if id, ok := resp.ID.Raw().(string); ok && strings.HasPrefix(id, rawPrefix) {
				c.mu.Lock()
				ch := c.pending[id]
				delete(c.pending, id)
				c.mu.Unlock()
				if ch != nil {
					ch <- resp
				}
				continue
			}
			if !c.caps.done() {
				c.caps.offerResult(resp.Result)
			}
		}
		return keepFormOrder(msg), nil // formorder.go
	}
}

func (c *rawConn) Close() error {
	c.fail(errRawClosed)
	return c.Connection.Close()
}

func (c *rawConn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed == nil {
		c.closed = err
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// call sends method with params and returns the raw result. A JSON-RPC error
// is returned as *jsonrpc.Error. Cancelling ctx abandons the wait (for a list
// request there is nothing to undo, so no cancellation is sent).
func (c *rawConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := fmt.Sprintf("%s%d", rawPrefix, c.seq.Add(1))
	jid, err := jsonrpc.MakeID(id)
	if err != nil {
		return nil, err
	}
	p, err := marshalParams(withMeta(params, c.meta))
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, errRawClosed)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: p}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: %w", method, errRawClosed)
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// marshalParams encodes request params, leaving them out entirely when there
// are none: some servers reject "params": null.
func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if m, ok := params.(map[string]any); ok && m == nil {
		return nil, nil
	}
	return json.Marshal(params)
}
