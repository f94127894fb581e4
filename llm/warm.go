package llm

import (
	"context"
	"net/http"
)

// Warmer is implemented by models that can connect to their provider before
// the first turn. A host calls Warm while its MCP servers start, so that the
// first turn does not also wait for DNS, TCP and TLS.
type Warmer interface {
	// Warm opens a connection to the model's endpoint and leaves it in the
	// HTTP client's pool. It sends one HEAD request without credentials,
	// ignores the answer and every error, and returns when that request is
	// done or ctx ends. It is safe to call concurrently with Stream.
	Warm(ctx context.Context)
}

func (m *openaiModel) Warm(ctx context.Context)    { m.endpoint.warm(ctx) }
func (m *anthropicModel) Warm(ctx context.Context) { m.endpoint.warm(ctx) }

// warm sends a HEAD request to the endpoint's URL. The answer (often 404 or
// 405) does not matter: the connection it leaves in the pool does. No
// header of the endpoint's is sent, so no key travels on a request that
// does no work.
func (e *endpoint) warm(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, e.url, nil)
	if err != nil {
		return
	}
	res, err := e.client.Do(req)
	if err != nil {
		return
	}
	discard(res)
}
