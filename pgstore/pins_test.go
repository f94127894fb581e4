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
