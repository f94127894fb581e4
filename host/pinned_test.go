package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
)

// The definitions kept for a server are the ones its pins in the state
// file are hashes of, and only those are handed out: a tool whose pin
// moved since (another process accepted a change) is not, an untrusted
// server's tools (pinned for the run only) are not kept, and a later
// process reads them from the file.
func TestPinnedHandsOutOnlyWhatThePinsAreOf(t *testing.T) {
	hashA, hashB, hashX, hashA2 := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64), strings.Repeat("d", 64)
	dir := t.TempDir()
	state, defsPath := filepath.Join(dir, "state.json"), filepath.Join(dir, "definitions.json")
	store, err := OpenStateStore(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPins(store)
	p.KeepDefinitions(NewDefinitions(defsPath))
	a := &client.Tool{Server: "s", Name: "a", Description: "A.", Hash: hashA}
	b := &client.Tool{Server: "s", Name: "b", Description: "B.", Hash: hashB}
	p.Listed("ident", true, []*client.Tool{a, b})
	p.Listed("other", false, []*client.Tool{{Server: "o", Name: "x", Hash: hashX}})

	// The next process.
	store, err = OpenStateStore(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetPin("ident", "b", "b-accepted-elsewhere"); err != nil {
		t.Fatal(err)
	}
	next := NewPins(store)
	next.KeepDefinitions(NewDefinitions(defsPath))
	got := next.Pinned("ident")
	if len(got) != 1 || got[0].Name != "a" || got[0].Description != "A." || got[0].Hash != hashA || got[0].Server != "" {
		t.Fatalf("Pinned: %+v; want tool a alone, as pinned", got)
	}
	if got := next.Pinned("other"); len(got) != 0 {
		t.Fatalf("an untrusted server's tools were kept: %+v", got)
	}

	// A later listing with a changed a keeps the pinned definition of a.
	next.Listed("ident", true, []*client.Tool{{Server: "s", Name: "a", Description: "A, changed.", Hash: hashA2}})
	if got := next.Pinned("ident"); len(got) != 1 || got[0].Description != "A." {
		t.Fatalf("after a listing that changed a: %+v; want a as pinned", got)
	}
	fi, err := os.Stat(defsPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the definitions file has mode %v; want it private", fi.Mode().Perm())
	}
}

// A pin a person moves keeps its new definition, and the definitions kept
// for the server's other tools stay.
func TestPinnedKeepsTheOthersWhenAPinMoves(t *testing.T) {
	hashA, hashB, hashA2 := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("d", 64)
	store, err := OpenStateStore(filepath.Join(t.TempDir(), "state.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPins(store)
	p.KeepDefinitions(NewDefinitions(filepath.Join(t.TempDir(), "definitions.json")))
	p.Listed("ident", true, []*client.Tool{{Server: "s", Name: "a", Hash: hashA}, {Server: "s", Name: "b", Hash: hashB}})
	p.Set("ident", &client.Tool{Server: "s", Name: "a", Description: "A, accepted.", Hash: hashA2}, true)
	got := p.Pinned("ident")
	if len(got) != 2 || got[0].Name != "a" || got[0].Hash != hashA2 || got[1].Name != "b" || got[1].Hash != hashB {
		t.Fatalf("Pinned after a's pin moved: %+v; want a as accepted and b", got)
	}
}
