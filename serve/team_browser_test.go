package serve

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
)

// TestTeamPageInBrowser drives the team approval page in a real browser
// (Chromium through playwright-core; scripts/team-e2e.sh installs Chromium
// when it can), each person logging in on the OpenID provider's own form:
// Alice's call routed to owners is not on her page and her forged answer
// is refused; Bob logs in, sees it, and approves it; Alice's retry runs it
// once. Chromium or playwright-core missing skips the test only outside CI.
func TestTeamPageInBrowser(t *testing.T) {
	tw := newTeamWorld(t)
	alice := tw.client(t, "alice", "alice-pw", nil)
	const args = `{"key":"web","value":"1"}`
	id := teamHeldID(t, alice.call(t, "rogue__set_value", args))

	cmd := exec.Command("bash", "../scripts/team-e2e.sh", tw.base)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	wait := func() error {
		waited = true
		in.Close()
		return cmd.Wait()
	}
	t.Cleanup(func() {
		if !waited {
			_ = wait()
		}
	})
	said := bufio.NewScanner(out)
	expect := func(want string) {
		t.Helper()
		if said.Scan() && said.Text() == want {
			return
		}
		got := said.Text()
		_, _ = io.Copy(io.Discard, out)
		err := wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 && os.Getenv("CI") == "" {
			t.Skipf("the browser is not there: %s", stderr.String())
		}
		t.Fatalf("the browser script said %q, want %q (%v):\n%s", got, want, err, stderr.String())
	}
	tell := func(step string) {
		t.Helper()
		if _, err := io.WriteString(in, step+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	tell("alice " + id)
	expect("alice sees none")
	tell("bob " + id)
	expect("bob approved")
	tell("done")
	if err := wait(); err != nil {
		t.Fatalf("the browser script: %v\n%s", err, stderr.String())
	}
	if res := alice.call(t, "rogue__set_value", args); res.IsError || tw.execs("rogue", "set_value") != 1 {
		t.Fatalf("Alice's retry after Bob's approval in the browser: %s (%d runs), want it run once", text(res), tw.execs("rogue", "set_value"))
	}
}
