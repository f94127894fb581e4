package pgstore

import (
	"testing"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// First sight through any replica pins only a tool no replica pinned; a
// person's SetPin moves a pin for all; an empty part changes nothing.
func TestPinsFirstSightNeverMovesAPin(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, url).Pins(), open(t, url).Pins()
	if b.HasPins("ident") {
		t.Fatal("a new database has pins")
	}
	if err := a.PinNew("ident", map[string]string{"t": "h1", "": "x", "u": ""}); err != nil {
		t.Fatal(err)
	}
	if err := b.PinNew("ident", map[string]string{"t": "h2", "v": "h3"}); err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{"t": "h1", "v": "h3"} {
		if h, ok := b.Pin("ident", tool); !ok || h != want {
			t.Errorf("pin of %s = %q, %v; want %q", tool, h, ok, want)
		}
	}
	if _, ok := a.Pin("ident", "u"); ok {
		t.Error("a tool with no hash was pinned")
	}
	if err := b.SetPin("ident", "t", "h2"); err != nil {
		t.Fatal(err)
	}
	if err := a.SetPin("ident", "t", ""); err != nil {
		t.Fatal(err)
	}
	if h, _ := a.Pin("ident", "t"); h != "h2" || !a.HasPins("ident") || a.HasPins("other") {
		t.Fatalf("after SetPin through B, A has %q; want h2", h)
	}
}

// LookupPin tells a tool with no pin from a database it cannot read.
func TestLookupPinTellsNoPinFromAnUnreadableStore(t *testing.T) {
	s := open(t, pgtest.DB(t))
	p := s.Pins()
	if err := p.SetPin("ident", "tool", "h1"); err != nil {
		t.Fatal(err)
	}
	if h, ok, err := p.LookupPin("ident", "tool"); !ok || err != nil || h != "h1" {
		t.Fatalf("a pinned tool: %q %v %v, want h1", h, ok, err)
	}
	if h, ok, err := p.LookupPin("ident", "never"); ok || err != nil || h != "" {
		t.Fatalf("a tool never pinned: %q %v %v, want no pin and no error", h, ok, err)
	}
	s.Close()
	if h, ok, err := p.LookupPin("ident", "tool"); ok || err == nil {
		t.Fatalf("with the database gone: %q %v %v, want an error", h, ok, err)
	}
}
