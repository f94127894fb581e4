package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestApproveWeb: approve --web prints the page's link on standard output
// (and opens it unless --no-open); the link opens the page, which says
// when no serve runs; stopping it exits 0.
func TestApproveWeb(t *testing.T) {
	for _, noOpen := range []bool{true, false} {
		s, _, errb := testStreams(t)
		outR, outW := io.Pipe()
		s.Out = outW
		opened := make(chan string, 1)
		defer func(f func(*streams, string) error) { openBrowser = f }(openBrowser)
		openBrowser = func(_ *streams, link string) error {
			opened <- link
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		args := []string{"approve", "--web"}
		if noOpen {
			args = append(args, "--no-open")
		}
		go func() {
			done <- run(ctx, args, s)
			outW.Close()
		}()
		lines := bufio.NewScanner(outR)
		if !lines.Scan() {
			t.Fatalf("approve --web printed nothing: %s", errb)
		}
		m := regexp.MustCompile(`^Approval page: (http://localhost:\d+/open\?k=[0-9a-f]{64})$`).FindStringSubmatch(lines.Text())
		if m == nil {
			t.Fatalf("approve --web printed %q, want the page's link", lines.Text())
		}
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := hc.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("the link: %s with cookies %v", resp.Status, resp.Cookies())
		}
		req, _ := http.NewRequest("GET", strings.SplitN(m[1], "/open", 2)[0]+"/", nil)
		req.AddCookie(resp.Cookies()[0])
		page, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(page.Body)
		page.Body.Close()
		if page.StatusCode != http.StatusOK || !strings.Contains(string(body), "No mcphost serve runs now") {
			t.Errorf("the page: %s\n%s", page.Status, body)
		}
		select {
		case link := <-opened:
			if noOpen || link != m[1] {
				t.Errorf("with --no-open=%v the browser was opened on %q", noOpen, link)
			}
		default:
			if !noOpen {
				t.Error("without --no-open the browser was not opened")
			}
		}
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("approve --web exited %d when stopped: %s", code, errb)
		}
	}
}

// TestWebFlagsUsage: the page's flags without --web, and an address other
// than 127.0.0.1, are usage errors that say what to do.
func TestWebFlagsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"approve", "--no-open"}, "add --web"},
		{[]string{"approve", "--addr", "127.0.0.1:0"}, "add --web"},
		{[]string{"approve", "--web", "--addr", "0.0.0.0:0"}, "use 127.0.0.1:0"},
		{[]string{"approve", "--web", "--addr", "localhost:8080"}, "use 127.0.0.1:8080"},
		{[]string{"serve", "--web-addr", "127.0.0.1:8766"}, "add --web"},
		{[]string{"serve", "--web", "--web-addr", "[::]:0"}, "listens only on 127.0.0.1"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("mcphost %s: exit %d, stderr %q; want %d saying %q", strings.Join(c.args, " "), code, errOut, exitUsage, c.want)
		}
	}
}
