//go:build linux

// Command httpmem measures the peak memory of mcphost against hostile HTTP
// servers: for each attack, one "mcphost call" against a local streamable
// HTTP server that answers the call (or fills the background stream) as the
// attack says. It prints the peak resident set of each run as a markdown
// table, beside a normal call's, for one or more mcphost binaries (say, one
// built before a change and one after):
//
//	go build -o mcphost-new ./cmd/mcphost
//	go run ./bench/httpmem ./mcphost-old ./mcphost-new
//
// The attacks: "event", the call's answer is one server-sent event of
// -event bytes; "gzip", the answer is a gzip body of about a megabyte that
// inflates to -bomb bytes; "stream", one event on the background GET stream
// that never ends (the server writes up to -stream bytes, and answers the
// call only once it has, or once mcphost hung up). Every server binds
// 127.0.0.1. GOGC and GOMEMLIMIT, when set, are passed on to mcphost.
// Figures are measured, not judged: the program exits 1 only when it cannot
// run.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/fixtures"
)

func main() {
	eventBytes := flag.Int("event", 64<<20, "size of the oversized event")
	bombBytes := flag.Int("bomb", 1<<30, "bytes the gzip bomb inflates to")
	streamBytes := flag.Int("stream", 512<<20, "bytes written into the endless event before the server gives up")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: httpmem [flags] MCPHOST...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Args(), *eventBytes, *bombBytes, *streamBytes); err != nil {
		fmt.Fprintln(os.Stderr, "httpmem:", err)
		os.Exit(1)
	}
}

// attack answers a tools/call of read_value, or a GET, in the server's
// place; it returns false to let the real server answer.
type attack struct {
	name, what string
	hook       func(w http.ResponseWriter, r *http.Request, body []byte) bool
}

func run(bins []string, eventBytes, bombBytes, streamBytes int) error {
	fmt.Fprintf(os.Stderr, "preparing a gzip body inflating to %d bytes…\n", bombBytes)
	bomb, err := gzipSpaces(bombBytes)
	if err != nil {
		return err
	}
	attacks := func() []attack {
		return []attack{{"normal", "an ordinary call", func(http.ResponseWriter, *http.Request, []byte) bool { return false }},
			{"event", fmt.Sprintf("the answer is one %d MiB event", eventBytes>>20), func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				id, ok := callID(r, body)
				if !ok {
					return false
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
				writeX(w, eventBytes)
				io.WriteString(w, `"}]}}`+"\n\n")
				return true
			}},
			{"gzip", fmt.Sprintf("the answer is %d KiB of gzip inflating to %d MiB", len(bomb)>>10, bombBytes>>20), func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if _, ok := callID(r, body); !ok {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(bomb)
				return true
			}},
			streamAttack(streamBytes),
		}
	}
	tmp, err := os.MkdirTemp("", "mcphost-httpmem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	type cell struct {
		rssKiB int64
		exit   int
		wall   time.Duration
	}
	results := make(map[string][]cell)
	names := attacks()
	for i := range names {
		for _, bin := range bins {
			a := attacks()[i] // a fresh one per run: the stream attack keeps state
			url, stop, err := serve(a)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%s: %s…\n", a.name, bin)
			rss, exit, wall, err := measure(bin, url, filepath.Join(tmp, a.name))
			stop()
			if err != nil {
				return err
			}
			results[a.name] = append(results[a.name], cell{rss, exit, wall})
		}
	}
	fmt.Print("| attack |")
	for _, b := range bins {
		fmt.Printf(" %s: peak RSS (exit, time) |", filepath.Base(b))
	}
	fmt.Print("\n|---|")
	for range bins {
		fmt.Print("---|")
	}
	fmt.Println()
	for _, a := range names {
		fmt.Printf("| %s: %s |", a.name, a.what)
		for _, c := range results[a.name] {
			fmt.Printf(" %.1f MiB (%d, %.1fs) |", float64(c.rssKiB)/1024, c.exit, c.wall.Seconds())
		}
		fmt.Println()
	}
	return nil
}

// streamAttack fills the background GET stream with one event that does not
// end, and holds the call until it wrote streamBytes or mcphost hung up.
func streamAttack(streamBytes int) attack {
	var (
		done = make(chan struct{})
		once sync.Once
	)
	finish := func() { once.Do(func() { close(done) }) }
	return attack{"stream", fmt.Sprintf("one endless event on the GET stream (up to %d MiB)", streamBytes>>20), func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
			if writeX(w, streamBytes) < streamBytes {
				finish() // mcphost hung up
				return true
			}
			finish()
			<-r.Context().Done()
			return true
		}
		if _, ok := callID(r, body); ok {
			select {
			case <-done:
			case <-r.Context().Done():
				return true
			}
		}
		return false
	}}
}

// writeX writes n bytes of 'x' and returns how many were taken.
func writeX(w io.Writer, n int) int {
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	sent := 0
	for sent < n {
		k, err := w.Write(chunk[:min(len(chunk), n-sent)])
		sent += k
		if err != nil {
			break
		}
	}
	return sent
}

func callID(r *http.Request, body []byte) (string, bool) {
	if r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"method":"tools/call"`)) {
		return "", false
	}
	var msg struct{ ID json.RawMessage }
	if json.Unmarshal(body, &msg) != nil {
		return "", false
	}
	return string(msg.ID), true
}

func gzipSpaces(n int) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		zw.Write(chunk[:k])
		n -= k
	}
	return buf.Bytes(), zw.Close()
}

// serve starts the flaky fixture over streamable HTTP on loopback, with a's
// hook in front.
func serve(a attack) (string, func(), error) {
	f, err := fixtures.New("flaky", fixtures.Options{})
	if err != nil {
		return "", nil, err
	}
	h := f.HTTPHandler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if !a.hook(w, r, body) {
			h.ServeHTTP(w, r)
		}
	})}
	go srv.Serve(ln)
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
	}
	return "http://" + ln.Addr().String() + "/mcp", stop, nil
}

// measure runs one call and returns the peak resident set of the mcphost
// process, in KiB, with its exit code.
func measure(bin, url, dir string) (int64, int, time.Duration, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, 0, 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "call", "--yes", "--server", "s="+url, "s/read_value", `{"key":"k"}`)
	cmd.Env = []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "PATH=" + os.Getenv("PATH")}
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} { // to see what the collector's headroom costs
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		return 0, 0, 0, fmt.Errorf("running %s: %w", bin, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, 0, fmt.Errorf("no resource usage for %s", bin)
	}
	if last := lastLine(stderr.String()); last != "" {
		fmt.Fprintf(os.Stderr, "  exit %d: %s\n", cmd.ProcessState.ExitCode(), last)
	}
	return ru.Maxrss, cmd.ProcessState.ExitCode(), wall, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
