package main

import (
	"strings"
	"testing"
)

// --drain-timeout is for --http and not negative; either mistake is a
// usage error that names the fix, before anything starts.
func TestServeDrainTimeoutFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--drain-timeout", "5s"}, "--drain-timeout is for --http"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--drain-timeout", "-1s"}, "want 0 (cancel at once) or a positive duration"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}
