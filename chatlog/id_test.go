package chatlog

import (
	"strings"
	"testing"
)

// An id names a file in the sessions directory and must never leave it.
func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"20261201-120000-cccccc": true,
		"a":                      true,
		"A_b-9":                  true,
		strings.Repeat("a", 64):  true,
		strings.Repeat("a", 65):  false,
		"":                       false,
		"-a":                     false,
		"_a":                     false,
		"../x":                   false,
		"a/b":                    false,
		"a.b":                    false,
		"a b":                    false,
		"é":                      false,
		"a\x00":                  false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}
