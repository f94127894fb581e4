package state

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcphost/mcphost/decide"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// clock returns a clock that starts at t0 and advances a minute per call,
// so that tests can tell which call stamped a record.
func clock() func() time.Time {
	t := t0.Add(-time.Minute)
	return func() time.Time {
		t = t.Add(time.Minute)
		return t
	}
}

func always(server, tool, hash string) decide.Grant {
	return decide.Grant{Scope: decide.ScopeAlways, Server: server, Tool: tool, DefinitionHash: hash}
}

// equalState compares everything a State holds except its clock.
var equalState = cmp.Options{
	cmp.AllowUnexported(State{}, pin{}),
	cmpopts.IgnoreFields(State{}, "now"),
	cmpopts.EquateEmpty(),
}

func TestAddGrant(t *testing.T) {
	s := &State{now: clock()}
	for _, g := range []decide.Grant{always("id2", "b", "h1"), always("id1", "z", "h1"), always("id1", "a", "h1")} {
		if err := s.AddGrant(g, "tasks"); err != nil {
			t.Fatal(err)
		}
	}
	// Same grant again: keeps its time, takes the new name.
	if err := s.AddGrant(always("id1", "a", "h1"), "renamed"); err != nil {
		t.Fatal(err)
	}
	// New definition: replaces the old grant for the tool.
	if err := s.AddGrant(always("id1", "z", "h2"), "tasks"); err != nil {
		t.Fatal(err)
	}
	want := []GrantRecord{
		{Grant: always("id1", "a", "h1"), Name: "renamed", GrantedAt: t0.Add(2 * time.Minute)},
		{Grant: always("id1", "z", "h2"), Name: "tasks", GrantedAt: t0.Add(3 * time.Minute)},
		{Grant: always("id2", "b", "h1"), Name: "tasks", GrantedAt: t0},
	}
	if diff := cmp.Diff(want, s.GrantRecords()); diff != "" {
		t.Errorf("GrantRecords (-want +got):\n%s", diff)
	}
	wantGrants := []decide.Grant{always("id1", "a", "h1"), always("id1", "z", "h2"), always("id2", "b", "h1")}
	if diff := cmp.Diff(wantGrants, s.Grants()); diff != "" {
		t.Errorf("Grants (-want +got):\n%s", diff)
	}
}

func TestAddGrantRefuses(t *testing.T) {
	for name, g := range map[string]decide.Grant{
		"session scope":   {Scope: decide.ScopeSession, Server: "id", Tool: "t", DefinitionHash: "h"},
		"once scope":      {Scope: decide.ScopeOnce, Server: "id", Tool: "t", DefinitionHash: "h", ArgsHash: "a"},
		"args hash":       {Scope: decide.ScopeAlways, Server: "id", Tool: "t", DefinitionHash: "h", ArgsHash: "a"},
		"no server":       {Scope: decide.ScopeAlways, Tool: "t", DefinitionHash: "h"},
		"no tool":         {Scope: decide.ScopeAlways, Server: "id", DefinitionHash: "h"},
		"no definition":   {Scope: decide.ScopeAlways, Server: "id", Tool: "t"},
		"scope past last": {Scope: decide.ScopeAlways + 1, Server: "id", Tool: "t", DefinitionHash: "h"},
	} {
		s := &State{}
		if err := s.AddGrant(g, "x"); err == nil {
			t.Errorf("%s: AddGrant(%+v) = nil, want an error", name, g)
		}
		if len(s.Grants()) != 0 {
			t.Errorf("%s: the refused grant was recorded", name)
		}
	}
}

func TestRevokeGrants(t *testing.T) {
	fill := func() *State {
		s := &State{now: clock()}
		for _, g := range []decide.Grant{always("id1", "a", "h"), always("id1", "b", "h"), always("id2", "a", "h")} {
			if err := s.AddGrant(g, ""); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	for _, tc := range []struct {
		identity, tool string
		want           int
		left           []string
	}{
		{"id1", "a", 1, []string{"id1/b", "id2/a"}},
		{"id1", "", 2, []string{"id2/a"}},
		{"", "a", 2, []string{"id1/b"}},
		{"", "", 3, nil},
		{"id3", "", 0, []string{"id1/a", "id1/b", "id2/a"}},
		{"id1", "c", 0, []string{"id1/a", "id1/b", "id2/a"}},
	} {
		s := fill()
		if got := s.RevokeGrants(tc.identity, tc.tool); got != tc.want {
			t.Errorf("RevokeGrants(%q, %q) = %d, want %d", tc.identity, tc.tool, got, tc.want)
		}
		var left []string
		for _, g := range s.Grants() {
			left = append(left, g.Server+"/"+g.Tool)
		}
		if diff := cmp.Diff(tc.left, left); diff != "" {
			t.Errorf("RevokeGrants(%q, %q) left (-want +got):\n%s", tc.identity, tc.tool, diff)
		}
	}
}

// The state stores grants; decide applies them. This checks that what the
// state hands over is bound to the definition hash it was given.
func TestGrantIsBoundToDefinition(t *testing.T) {
	s := &State{now: clock()}
	if err := s.AddGrant(always("id1", "delete_task", "h1"), "tasks"); err != nil {
		t.Fatal(err)
	}
	policy, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		t.Fatal(err)
	}
	call := func(hash string) decide.Decision {
		return policy.Decide(decide.Input{
			Server: decide.Server{Name: "tasks", Identity: "id1", Trusted: true},
			Tool: decide.Tool{
				Name: "delete_task", Present: true,
				Declared:       decide.Hints{ReadOnly: decide.False, Destructive: decide.True, OpenWorld: decide.False},
				DefinitionHash: hash, PinnedHash: hash,
			},
			Session: decide.Session{Grants: s.Grants()},
			Mode:    decide.Interactive,
		})
	}
	if d := call("h1"); d.Verdict != decide.Allow || d.Grant == nil {
		t.Errorf("same definition: verdict %v, grant %v; want allow by the grant", d.Verdict, d.Grant)
	}
	if d := call("h2"); d.Verdict != decide.Ask || d.Grant != nil {
		t.Errorf("other definition: verdict %v, grant %v; want ask without a grant", d.Verdict, d.Grant)
	}
}

func TestTrust(t *testing.T) {
	s := &State{now: clock()}
	if s.Trusted("id1") {
		t.Error("empty state trusts id1")
	}
	s.SetTrust("id1", "tasks", true)
	s.SetTrust("id1", "tasks2", true) // already trusted: keeps the time
	s.SetTrust("id2", "other", true)
	s.SetTrust("id2", "other", false)
	s.SetTrust("", "nobody", true)
	if !s.Trusted("id1") || s.Trusted("id2") || s.Trusted("") {
		t.Errorf("Trusted: id1 %v, id2 %v, empty %v; want true, false, false", s.Trusted("id1"), s.Trusted("id2"), s.Trusted(""))
	}
	want := []TrustRecord{{Identity: "id1", Name: "tasks2", TrustedAt: t0}}
	if diff := cmp.Diff(want, s.TrustRecords()); diff != "" {
		t.Errorf("TrustRecords (-want +got):\n%s", diff)
	}
}

func TestPins(t *testing.T) {
	s := &State{now: clock()}
	if _, ok := s.Pin("id1", "a"); ok {
		t.Error("empty state has a pin")
	}

	// First sight pins everything and reports nothing.
	if got := s.PinNew("id1", map[string]string{"a": "ha", "b": "hb", "": "x", "empty": ""}); got != nil {
		t.Errorf("first sight: PinNew = %v, want nil", got)
	}
	for tool, want := range map[string]string{"a": "ha", "b": "hb"} {
		if got, ok := s.Pin("id1", tool); !ok || got != want {
			t.Errorf("Pin(id1, %s) = %q, %v; want %q, true", tool, got, ok, want)
		}
	}
	for _, tool := range []string{"", "empty"} {
		if _, ok := s.Pin("id1", tool); ok {
			t.Errorf("Pin(id1, %q) exists; empty names and hashes must not be pinned", tool)
		}
	}

	// Unchanged: nothing to report, pins and their times stay.
	before := s.pins["id1"]["a"]
	if got := s.PinNew("id1", map[string]string{"a": "ha", "b": "hb"}); got != nil {
		t.Errorf("unchanged: PinNew = %v, want nil", got)
	}
	if s.pins["id1"]["a"] != before {
		t.Errorf("unchanged: pin became %+v, want %+v", s.pins["id1"]["a"], before)
	}

	// Changed: reported, sorted, and not re-pinned; a new tool beside them is pinned.
	got := s.PinNew("id1", map[string]string{"b": "hb2", "a": "ha2", "c": "hc"})
	want := []PinChange{{Tool: "a", Pinned: "ha", Current: "ha2"}, {Tool: "b", Pinned: "hb", Current: "hb2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changed: PinNew (-want +got):\n%s", diff)
	}
	if h, _ := s.Pin("id1", "a"); h != "ha" {
		t.Errorf("changed: Pin(id1, a) = %q, want the old %q until a person accepts", h, "ha")
	}
	if h, _ := s.Pin("id1", "c"); h != "hc" {
		t.Errorf("new tool beside changed ones: Pin(id1, c) = %q, want %q", h, "hc")
	}

	// A person accepts one change.
	s.SetPin("id1", "a", "ha2")
	got = s.PinNew("id1", map[string]string{"b": "hb2", "a": "ha2"})
	want = []PinChange{{Tool: "b", Pinned: "hb", Current: "hb2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after accepting a: PinNew (-want +got):\n%s", diff)
	}

	// Pins belong to one server identity.
	if got := s.PinNew("id2", map[string]string{"a": "other"}); got != nil {
		t.Errorf("other server: PinNew = %v, want nil", got)
	}
	if h, _ := s.Pin("id1", "a"); h != "ha2" {
		t.Errorf("other server changed id1's pin to %q", h)
	}

	// Empty arguments change nothing.
	s.SetPin("id1", "a", "")
	s.SetPin("", "a", "x")
	if h, _ := s.Pin("id1", "a"); h != "ha2" {
		t.Errorf("SetPin with an empty hash changed the pin to %q", h)
	}
	if _, ok := s.Pin("", "a"); ok {
		t.Error("SetPin with an empty identity pinned something")
	}
}

func TestConsent(t *testing.T) {
	s := &State{now: clock()}
	if _, ok := s.Consent("db", "h1"); ok {
		t.Error("empty state has a consent")
	}
	s.SetConsent("db", "h1", ChoiceTrusted)
	s.SetConsent("db", "h1", ChoiceTrusted) // the same again: keeps the time
	s.SetConsent("", "h1", ChoiceTrusted)
	s.SetConsent("x", "", ChoiceTrusted)

	c, ok := s.Consent("db", "h1")
	want := Consent{Name: "db", Hash: "h1", Choice: ChoiceTrusted, ChosenAt: t0}
	if !ok || c != want {
		t.Errorf("Consent(db, h1) = %+v, %v; want %+v, true", c, ok, want)
	}
	// A changed command, environment or header: the old choice no longer applies.
	c, ok = s.Consent("db", "h2")
	if ok || c != want {
		t.Errorf("Consent(db, h2) = %+v, %v; want the old record %+v with false", c, ok, want)
	}
	if _, ok := s.Consent("db", ""); ok {
		t.Error(`Consent(db, "") applies`)
	}
	if len(s.consents) != 1 {
		t.Errorf("consents with an empty name or hash were recorded: %v", s.consents)
	}

	s.SetConsent("db", "h2", ChoiceSkipped)
	if c, ok := s.Consent("db", "h2"); !ok || c.Choice != ChoiceSkipped || !c.ChosenAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("after a new choice: Consent(db, h2) = %+v, %v", c, ok)
	}
	if _, ok := s.Consent("db", "h1"); ok {
		t.Error("the choice for the old hash still applies")
	}
}

func TestForgetConsent(t *testing.T) {
	s := &State{now: clock()}
	s.SetConsent("b#lint", "h1", ChoiceTrusted)
	s.SetConsent("a#db", "h2", ChoiceUntrusted)
	got := s.ConsentRecords()
	if len(got) != 2 || got[0].Name != "a#db" || got[1].Name != "b#lint" {
		t.Fatalf("ConsentRecords() = %+v, want a#db then b#lint", got)
	}
	if !s.ForgetConsent("b#lint") {
		t.Error("ForgetConsent(b#lint) = false, want true")
	}
	if s.ForgetConsent("b#lint") {
		t.Error("ForgetConsent(b#lint) a second time = true, want false")
	}
	if _, ok := s.Consent("b#lint", "h1"); ok {
		t.Error("a forgotten consent still applies")
	}
	if got := s.ConsentRecords(); len(got) != 1 || got[0].Name != "a#db" {
		t.Errorf("after ForgetConsent: ConsentRecords() = %+v, want only a#db", got)
	}
}

func TestUntrust(t *testing.T) {
	s := &State{now: clock()}
	s.SetTrust("id-now", "tasks", true)
	s.SetTrust("id-old", "tasks", true) // the command it had before
	s.SetTrust("id-other", "other", true)
	s.SetConsent("p#lint", "h", ChoiceTrusted)
	s.SetConsent("p#db", "h", ChoiceUntrusted)

	if n, c := s.Untrust("id-now", "tasks", ""); n != 2 || c {
		t.Errorf("Untrust(tasks) = %d, %v; want 2, false", n, c)
	}
	if s.Trusted("id-now") || s.Trusted("id-old") || !s.Trusted("id-other") {
		t.Errorf("after Untrust(tasks): trust = %+v, want only id-other", s.TrustRecords())
	}
	if n, c := s.Untrust("", "lint", "p#lint"); n != 0 || !c {
		t.Errorf("Untrust(lint) = %d, %v; want 0, true", n, c)
	}
	if c, ok := s.Consent("p#lint", "h"); !ok || c.Choice != ChoiceUntrusted {
		t.Errorf("after Untrust(lint): consent = %+v, %v; want untrusted and still in force", c, ok)
	}
	if _, c := s.Untrust("", "db", "p#db"); c {
		t.Error("Untrust changed a consent that did not trust")
	}
	if n, c := s.Untrust("", "", ""); n != 0 || c {
		t.Errorf("Untrust with nothing named = %d, %v; want 0, false", n, c)
	}
}

func TestChoiceText(t *testing.T) {
	for c := ChoiceSkipped; c <= ChoiceTrusted; c++ {
		b, err := c.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Choice
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("Choice %v: text %q decodes to %v, %v", c, b, back, err)
		}
	}
	if _, err := Choice(9).MarshalText(); err == nil {
		t.Error("Choice(9).MarshalText succeeded")
	}
	var c Choice
	if err := c.UnmarshalText([]byte("Trusted")); err == nil {
		t.Error(`UnmarshalText("Trusted") succeeded; choices are lower case`)
	}
	if ChoiceSkipped != 0 {
		t.Error("the zero Choice must be the most restrictive, skipped")
	}
}

func TestStampIsUTCSeconds(t *testing.T) {
	loc := time.FixedZone("X", 3*3600)
	s := &State{now: func() time.Time { return time.Date(2026, 5, 1, 13, 0, 0, 999, loc) }}
	s.SetTrust("id", "n", true)
	if got := s.trust["id"].TrustedAt; got != t0 {
		t.Errorf("TrustedAt = %v, want %v", got, t0)
	}
}

// The JSON names of the grant fields must stay those of decide.Grant.
func TestGrantFieldsMatchDecide(t *testing.T) {
	b, err := json.Marshal(decide.Grant{Scope: decide.ScopeAlways, Server: "s", Tool: "t", DefinitionHash: "d", ArgsHash: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var fromDecide map[string]string
	if err := json.Unmarshal(b, &fromDecide); err != nil {
		t.Fatal(err)
	}
	b, err = json.Marshal(wireGrant{Scope: "always", Server: "s", Tool: "t", DefinitionHash: "d", ArgsHash: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var ours map[string]string
	if err := json.Unmarshal(b, &ours); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromDecide, ours); diff != "" {
		t.Errorf("grant fields (-decide +state):\n%s", diff)
	}
	if !strings.Contains(string(b), `"scope":"always"`) {
		t.Errorf("wire grant %s lacks the scope", b)
	}
}

// TestGrantViaRoundTrips: the channel an always grant was given through is
// kept in the file, so that the calls it lets run in a later session name
// it; a grant written without one reads back without one.
func TestGrantViaRoundTrips(t *testing.T) {
	s := &State{now: clock()}
	g := always("id1", "a", "h1")
	g.Via = "approve"
	if err := s.AddGrant(g, "tasks"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddGrant(always("id1", "b", "h1"), "tasks"); err != nil {
		t.Fatal(err)
	}
	b, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"via": "approve"`) {
		t.Errorf("the file lacks the grant's channel:\n%s", b)
	}
	back, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []decide.Grant{g, always("id1", "b", "h1")}
	if diff := cmp.Diff(want, back.Grants()); diff != "" {
		t.Errorf("grants read back (-want +got):\n%s", diff)
	}
}
