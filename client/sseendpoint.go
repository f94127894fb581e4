package client

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcphost/mcphost/internal/netcheck"
	"github.com/mcphost/mcphost/sanitize"
)

// maxEndpointEvent bounds the first event of a legacy SSE stream, which
// names the endpoint and has no business being large.
const maxEndpointEvent = 64 << 10

// endpointCheck reads the first event of a legacy SSE stream before the SDK
// does. When it is the "endpoint" event and names a URL on another origin
// than the stream's, reading fails with an *EndpointError, so the server
// fails to start and not one message is posted there. Everything else is
// left to the SDK, which reads the same bytes afterwards. (The guard refuses
// such posts anyway; this check makes the failure say why, at once.)
type endpointCheck struct {
	io.ReadCloser
	base   *url.URL // the stream's URL, which a relative endpoint resolves against
	origin string

	r   io.Reader // the first event again, then the rest of the stream
	err error
}

func (c *endpointCheck) Read(p []byte) (int, error) {
	if c.r == nil && c.err == nil {
		c.r, c.err = c.check()
	}
	if c.err != nil {
		return 0, c.err
	}
	return c.r.Read(p)
}

func (c *endpointCheck) check() (io.Reader, error) {
	br := bufio.NewReader(c.ReadCloser)
	var seen bytes.Buffer
	start, partial := 0, false
	for seen.Len() < maxEndpointEvent {
		line, err := br.ReadSlice('\n')
		seen.Write(line)
		if err == bufio.ErrBufferFull {
			partial = true
			continue
		}
		blank := !partial && len(bytes.TrimRight(line, "\r\n")) == 0
		partial = false
		if blank || err != nil {
			// An event ended: the first with a name or data is the one
			// the SDK takes for the endpoint.
			name, data := firstEvent(seen.Bytes()[start:])
			start = seen.Len()
			if name == "endpoint" {
				if u, perr := c.base.Parse(data); perr == nil && !netcheck.InOrigin(u, c.origin) {
					return nil, &EndpointError{Server: c.origin, Endpoint: showOrigin(u)}
				}
			}
			if name != "" || data != "" || err != nil {
				break
			}
		}
	}
	return io.MultiReader(bytes.NewReader(seen.Bytes()), br), nil
}

// firstEvent parses the name and data of the event in ev the way the SDK
// does: "event:" and "data:" fields, data lines joined by newlines.
func firstEvent(ev []byte) (name, data string) {
	var lines []string
	for _, l := range strings.Split(string(ev), "\n") {
		l = strings.TrimRight(l, "\r")
		k, v, ok := strings.Cut(l, ":")
		switch {
		case !ok:
		case k == "event":
			name = strings.TrimSpace(v)
		case k == "data":
			lines = append(lines, strings.TrimSpace(v))
		}
	}
	return name, strings.Join(lines, "\n")
}

// EndpointError is a legacy SSE server whose endpoint event names another
// origin than its own.
type EndpointError struct {
	Server   string // the SSE URL's origin
	Endpoint string // the origin the endpoint event named
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("the SSE server at %s names an endpoint on another origin, %s; mcphost posts a server's messages to the origin it is configured with only",
		e.Server, sanitize.Line(e.Endpoint))
}
