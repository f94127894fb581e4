package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostileIssuer is an authorization server that answers introspection
// with whatever the test sets: a broken or malicious issuer, which the
// real provider of the other tests never is. Its discovery document and
// its (empty) key set are all NewAuth needs of it.
type hostileIssuer struct {
	url    string
	mu     sync.Mutex
	answer map[string]any
}

func startHostileIssuer(t *testing.T) *hostileIssuer {
	t.Helper()
	h := &hostileIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": h.url, "authorization_endpoint": h.url + "/authorize", "token_endpoint": h.url + "/token",
			"jwks_uri": h.url + "/keys", "introspection_endpoint": h.url + "/introspect",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(h.answer)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	h.url = ts.URL
	return h
}

// answers makes every introspection answer a, changed by edit.
func (h *hostileIssuer) answers(a map[string]any, edit func(map[string]any)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answer = map[string]any{}
	for k, v := range a {
		h.answer[k] = v
	}
	if edit != nil {
		edit(h.answer)
	}
}

// TestOAuthIntrospectionAnswersHeldToTheRules: an opaque token is only as
// good as the issuer's introspection answer, and serve holds that answer
// to the rules of a JWT's claims. An answer that says the token is not
// active, even one naming this audience and a subject, or one written
// for another issuer, is the spec's 401 invalid_token, and no tool runs;
// the same answer, active and of this issuer, lets the call run.
func TestOAuthIntrospectionAnswersHeldToTheRules(t *testing.T) {
	h := startHostileIssuer(t)
	a, err := NewAuth(context.Background(), AuthOptions{Issuer: h.url, Audience: resource,
		ClientID: "mcphost-serve", ClientSecret: "serve-secret-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	o := newOAuthWorld(t, a)
	good := map[string]any{"active": true, "iss": h.url, "sub": "u-alice", "client_id": "desk-app", "aud": resource,
		"exp": time.Now().Add(time.Hour).Unix(), "scope": "mcp", "name": "Alice Example"}
	const token = "an-opaque-token"
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flaky__read_value","arguments":{"key":"k"}}}`
	for _, c := range []struct {
		name, why string
		edit      func(map[string]any)
	}{
		{"not active", "not active", func(m map[string]any) { m["active"] = false }},
		{"active missing", "not active", func(m map[string]any) { delete(m, "active") }},
		{"another issuer", "another issuer", func(m map[string]any) { m["iss"] = "https://login.other.test" }},
	} {
		h.answers(good, c.edit)
		status, www := o.post(t, "Bearer "+token)
		if status != http.StatusUnauthorized || !strings.Contains(www, `error="invalid_token"`) || !strings.Contains(www, c.why) ||
			!strings.Contains(www, `resource_metadata="`+metadataURL+`"`) {
			t.Errorf("%s: %d %q, want 401 invalid_token saying %q", c.name, status, www, c.why)
		}
		req, _ := http.NewRequest(http.MethodPost, o.url+"/mcp", strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Transport: o.tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: a tool call answered %s, want 401", c.name, resp.Status)
		}
	}
	if n := o.execs("flaky", "read_value"); n != 0 || len(o.outcomes("read_value")) != 0 {
		t.Fatalf("a tool ran %d times on refused introspection answers", n)
	}

	// The same answer, active and of this issuer: the call runs, as alice.
	h.answers(good, nil)
	cs := o.connect(t, token, "2025-11-25", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "k"}})
	if err != nil || res.IsError {
		t.Fatalf("the call on a good answer: %v %s", err, textOf(res))
	}
	recs := o.outcomes("read_value")
	if len(recs) != 1 || recs[0].Client == nil || recs[0].Client.Person == nil || recs[0].Client.Person.Subject != "u-alice" {
		t.Fatalf("outcomes %+v, want one, alice's", recs)
	}
}
