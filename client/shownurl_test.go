package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// A value a streamable HTTP server's URL read from the person's
// environment (Spec.ShownURL writes it as ${NAME}) reaches the server but
// no error: not a failed start, not a failed call, not the failure of
// mcphost's own requests beside the SDK. The errors name the URL as
// written.
func TestShownURLKeepsEnvironmentValuesOutOfErrors(t *testing.T) {
	const token = "tok-path-5e1"
	var reached atomic.Bool
	h, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if !strings.HasPrefix(r.URL.Path, "/"+token+"/") {
			http.Error(w, "not here", http.StatusNotFound)
			return true
		}
		reached.Store(true)
		if isToolsCall(r, body) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return true
		}
		return false
	})
	srv := serveOn(t, "127.0.0.1", false, h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	cut, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if !bytes.Contains(body, []byte(`"method":"tools/list"`)) {
			return false
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	})
	cutSrv := serveOn(t, "127.0.0.1", false, cut)
	spec := func(name, base string) Spec {
		return Spec{Name: name, Transport: TransportHTTP, URL: base + "/" + token + "/mcp", ShownURL: base + "/${T}/mcp"}
	}
	m := startManager(t, []Spec{spec("s", srv.URL), spec("dead", dead), spec("cut", cutSrv.URL)}, Options{HTTPTransport: httpTransport(t)})
	st, _ := statusOf(m, "s")
	if st.State != StateReady || !reached.Load() {
		t.Fatalf("s: %s (%s): the real URL did not reach the server", st.State, st.LastError)
	}
	r := m.Call(context.Background(), "s", "set_value", json.RawMessage(`{"key":"k","value":"v"}`), CallOptions{})
	if r.Err == nil {
		t.Fatal("a call the server hung up on did not fail")
	}
	texts := []string{r.Err.Error()}
	for _, name := range []string{"dead", "cut"} {
		st, _ := statusOf(m, name)
		if st.State != StateFailed || !strings.Contains(st.LastError, "/$%7BT%7D/mcp") {
			t.Errorf("%s: %s (%q), want failed, naming the URL as written", name, st.State, st.LastError)
		}
		texts = append(texts, st.LastError)
	}
	for _, s := range texts {
		if strings.Contains(s, token) {
			t.Errorf("the value read from the environment shows in %q", s)
		}
	}
}
