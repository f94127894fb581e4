package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawCaller sends one request outside the SDK's typed layer and returns the
// raw result.
type rawCaller interface {
	call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// rawHTTP sends raw requests to a streamable HTTP server as ordinary POSTs in
// the SDK's session. The streamable connection cannot be wrapped (the SDK
// starts its standalone stream through an unexported method that a wrapper
// would hide), so these requests go beside it, with the same session id,
// negotiated protocol version and HTTP client (and so the same headers).
type rawHTTP struct {
	url     string
	shown   string // url as errors name it, as the SDK's do; "" for RedactURL(url)
	client  *http.Client
	session *mcp.ClientSession
	maxBody int64
	seq     atomic.Int64
	// serve, if set, answers the requests the server sends on a raw
	// request's response stream (client/taskhttp.go).
	serve func(ctx context.Context, req *jsonrpc.Request) (any, error)
	// meta, if set, is added to every request's _meta (protocol.go).
	meta map[string]any
}

func (r *rawHTTP) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := fmt.Sprintf("%s%d", rawPrefix, r.seq.Add(1))
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if p, err := marshalParams(withMeta(params, r.meta)); err != nil {
		return nil, err
	} else if p != nil {
		msg["params"] = p
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	hdr := r.standardHeaders(method, params)
	req, resp, err := r.post(ctx, body, hdr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	// The server may want a fresh token (or a login) as it would for the
	// SDK's own requests; it gets one chance, as there.
	if retry, err := reauthorize(ctx, r.client, req, resp); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	} else if retry {
		if _, resp, err = r.post(ctx, body, hdr); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
	}
	defer resp.Body.Close()
	lr := io.LimitReader(resp.Body, r.maxBody+1)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, answerHead))
		return nil, fmt.Errorf("%s: the server answered %s", method, describeAnswer(resp.StatusCode, mediaType(resp.Header.Get("Content-Type")), head))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		data, err := io.ReadAll(lr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if int64(len(data)) > r.maxBody {
			return nil, fmt.Errorf("%s: response larger than %d bytes", method, r.maxBody)
		}
		return rawResult(method, id, data)
	case "text/event-stream":
		return r.readStream(ctx, method, id, lr)
	default:
		head, _ := io.ReadAll(io.LimitReader(resp.Body, answerHead))
		return nil, fmt.Errorf("%s: the server answered %s, not an MCP message", method, describeAnswer(resp.StatusCode, ct, head))
	}
}

// post sends one raw message with the session's headers and, for a server
// behind OAuth, its bearer token.
func (r *rawHTTP) post(ctx context.Context, body []byte, hdr map[string]string) (*http.Request, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid := r.session.ID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if ir := r.session.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", ir.ProtocolVersion)
	}
	if err := authorizeRaw(ctx, r.client, req); err != nil {
		return nil, nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			if uerr.URL == r.url && r.shown != "" {
				uerr.URL = r.shown
			} else {
				uerr.URL = RedactURL(uerr.URL)
			}
		}
		return nil, nil, err
	}
	return req, resp, nil
}

// readStream reads server-sent events until the response to id arrives.
// Server requests on the stream are answered (answer); other messages
// (notifications) are not ours to handle on this side channel and are
// skipped.
func (r *rawHTTP) readStream(ctx context.Context, method, id string, body io.Reader) (json.RawMessage, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), int(r.maxBody))
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "":
			if data.Len() == 0 {
				continue
			}
			if r.answer(ctx, data.Bytes()) {
				data.Reset()
				continue
			}
			res, err := rawResult(method, id, data.Bytes())
			data.Reset()
			if errors.Is(err, errNotOurs) {
				continue
			}
			return res, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: reading event stream: %w", method, err)
	}
	if data.Len() > 0 {
		if res, err := rawResult(method, id, data.Bytes()); !errors.Is(err, errNotOurs) {
			return res, err
		}
	}
	return nil, fmt.Errorf("%s: event stream ended without a response", method)
}

var errNotOurs = errors.New("not the awaited response")

func rawResult(method, id string, data []byte) (json.RawMessage, error) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, fmt.Errorf("%s: decoding response: %w", method, err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, errNotOurs
	}
	if got, _ := resp.ID.Raw().(string); got != id {
		return nil, errNotOurs
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}
