package decide

import (
	"bytes"
	"fmt"
	"strings"
)

// pattern is a compiled glob: '*' matches any run of characters (including
// none), '?' matches exactly one character, everything else matches
// itself. Common shapes are matched without the general algorithm.
type pattern struct {
	kind patternKind
	lit  string // the literal part for exact, prefix, suffix and contains; the whole pattern for glob
	litB []byte // lit, for matching bytes without converting
}

type patternKind uint8

const (
	patExact patternKind = iota
	patAny
	patPrefix
	patSuffix
	patContains
	patGlob
)

// globReserved are the characters other glob dialects give a meaning
// ('[' and ']' classes, '{' and '}' alternatives, '\' escapes). This
// glob has none of them, and a pattern that uses one is rejected rather
// than matched literally: a deny rule written as "get_[t]ask" that
// silently matched nothing would let calls through.
const globReserved = "[]{}\\"

// checkGlob reports a pattern this glob cannot match as written: one
// that uses a character of another glob dialect. what names the
// pattern in the error ("the tool pattern \"x\"").
func checkGlob(p, what string) error {
	i := strings.IndexAny(p, globReserved)
	if i < 0 {
		return nil
	}
	return fmt.Errorf("%s contains %q at byte %d: patterns support only '*' (any run of characters) and '?' (exactly one character); "+
		"character classes, braces and escapes are not supported, so write '?' for one character or one rule per name", what, p[i], i+1)
}

func compilePattern(p string) pattern {
	c := shapePattern(p)
	c.litB = []byte(c.lit)
	return c
}

func shapePattern(p string) pattern {
	if !strings.ContainsAny(p, "*?") {
		return pattern{kind: patExact, lit: p}
	}
	if strings.Trim(p, "*") == "" {
		return pattern{kind: patAny}
	}
	if !strings.Contains(p, "?") {
		inner := strings.Trim(p, "*")
		if !strings.Contains(inner, "*") {
			lead := strings.HasPrefix(p, "*")
			trail := strings.HasSuffix(p, "*")
			switch {
			case lead && trail:
				return pattern{kind: patContains, lit: inner}
			case trail:
				return pattern{kind: patPrefix, lit: inner}
			case lead:
				return pattern{kind: patSuffix, lit: inner}
			}
		}
	}
	return pattern{kind: patGlob, lit: p}
}

func (p *pattern) match(s string) bool {
	switch p.kind {
	case patExact:
		return s == p.lit
	case patAny:
		return true
	case patPrefix:
		return strings.HasPrefix(s, p.lit)
	case patSuffix:
		return strings.HasSuffix(s, p.lit)
	case patContains:
		return strings.Contains(s, p.lit)
	}
	return globMatch(p.lit, s)
}

func (p *pattern) matchBytes(s []byte) bool {
	switch p.kind {
	case patExact:
		return string(s) == p.lit
	case patAny:
		return true
	case patPrefix:
		return bytes.HasPrefix(s, p.litB)
	case patSuffix:
		return bytes.HasSuffix(s, p.litB)
	case patContains:
		return bytes.Contains(s, p.litB)
	}
	return globMatch(p.lit, s)
}

// globMatch matches s against a glob pattern. It runs in time proportional
// to len(pat)*len(s) at worst: on a mismatch it only ever retries from the
// most recent '*', moving that star's match one character further.
func globMatch[S ~string | ~[]byte](pat string, s S) bool {
	px, sx := 0, 0
	starPx, starSx := -1, 0
	for px < len(pat) || sx < len(s) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				starPx, starSx = px, sx
				px++
				continue
			case '?':
				if sx < len(s) {
					px++
					sx += runeLen(s[sx], len(s)-sx)
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if starPx >= 0 && starSx < len(s) {
			starSx += runeLen(s[starSx], len(s)-starSx)
			px, sx = starPx+1, starSx
			continue
		}
		return false
	}
	return true
}

// runeLen is the length of the UTF-8 sequence that starts with lead,
// at most rest; invalid bytes count as one character each.
func runeLen(lead byte, rest int) int {
	n := 1
	switch {
	case lead >= 0xF8:
	case lead >= 0xF0:
		n = 4
	case lead >= 0xE0:
		n = 3
	case lead >= 0xC0:
		n = 2
	}
	return min(n, rest)
}
