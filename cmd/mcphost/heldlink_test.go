package main

import (
	"strings"
	"testing"
)

// The refusal of a held call names the approval page without the secret
// of its link: the client and its model read that text, and whoever has
// the secret can answer on the page.
func TestHeldLinkNeverCarriesThePagesSecret(t *testing.T) {
	link := heldLink(func() string { return "http://127.0.0.1:8377/open?k=c2VjcmV0LW9mLXRoZS1wYWdl" })
	got := link("a-17")
	if got != "http://127.0.0.1:8377/#a-17" {
		t.Fatalf("held call's link is %q, want the page's address and the call's id", got)
	}
	if strings.Contains(got, "c2VjcmV0") || strings.Contains(got, "k=") {
		t.Fatalf("held call's link %q carries the page's secret", got)
	}
	if got := heldLink(func() string { return "" })("a-1"); got != "" {
		t.Fatalf("with no page the link is %q, want none", got)
	}
}
