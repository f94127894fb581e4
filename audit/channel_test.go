package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVerifyOldAndNewChannelRecords: a log whose first records were written
// before the channel was kept (no "via") and whose later ones name it, and
// the grant, verifies whole; the channel reads back; and a channel changed
// afterwards in the file is an edit.
func TestVerifyOldAndNewChannelRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{NoSync: true})
	mustAppend(t, l, intent("s1", "call-1")) // as an older mcphost wrote it
	mustAppend(t, l, outcome("s1", "call-1"))
	in := intent("s1", "call-2")
	in.DecidedBy, in.Via = "user:session", ChannelApprove
	mustAppend(t, l, in)
	by := intent("s1", "call-3")
	by.DecidedBy, by.Via = "user:session", ChannelGrant
	by.Grant = &GrantRef{Scope: "session", Via: ChannelApprove, CallID: "call-2"}
	mustAppend(t, l, by)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep := verifyBytes(t, b); !rep.OK() || rep.Records != 4 {
		t.Fatalf("verify: %d records, problems %v; want 4 records and none", rep.Records, rep.Problems)
	}
	ls := lines(b)
	if bytes.Contains(ls[0], []byte(`"via"`)) || bytes.Contains(ls[0], []byte(`"grant"`)) {
		t.Errorf("a record with no channel writes one: %s", ls[0])
	}
	recs, err := Tail(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{recs[0].Via, recs[2].Via, recs[3].Via, recs[3].Grant}
	want := []any{Channel(""), ChannelApprove, ChannelGrant, &GrantRef{Scope: "session", Via: ChannelApprove, CallID: "call-2"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("channels read back (-want +got):\n%s", d)
	}
	for i, edit := range []struct {
		line     int
		from, to string
	}{
		{2, `"via":"approve"`, `"via":"web+passkey"`},
		{3, `"grant":{"scope":"session","via":"approve"`, `"grant":{"scope":"session","via":"dialog"`},
	} {
		ls := lines(append([]byte(nil), b...))
		if !bytes.Contains(ls[edit.line], []byte(edit.from)) {
			t.Fatalf("edit %d: line %d has no %s: %s", i, edit.line+1, edit.from, ls[edit.line])
		}
		ls[edit.line] = bytes.Replace(ls[edit.line], []byte(edit.from), []byte(edit.to), 1)
		rep := verifyBytes(t, bytes.Join(ls, nil))
		if d := cmp.Diff([]at{{edit.line + 1, ProblemEdited}}, problemsAt(rep)); d != "" {
			t.Errorf("edit %d (%s → %s): problems (-want +got):\n%s", i, edit.from, edit.to, d)
		}
	}
}

// TestChannelWords: every channel is known and has words of its own.
func TestChannelWords(t *testing.T) {
	seen := map[string]Channel{}
	for _, c := range channels {
		if !c.Known() || c.Words() == "" {
			t.Errorf("%q: Known %v, Words %q", c, c.Known(), c.Words())
		}
		if o, dup := seen[c.Words()]; dup && c != ChannelUnknown {
			t.Errorf("%q and %q share the words %q", o, c, c.Words())
		}
		seen[c.Words()] = c
	}
	if Channel("web+nothing").Known() || Channel("").Known() {
		t.Error("an unknown channel is Known")
	}
	if ChannelGrant.Person() || ChannelRule.Person() || ChannelHeadless.Person() || ChannelUnknown.Person() || !ChannelApprove.Person() {
		t.Error("Person: wrong for grant, rule, headless, unknown or approve")
	}
}
