// Package argview shows a call's arguments to a person on a page: every
// value by its path, the shortest first, each cut for the first look with
// the whole of it one click away. The loopback approval page and serve's
// team page draw them alike.
package argview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// Bounds of what is shown at first; the rest of a value is one click away.
const (
	ShownValue   = 300     // bytes of a value shown before "show all"
	maxLeaves    = 2000    // values listed one by one; past it the text is shown whole
	maxLeafDepth = 64      // nesting followed
	maxArgsShown = 2 << 20 // arguments shown whole when they cannot be listed
)

// Arg is one value of the arguments: its path and JSON text, sanitized,
// cut for the first look when long (Short), with the whole of it in Full
// (empty when Short is all of it). A template escapes both for HTML.
type Arg struct {
	Path, Short, Full string
	Size              int
}

// Leaves lists every value of the arguments by its path ("user.name",
// "items[2]"), the shortest first so that a long value cannot push a
// short, decisive one out of sight; each is cut at ShownValue with the
// whole of it one click away. Arguments that are not JSON, nested too
// deep or holding too many values are shown as their whole text, with a
// note saying why.
func Leaves(raw string) ([]Arg, string) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if strings.TrimSpace(raw) == "" {
		return nil, ""
	}
	if dec.Decode(&v) != nil || dec.More() {
		return []Arg{whole(raw)}, "not valid JSON: shown as text"
	}
	found, over := host.ArgLeaves(v, host.ArgLimits{Depth: maxLeafDepth, Values: maxLeaves})
	switch {
	case over.Depth:
		return []Arg{whole(raw)}, "nested deeper than " + strconv.Itoa(maxLeafDepth) + " levels: shown as text"
	case over.Values:
		return []Arg{whole(raw)}, "more than " + strconv.Itoa(maxLeaves) + " values: shown as text"
	}
	out := make([]Arg, 0, len(found))
	for _, l := range found {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the template escapes; the person reads the value as sent
		_ = enc.Encode(l.Value)
		a := cut(sanitize.Line(strings.TrimSuffix(b.String(), "\n")))
		a.Path = sanitize.Line(l.Path)
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(a, b Arg) int {
		return cmp.Or(cmp.Compare(a.Size, b.Size), strings.Compare(a.Path, b.Path))
	})
	return out, ""
}

// whole is the arguments' text as one value.
func whole(raw string) Arg {
	return cut(sanitize.Truncate(sanitize.Text(raw), maxArgsShown))
}

// cut is a value shown up to ShownValue bytes, the whole in Full when it
// is longer.
func cut(s string) Arg {
	a := Arg{Short: s, Size: len(s)}
	if len(s) > ShownValue {
		n := ShownValue
		for n > 0 && !isRuneStart(s[n]) {
			n--
		}
		a.Short, a.Full = s[:n]+"…", s
	}
	return a
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
