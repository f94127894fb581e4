package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/fixtures"
)

// webServerArg makes the test binary a raw MCP server over stdio for the
// approval page's tests: each call it runs is written, one line, to the
// file named after the argument, so a test counts what ran.
const webServerArg = "web-page-test-server"

func init() {
	if len(os.Args) > 2 && os.Args[1] == webServerArg {
		serveWebTools(os.Args[2])
		os.Exit(0)
	}
}

// The hostile tool's words.
const (
	hostileName  = "purge<script>alert(1)</script>"
	hostileTitle = "<img src=x onerror=alert(2)>\u202eTidy"
	hostileDesc  = "<script>alert(3)</script>\u202e Tidies up."
	// hostileBlobParts makes the hostile call's "blob" a megabyte of
	// script tags and bidi overrides (28 bytes each).
	hostileBlobParts = 1 << 20 / 28
)

func serveWebTools(effects string) {
	closed := map[string]any{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false}
	open := map[string]any{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true}
	var mu sync.Mutex
	(&fixtures.RawServer{Name: "web", Tools: []map[string]any{
		{"name": "drop_table", "description": "Drops a table.", "annotations": closed},
		{"name": "wipe_all", "description": "Wipes every remote copy.", "annotations": open},
		{"name": hostileName, "title": hostileTitle, "description": hostileDesc, "annotations": closed},
	}, Call: func(params json.RawMessage) (any, bool) {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(params, &p)
		mu.Lock()
		f, err := os.OpenFile(effects, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%s %.60s\n", p.Name, p.Arguments)
			f.Close()
		}
		mu.Unlock()
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran " + p.Name}}}, true
	}}).Serve(os.Stdin, os.Stdout)
}

// webRig is a serve --web with the web fixture server, a client of it,
// and the browser script driving its page.
type webRig struct {
	t      *testing.T
	dir    string
	cs     *mcp.ClientSession
	expect func(string)
	tell   func(string)
	ran    func() []string
	call   func(name string, args map[string]any) <-chan *mcp.CallToolResult
	text   func(*mcp.CallToolResult) string
}

// startWebRig starts serve --web --ask-via approver with the user config
// configJSON ("" for none) and the browser script with script's
// arguments after the link; cleanups stop both.
func startWebRig(t *testing.T, configJSON string, script ...string) *webRig {
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	if configJSON != "" {
		if err := os.MkdirAll(filepath.Join(dir, "config", "mcphost"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config", "mcphost", "config.json"), []byte(configJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	done := make(chan int, 1)
	go func() {
		s := &streams{In: inR, Out: outW, Err: errW, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"--server", "web=" + exe + " " + webServerArg + " " + effects, "--trust", "web",
			"serve", "--ask-via", "approver", "--web"}, s)
		outW.Close()
		errW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close() // a serve still writing to its client stops
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	// serve prints the page's link on standard error, first thing.
	links := make(chan string, 1)
	go func() {
		stderr := bufio.NewScanner(errR)
		for stderr.Scan() {
			if m := regexp.MustCompile(`approval page: (http://(?:127\.0\.0\.1|localhost):\d+/open\?k=[0-9a-f]{64})$`).FindStringSubmatch(stderr.Text()); m != nil {
				links <- m[1]
			}
		}
		close(links)
	}()
	var link string
	select {
	case link = <-links:
	case <-time.After(30 * time.Second):
	}
	if link == "" {
		cancel()
		t.Fatalf("serve printed no link on standard error")
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "web-test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	browser := exec.CommandContext(ctx, "bash", append([]string{"../../scripts/web-e2e.sh", link}, script...)...)
	toBrowser, err := browser.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	fromBrowser, err := browser.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var browserErr bytes.Buffer
	browser.Stderr = &browserErr
	if err := browser.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		toBrowser.Close()
		if err := browser.Wait(); err != nil {
			t.Errorf("the browser script: %v\n%s", err, browserErr.String())
		}
	})
	said := bufio.NewScanner(fromBrowser)
	expect := func(want string) {
		t.Helper()
		if !said.Scan() {
			t.Fatalf("the browser script ended before saying %q:\n%s", want, browserErr.String())
		}
		if got := said.Text(); got != want {
			t.Fatalf("the browser script said %q, want %q:\n%s", got, want, browserErr.String())
		}
	}
	tell := func(step string) {
		t.Helper()
		if _, err := io.WriteString(toBrowser, step+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	ran := func() []string {
		b, err := os.ReadFile(effects)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if name, _, _ := strings.Cut(l, " "); name != "" {
				names = append(names, name)
			}
		}
		return names
	}
	// serve exports a name that is not plain as a name of its own;
	// the page shows the raw name.
	exported := map[string]string{}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		for _, raw := range []string{"drop_table", "wipe_all", hostileName} {
			if strings.HasPrefix(tool.Name, "web__"+raw[:5]) {
				exported[raw] = tool.Name
			}
		}
	}
	if len(exported) != 3 {
		t.Fatalf("serve lists %d of the 3 tools: %v", len(exported), exported)
	}
	call := func(name string, args map[string]any) <-chan *mcp.CallToolResult {
		res := make(chan *mcp.CallToolResult, 1)
		go func() {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: exported[name], Arguments: args})
			if err != nil {
				t.Errorf("call %s: %v", name, err)
			}
			res <- r
		}()
		return res
	}
	text := func(r *mcp.CallToolResult) string {
		if r == nil {
			return ""
		}
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}

	return &webRig{t: t, dir: dir, cs: cs, expect: expect, tell: tell, ran: ran, call: call, text: text}
}

// TestWebPageInBrowser drives the approval page in a real browser
// (Chromium, through playwright-core; scripts/web-e2e.sh installs
// Chromium when it can): `mcphost serve --web --ask-via approver` serves a
// client whose calls need a person, and the page opened from serve's link
// answers them. Allowing once runs the call once; denying with a reason
// runs nothing and the client reads the reason; a hostile tool renders as
// text; tier 3 needs the typed name; requests without the cookie or with
// a wrong CSRF token answer nothing.
func TestWebPageInBrowser(t *testing.T) {
	r := startWebRig(t, "")
	expect, tell, ran, call, text := r.expect, r.tell, r.ran, r.call, r.text
	expect("opened") // the link set the cookie and the page shows

	res := call("drop_table", map[string]any{"table": "users"})
	tell("allow-once")
	expect("allowed")
	if r := <-res; r == nil || r.IsError || text(r) != "ran drop_table" {
		t.Fatalf("the call allowed once: %+v %q", r, text(r))
	}
	if got := ran(); len(got) != 1 || got[0] != "drop_table" {
		t.Fatalf("after allowing once, the server ran %q, want drop_table once", got)
	}

	res = call("drop_table", map[string]any{"table": "orders"})
	tell("deny")
	expect("denied")
	if r := <-res; r == nil || !r.IsError || !strings.Contains(text(r), "not on a Friday") {
		t.Fatalf("the denied call: %+v %q; want an error with the person's reason", r, text(r))
	}

	res = call(hostileName, map[string]any{"</script><script>alert(5)</script>": "x",
		"path": "/home/\u202eexe.txt", "blob": strings.Repeat("<script>alert(6)</script>\u202e", hostileBlobParts)})
	tell("hostile")
	expect("hostile shown as text")
	if r := <-res; r == nil || !r.IsError {
		t.Fatalf("the hostile call ran: %+v", r)
	}

	res = call("wipe_all", map[string]any{"where": "everywhere"})
	tell("tier3")
	expect("tier 3 needed the name")
	if r := <-res; r == nil || r.IsError || text(r) != "ran wipe_all" {
		t.Fatalf("the tier-3 call allowed with its name: %+v %q", r, text(r))
	}

	res = call("drop_table", map[string]any{"table": "payments"})
	tell("forged")
	expect("forged answers refused")
	tell("deny")
	expect("denied")
	<-res
	if got := ran(); strings.Join(got, " ") != "drop_table wipe_all" {
		t.Fatalf("the server ran %q; want drop_table once and wipe_all once, nothing denied or forged", got)
	}
	tell("done")
}

// TestPasskeyApprovalInBrowser drives a passkey approval in a real
// browser with Chromium's virtual authenticator. The person's policy says
// only a passkey approves tier 3 ("askVia": {"T3": ["passkey"]}): an
// approval on the page without one runs nothing; the page enrolls a
// passkey; a proof the authenticator did not make is refused by serve
// and the call waits again; the authenticator's signature over the call
// lets it run once.
func TestPasskeyApprovalInBrowser(t *testing.T) {
	r := startWebRig(t, `{"askVia": {"T3": ["passkey"]}}`, "--passkey")
	r.expect("opened")

	res := r.call("wipe_all", map[string]any{"where": "alpha"})
	r.tell("tier3-unsigned")
	r.expect("sent unsigned")
	if got := <-res; got == nil || !got.IsError || !strings.Contains(r.text(got), "askVia") {
		t.Fatalf("a tier-3 call approved without a passkey: %+v %q; want it refused naming askVia", got, r.text(got))
	}

	r.tell("enroll")
	r.expect("enrolled")
	store, err := os.ReadFile(filepath.Join(r.dir, "state", "mcphost", "passkeys.json"))
	if err != nil || !strings.Contains(string(store), `"label": "test key \u003cb\u003e1\u003c/b\u003e"`) {
		t.Fatalf("the enrolled passkey file: %v\n%s", err, store)
	}

	res = r.call("wipe_all", map[string]any{"where": "bravo"})
	r.tell("forged-passkey bravo")
	r.expect("forged passkey refused")
	if got := <-res; got == nil || !got.IsError || !strings.Contains(r.text(got), "forged") {
		t.Fatalf("the call with a forged passkey proof: %+v %q; want it denied with the person's reason", got, r.text(got))
	}
	if got := r.ran(); len(got) != 0 {
		t.Fatalf("the server ran %q before any valid passkey approval", got)
	}

	res = r.call("wipe_all", map[string]any{"where": "charlie"})
	r.tell("passkey-tier3 charlie")
	r.expect("signed")
	if got := <-res; got == nil || got.IsError || r.text(got) != "ran wipe_all" {
		t.Fatalf("the call approved with a passkey: %+v %q", got, r.text(got))
	}
	if got := r.ran(); strings.Join(got, " ") != "wipe_all" {
		t.Fatalf("the server ran %q, want wipe_all once", got)
	}
	r.waitAudit(t, func(rec map[string]any) bool {
		return rec["tool"] == "wipe_all" && rec["via"] == "web+passkey" && rec["status"] == "success"
	})

	// The first call, refused for want of a passkey, was held for a later
	// approval: approved now with the passkey, its retry runs once, and a
	// second retry does not.
	r.tell("passkey-tier3 alpha")
	r.expect("signed")
	// The page sent the answer; serve takes it on its own time: the retry
	// waits for its record.
	r.waitAudit(t, func(rec map[string]any) bool {
		return rec["kind"] == "approval" && rec["approvalState"] == "approved" && rec["via"] == "web+passkey"
	})
	if got := <-r.call("wipe_all", map[string]any{"where": "alpha"}); got == nil || got.IsError || r.text(got) != "ran wipe_all" {
		t.Fatalf("the held call, retried after its passkey approval: %+v %q", got, r.text(got))
	}
	if got := r.ran(); strings.Join(got, " ") != "wipe_all wipe_all" {
		t.Fatalf("the server ran %q, want wipe_all twice", got)
	}
	// A second retry is a new call: it asks again.
	res = r.call("wipe_all", map[string]any{"where": "alpha"})
	r.tell("deny-wipe alpha")
	r.expect("denied")
	if got := <-res; got == nil || !got.IsError || !strings.Contains(r.text(got), "once was enough") {
		t.Fatalf("a second retry of the held call: %+v %q; want it asked again and denied", got, r.text(got))
	}
	if got := r.ran(); len(got) != 2 {
		t.Fatalf("the server ran %q after a second retry, want wipe_all twice", got)
	}
	r.tell("done")
}

// waitAudit waits, up to 30 seconds, for a record of serve's audit log
// that ok accepts.
func (r *webRig) waitAudit(t *testing.T, ok func(map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(r.dir, "state", "mcphost", "audit.jsonl"))
		for _, line := range strings.Split(string(b), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && ok(rec) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no such record in the audit log:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
