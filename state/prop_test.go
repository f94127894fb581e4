package state

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/decide"
	"pgregory.net/rapid"
)

// Any sequence of changes encodes to a file that decodes to the same state
// and encodes to the same bytes again, and the grant invariants hold.
func TestEncodeDecodeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Few distinct values, so that operations meet the same records;
		// some of them need escaping in JSON.
		str := rapid.SampledFrom([]string{"", "a", "b", "<&>", "quo\"te", "é\n", "\x00", "\u2028"})
		hash := rapid.SampledFrom([]string{"", "h1", "h2"})
		secs := rapid.Int64Range(0, 4e9) // 1970 to 2096
		s := &State{now: func() time.Time { return time.Unix(secs.Draw(t, "now"), 0) }}

		for range rapid.IntRange(0, 30).Draw(t, "ops") {
			id, tool, h := str.Draw(t, "id"), str.Draw(t, "tool"), hash.Draw(t, "hash")
			switch rapid.IntRange(0, 6).Draw(t, "op") {
			case 0:
				_ = s.AddGrant(always(id, tool, h), str.Draw(t, "name")) // invalid grants are refused
			case 1:
				s.RevokeGrants(id, tool)
			case 2:
				s.SetTrust(id, str.Draw(t, "name"), rapid.Bool().Draw(t, "on"))
			case 3:
				s.SetPin(id, tool, h)
			case 4:
				s.PinNew(id, map[string]string{tool: h, str.Draw(t, "tool2"): hash.Draw(t, "hash2")})
			case 5:
				s.SetConsent(id, h, Choice(rapid.IntRange(0, 2).Draw(t, "choice")))
			case 6:
				if k := str.Draw(t, "extra"); !isKnown(k) {
					if s.extra == nil {
						s.extra = map[string]json.RawMessage{}
					}
					s.extra[k] = []byte(`{"x": [1, "<y>"]}`)
				}
			}
		}

		gs := s.Grants()
		if !slices.IsSortedFunc(gs, func(a, b decide.Grant) int {
			return strings.Compare(a.Server+"\x00"+a.Tool, b.Server+"\x00"+b.Tool)
		}) {
			t.Fatalf("grants not sorted: %v", gs)
		}
		for i := 1; i < len(gs); i++ {
			if gs[i-1].Server == gs[i].Server && gs[i-1].Tool == gs[i].Tool {
				t.Fatalf("two grants for %s/%s", gs[i].Server, gs[i].Tool)
			}
		}

		data, err := s.encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := decode(data)
		if err != nil {
			t.Fatalf("decode of our own output: %v\n%s", err, data)
		}
		// Unknown values come back re-indented.
		compact := cmp.Transformer("compact", func(r json.RawMessage) string {
			var b bytes.Buffer
			if err := json.Compact(&b, r); err != nil {
				return "invalid: " + string(r)
			}
			return b.String()
		})
		if diff := cmp.Diff(s, back, equalState, compact); diff != "" {
			t.Fatalf("decoded state (-encoded +decoded):\n%s\nfile:\n%s", diff, data)
		}
		again, err := back.encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, again) {
			t.Fatalf("encoding is not stable:\n%s\nthen\n%s", data, again)
		}
	})
}
