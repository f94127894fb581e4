package client

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/fixtures"
)

// TestFoldLauncherNoise: what a package launcher says about its own work
// folds into one line per run; npm's errors and the server's own words stay;
// a progress line is what the terminal would show; long lines are cut.
func TestFoldLauncherNoise(t *testing.T) {
	long := strings.Repeat("x", maxTailLine+50)
	got := foldLauncherNoise([]string{
		"npm notice",
		"npm notice New major version of npm available! 10.2.4 -> 11.0.0",
		"npm WARN deprecated left-pad@1.0.0",
		"⠙",
		"⠋ ⠙\r",
		"|",
		"npm error code E404",
		"starting server\rserver failed: port in use",
		"----------",
		"npm warn exec The following package was not found",
		long,
		"",
	})
	want := []string{
		"[6 package-launcher lines folded: npm notices, warnings, progress]",
		"npm error code E404",
		"server failed: port in use",
		"----------",
		"[1 package-launcher line folded: npm notices, warnings, progress]",
		long[:maxTailLine] + "… [50 bytes cut]",
		"",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("foldLauncherNoise (-want +got):\n%s", diff)
	}
}

// TestTailFoldsBeforeCounting: the tail's last lines are counted after the
// launcher's notices are folded, so a burst of them does not push the
// server's own words out of it.
func TestTailFoldsBeforeCounting(t *testing.T) {
	b := newTailBuffer(64 << 10)
	fmt.Fprintln(b, "Error: cannot listen")
	for i := range 20 {
		fmt.Fprintf(b, "npm notice line %d\n", i)
	}
	if got, want := b.Tail(2), "Error: cannot listen\n[20 package-launcher lines folded: npm notices, warnings, progress]"; got != want {
		t.Errorf("Tail(2) = %q, want %q", got, want)
	}
}

// TestServerThatExitsSaysHow: a server whose process ends says how, both
// when it ends during its start and when it crashes while it runs.
func TestServerThatExitsSaysHow(t *testing.T) {
	m := New([]Spec{
		{Name: "dead", Command: "sh", Args: []string{"-c", "echo 'npm notice hello' >&2; echo 'boom' >&2; exit 7"}},
		fixtureSpec(t, "flaky", "flaky", "--crash-on", "write_record"),
	}, Options{Backoff: func(int) time.Duration { return time.Hour }})
	t.Cleanup(func() { m.Close() })
	events, unsub := m.Subscribe()
	defer unsub()
	m.Start(context.Background())

	st, _ := statusOf(m, "dead")
	if st.State != StateFailed || !strings.HasPrefix(st.LastError, "the server exited with status 7: ") ||
		!strings.HasSuffix(st.LastError, "\nstderr:\n[1 package-launcher line folded: npm notices, warnings, progress]\nboom") {
		t.Errorf("dead: %s: %q, want failed, how it exited first and the folded stderr last", st.State, st.LastError)
	}

	m.Call(context.Background(), "flaky", "write_record", []byte(`{"key":"k","value":"v"}`), CallOptions{})
	want := fmt.Sprintf("the server exited with status %d; ", fixtures.CrashExitCode)
	waitFor(t, events, func(e Event) bool {
		return e.Server == "flaky" && e.State == StateRestarting && strings.HasPrefix(e.Err, want)
	})
}
