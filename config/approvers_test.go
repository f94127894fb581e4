package config

import (
	"strings"
	"testing"
)

func TestManagedApproverRoutes(t *testing.T) {
	m, err := ParseManaged("f", []byte(`{"approvers": [
  {"tiers": ["T3"], "server": "prod-*", "group": "owners", "fourEyes": true},
  {"tool": "delete_*", "group": "leads"}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		server, tool, tier string
		group              string // "" : no route
		fourEyes           bool
	}{
		{"prod-db", "set_value", "T3", "owners", true},
		{"prod-db", "set_value", "T2", "", false},
		{"dev-db", "set_value", "T3", "", false},
		{"dev-db", "delete_row", "T1", "leads", false},
		{"prod-db", "delete_row", "T3", "owners", true}, // the first route that matches
		{"prod-db", "delete_row", "T2", "leads", false},
		{"dev-db", "undelete_row", "T3", "", false},
	} {
		r := m.ApproverRoute(tc.server, tc.tool, tc.tier)
		switch {
		case tc.group == "" && r != nil:
			t.Errorf("%s/%s at %s is routed to %q, want no route", tc.server, tc.tool, tc.tier, r.Group)
		case tc.group != "" && (r == nil || r.Group != tc.group || r.FourEyes != tc.fourEyes):
			t.Errorf("%s/%s at %s is routed to %+v, want %s (four eyes %v)", tc.server, tc.tool, tc.tier, r, tc.group, tc.fourEyes)
		}
	}
	if r := m.ApproverRoute("prod-db", "x", "T3"); r == nil || r.At != "f:2:3" {
		t.Errorf("the route's place is %+v, want f:2:3", r)
	}
	var none *Managed
	if none.ApproverRoute("prod-db", "x", "T3") != nil {
		t.Error("no managed policy routes a call")
	}
}

func TestManagedApproverErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"approvers": {"group": "owners"}}`, `f:1:15: expected an array for "approvers"`},
		{`{"approvers": [{"server": "prod-*"}]}`, `f:1:16: "approvers"[0] needs a "group"`},
		{`{"approvers": [{"group": ""}]}`, `"group" in "approvers"[0] must be a group name`},
		{`{"approvers": [{"group": "o", "tiers": ["T4"]}]}`, `unknown tier "T4" in "approvers"[0]`},
		{`{"approvers": [{"group": "o", "fourEye": true}]}`, `unknown key "fourEye" in "approvers"[0]; did you mean "fourEyes"?`},
		{`{"approvers": [{"group": "o", "fourEyes": "yes"}]}`, `"fourEyes"`},
	} {
		_, err := ParseManaged("f", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "no call runs until an administrator fixes it") {
			t.Errorf("ParseManaged(%s) = %v, want %q and that it fails closed", tc.data, err, tc.want)
		}
	}
}

// TestUserApproversIgnored: only the managed policy routes approvals; a
// user's own file cannot hand their calls to a group of their choosing.
func TestUserApproversIgnored(t *testing.T) {
	_, warns, err := Parse("c", []byte(`{"approvers": [{"group": "me"}]}`), SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), "only the managed policy routes calls") {
		t.Errorf("warnings %v, want one that says only the managed policy routes calls", warns)
	}
}
