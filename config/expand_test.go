package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		in      string
		lenient bool
		want    string
		names   []string
		wantErr string
	}{
		{in: "plain", want: "plain"},
		{in: "", want: ""},
		{in: "${TOKEN}", want: "t0k", names: []string{"TOKEN"}},
		{in: "Bearer ${TOKEN}!", want: "Bearer t0k!", names: []string{"TOKEN"}},
		{in: "${HOST}:${TOKEN}", want: "example.com:t0k", names: []string{"HOST", "TOKEN"}},
		{in: "${TOKEN:-x}", want: "t0k", names: []string{"TOKEN"}},
		{in: "${NOPE:-x y}", want: "x y", names: []string{"NOPE"}},
		{in: "${NOPE:-}", want: "", names: []string{"NOPE"}},
		{in: "${EMPTY:-d}", want: "d", names: []string{"EMPTY"}},
		{in: "${NOPE:-a:-b}", want: "a:-b", names: []string{"NOPE"}},
		{in: "$TOKEN $ $$ $(x) `x` ${", wantErr: `unterminated "${"; close it with "}" (write "$${" for a literal "${")`},
		{in: "$TOKEN $ $$ $(x) `x`", want: "$TOKEN $ $$ $(x) `x`"},
		{in: "$${TOKEN}", want: "${TOKEN}"},
		{in: "$$${TOKEN}", want: "$${TOKEN}"}, // "$", then the escape "$${"
		{in: "${NOPE}", wantErr: "environment variable NOPE is not set"},
		{in: "${EMPTY}", wantErr: "environment variable EMPTY is not set"},
		{in: "a ${NOPE} b", lenient: true, want: "a ${NOPE} b", names: []string{"NOPE"}},
		{in: "${}", wantErr: `invalid reference "${}"; write ${NAME} or ${NAME:-default}, where NAME has letters, digits and '_'`},
		{in: "${A-B}", wantErr: `invalid reference "${A-B}"; write ${NAME} or ${NAME:-default}, where NAME has letters, digits and '_'`},
		{in: "${ TOKEN}", wantErr: `invalid reference "${ TOKEN}"; write ${NAME} or ${NAME:-default}, where NAME has letters, digits and '_'`},
		{in: "${NOPE:-${TOKEN}}", wantErr: `a default cannot contain another reference: "${NOPE:-${TOKEN}"`},
		{in: "${_a1}", lenient: true, want: "${_a1}", names: []string{"_a1"}},
	}
	for _, tt := range tests {
		got, names, err := expand(tt.in, testEnv, tt.lenient)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("expand(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("expand(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if diff := cmp.Diff(tt.names, names); diff != "" {
			t.Errorf("expand(%q) names (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestExpandNeverCallsGetenvWithoutBraces(t *testing.T) {
	called := false
	getenv := func(string) string { called = true; return "x" }
	if _, _, err := expand("$HOME $PATH $$ $(id)", getenv, false); err != nil {
		t.Fatal(err)
	}
	if called {
		t.Error("getenv was called for a reference without braces")
	}
}
