// Package termtest holds what the tests of the packages that draw on a
// terminal share: a check that drawn text holds nothing a terminal would
// act on, and the runner of the end-to-end scripts that drive mcphost in tmux.
package termtest

import (
	"fmt"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/sanitize"
)

// Unsafe returns a description of the first thing in out that a terminal
// would act on, other than colour and style sequences (SGR); "" if there is
// none.
func Unsafe(out string) string {
	state := byte(0)
	for s := out; len(s) > 0; {
		seq, width, n, ns := ansi.DecodeSequence(s, state, nil)
		state = ns
		switch {
		case width > 0, seq == "\n", sanitize.IsSGR(seq):
		default:
			r, size := utf8.DecodeRuneInString(seq)
			if size <= 1 || r == utf8.RuneError || sanitize.Unsafe(r) {
				at := len(out) - len(s)
				return fmt.Sprintf("%q at byte %d, in %q", seq, at, out[max(at-40, 0):min(at+40, len(out))])
			}
		}
		s = s[n:]
	}
	return ""
}
