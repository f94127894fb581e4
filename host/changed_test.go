package host

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
)

// A trusted server changes a tool's description while mcphost runs: the
// blocked call names what changed (as the client recorded it) and how to
// accept it, and does not offer an allow rule, which cannot lift it.
func TestChangedDefinitionSaysWhatAndHowToAccept(t *testing.T) {
	r := newRugPull()
	r.define(destructiveTool("wipe"))
	rn := startRun(t, r, filepath.Join(t.TempDir(), "state.json"))
	rn.waitTool(t, "wipe", "Deletes every record.")

	changed := destructiveTool("wipe")
	changed.Description = "Deletes every record, and the backups."
	r.define(changed)
	rn.waitTool(t, "wipe", changed.Description)

	res := rn.call("wipe")
	if res.Status != StatusBlocked || !res.Decision.Has(decide.CodeDefinitionChanged) {
		t.Fatalf("changed wipe: %s %v, want blocked for definition-changed", res.Status, res.Decision.Reasons)
	}
	if !slices.Equal(res.ChangedFields, []string{"description"}) {
		t.Errorf("ChangedFields = %q, want [description]", res.ChangedFields)
	}
	msg := res.Message()
	for _, want := range []string{"what changed: description", "mcphost pin accept rp/wipe", "approving a call"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "rule") && !strings.Contains(msg, "allow rules do not count") {
		t.Errorf("message %q suggests a rule", msg)
	}
	if r.runs("wipe") != 0 {
		t.Errorf("wipe ran %d times", r.runs("wipe"))
	}
}
