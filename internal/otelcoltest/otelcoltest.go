// Package otelcoltest builds and runs a real OpenTelemetry Collector for
// tests (the module in telemetry/internal/collector: an OTLP/HTTP receiver
// and a file exporter, pinned), and reads back what it wrote.
package otelcoltest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Build builds the collector into dir and returns the binary's path. It
// skips the test, saying why, only when the collector cannot be built here
// at all (no go command, or its modules cannot be had); any other failure
// fails the test.
func Build(t testing.TB, dir string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "telemetry", "internal", "collector")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the test collector cannot be built: no go command (%v)", err)
	}
	bin := filepath.Join(dir, "collector")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if unreachable(string(out)) {
			t.Skipf("the test collector cannot be built: its modules cannot be downloaded here:\n%s", out)
		}
		t.Fatalf("build the test collector in %s: %v\n%s", src, err, out)
	}
	t.Logf("built the test collector in %s", time.Since(start).Round(time.Millisecond))
	return bin
}

// unreachable reports whether go build failed for want of the modules.
func unreachable(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "GOPROXY=off", "i/o timeout", "module lookup disabled"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// Collector is a running collector.
type Collector struct {
	// Endpoint is the OTLP/HTTP base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string
	out      string
	cmd      *exec.Cmd
	log      *bytes.Buffer
	stopped  bool
}

// Start runs the collector bin with an OTLP/HTTP receiver on a free local
// port and a file exporter for traces, metrics and logs, and waits (bounded)
// until it listens. The test's cleanup stops it.
func Start(t testing.TB, bin string) *Collector {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	c := &Collector{Endpoint: "http://" + addr, out: filepath.Join(dir, "out.jsonl"), log: &bytes.Buffer{}}
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  file:
    path: %s
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
    metrics:
      receivers: [otlp]
      exporters: [file]
    logs:
      receivers: [otlp]
      exporters: [file]
`, addr, c.out)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, "--config", cfgPath)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start the collector: %v", err)
	}
	t.Cleanup(func() { c.Stop(t) })
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not listen on %s within 60s:\n%s", addr, c.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr returns a local address no one listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Stop shuts the collector down gracefully, so that the file exporter has
// written everything it received. Calling it again does nothing.
func (c *Collector) Stop(t testing.TB) {
	t.Helper()
	if c.stopped {
		return
	}
	c.stopped = true
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		t.Errorf("the collector did not stop within 30s:\n%s", c.log)
	}
}

// Output stops the collector and returns what it wrote, raw (one OTLP/JSON
// object a line) and decoded.
func (c *Collector) Output(t testing.TB) (raw string, data *Data) {
	t.Helper()
	c.Stop(t)
	b, err := os.ReadFile(c.out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	data = &Data{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line exportLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("the collector wrote a line that is not OTLP/JSON: %v\n%s", err, sc.Bytes())
		}
		data.add(&line)
	}
	return string(b), data
}
