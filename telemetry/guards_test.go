package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// When the collector answers an export with an error status, the warning
// says so and names the endpoint without its user, password or query.
func TestRefusedExportNamesNoSecretOfTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	endpoint := strings.Replace(srv.URL, "http://", "http://someone:pw-5e1@", 1) + "/otlp?key=q-77c1"
	e, err := Start(Config{Endpoint: endpoint, FlushTimeout: 5 * time.Second}, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := e.CallStarted(context.Background(), "c", "s", "t", json.RawMessage(`{}`))
	e.CallDone(ctx, &host.Result{CallID: "c", Status: host.StatusSuccess, Decision: decide.Decision{Verdict: decide.Allow}}, "h")
	err = e.Shutdown()
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("Shutdown with a collector that answers 403 = %v; want a warning naming the answer", err)
	}
	for _, secret := range []string{"someone", "pw-5e1", "q-77c1"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the export warning %q shows %q", err, secret)
		}
	}
}

// An export error in the exit warning is its first line, bounded: an
// exporter's error may quote what a collector answered.
func TestShortErrIsOneBoundedLine(t *testing.T) {
	got := shortErr(errors.New(strings.Repeat("x", 500) + "\nsecond line"))
	if strings.Contains(got, "\n") || strings.Contains(got, "second") || len(got) > 200+len("…") {
		t.Errorf("shortErr = %q (%d bytes); want the first line, at most 200 bytes and a mark", got, len(got))
	}
	if got := shortErr(errors.New("short\nmore")); got != "short" {
		t.Errorf("shortErr = %q, want \"short\"", got)
	}
}

// What is read of a collector's answer is bounded: a collector that
// answers 200 with a body without end does not hold an export until its
// timeout, which is long here so that only the bound can end the read.
func TestCollectorAnswerIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("z", 4096))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	s := &sender{url: srv.URL, timeout: 25 * time.Second, client: srv.Client()}
	done := make(chan error, 1)
	go func() { done <- s.send(context.Background(), []byte{1}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("send = %v; want the 200 answer taken after reading at most %d bytes", err, maxResponse)
		}
	case <-time.After(20 * time.Second): // before the timeout: only the bound ends the read in time
		t.Fatal("send still reads a collector's endless answer after 20s")
	}
}

// An export that fails in the background, while the command runs, is
// counted and said once by Shutdown, never printed mid-command (the
// OpenTelemetry default prints it through the standard logger) and not
// lost: only traces fail here, and their one full batch is exported before
// Shutdown, which has nothing of its own left to fail, so only the count
// can report it.
func TestBackgroundExportFailureIsReportedAtExit(t *testing.T) {
	var printed bytes.Buffer
	log.SetOutput(&printed)
	defer log.SetOutput(os.Stderr)
	first := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/v1/traces") {
			return // metrics and logs are taken
		}
		defer once.Do(func() { close(first) })
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	e, err := Start(Config{Endpoint: srv.URL, FlushTimeout: 5 * time.Second}, "test")
	if err != nil {
		t.Fatal(err)
	}
	for range 512 { // one full batch, which the processor exports at once
		_, end := e.StartAgent(context.Background(), "p:m")
		end()
	}
	<-first
	err = e.Shutdown()
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("Shutdown after a failed background export = %v; want the failure reported", err)
	}
	if printed.Len() > 0 {
		t.Errorf("printed mid-command: %q; want the failure said once, by Shutdown", printed.String())
	}
}
