package decide

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcphost/mcphost/decide/jsonscan"
)

// argsView is a call's arguments, checked once per decision.
type argsView struct {
	raw    []byte
	start  int  // offset of the top-level object
	valid  bool // empty, null, or a valid JSON object
	object bool // a JSON object with possibly some members

	// The top-level members, indexed on first use so that conditions do
	// not each skip over large values again. When there are more than fit,
	// conditions walk the object instead.
	indexed bool
	ntop    int
	top     [16]topMember

	// nameSkel is the tool name's Skeleton, set by Decide: deny and ask
	// rules match it as well as the raw name.
	nameSkel string
	// poisoned is set by Decide when the tool's description gives the
	// model orders (PoisonFlags): no allow rule applies then.
	poisoned bool
}

type topMember struct{ ks, ke, vs int }

func (a *argsView) index() {
	a.indexed = true
	it := jsonscan.NewMembers(a.raw, a.start)
	for {
		k, vs, _, ok := it.Next()
		if !ok {
			return
		}
		if a.ntop == len(a.top) {
			a.ntop = -1
			return
		}
		a.top[a.ntop] = topMember{it.KeyStart(), it.KeyStart() + len(k), vs}
		a.ntop++
	}
}

func viewArgs(a json.RawMessage) argsView {
	b := []byte(a)
	i := jsonscan.SkipSpace(b, 0)
	if i == len(b) {
		return argsView{valid: true}
	}
	if !jsonscan.Valid(b) {
		return argsView{raw: b}
	}
	switch b[i] {
	case '{':
		return argsView{raw: b, start: i, valid: true, object: true}
	case 'n':
		return argsView{valid: true}
	}
	return argsView{raw: b}
}

// argCond is one condition on an argument: the values found at a dotted
// path must satisfy every operator.
type argCond struct {
	path  []string
	index []int // the segment as an array index, or -1

	hasEq  bool
	eqKind byte // '"' string, 'n' number, 'l' true/false/null, 'c' object or array
	eqText string
	eqNum  float64
	eqInt  bool // eqText is an integer literal

	hasPrefix bool
	prefix    string
	hasGlob   bool
	glob      pattern

	expand bool // an array found at the path is tested element by element
}

var opFields = []string{"equals", "prefix", "glob"}

func (r *rule) setArgs(val []byte) error {
	if len(val) == 0 || val[0] != '{' {
		return fmt.Errorf(`"args" must be an object mapping argument paths to conditions, such as {"path": {"prefix": "/srv/"}}, not %s`, val)
	}
	twice := func(p string) error { return fmt.Errorf("argument path %q appears twice", p) }
	err := ruleMembers(val, twice, func(p string, v []byte) error {
		c, err := parseArgCond(p, v)
		if err != nil {
			return err
		}
		r.args = append(r.args, c)
		return nil
	})
	if err != nil {
		return err
	}
	if len(r.args) == 0 {
		return errors.New(`"args" is empty`)
	}
	return nil
}

func parseArgCond(p string, val []byte) (argCond, error) {
	var c argCond
	if p == "" {
		return c, errors.New("an argument path is empty")
	}
	c.path = strings.Split(p, ".")
	if len(c.path) > 16 {
		return c, fmt.Errorf("argument path %q has more than 16 parts", p)
	}
	for _, s := range c.path {
		if s == "" {
			return c, fmt.Errorf("argument path %q has an empty part; write parts separated by single dots, such as \"options.recursive\"", p)
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || strconv.Itoa(n) != s {
			n = -1
		}
		c.index = append(c.index, n)
	}
	if len(val) == 0 || val[0] != '{' {
		return c, fmt.Errorf(`the condition on %q must be an object with %s, such as {"prefix": "/srv/"}, not %s`, p, quoteList(opFields), val)
	}
	twice := func(op string) error { return fmt.Errorf("%q appears twice in the condition on %q", op, p) }
	err := ruleMembers(val, twice, func(op string, v []byte) error {
		switch op {
		case "equals":
			c.hasEq = true
			canon, _ := Canonical(v)
			c.eqText = string(canon)
			switch v[0] {
			case '"':
				c.eqKind = '"'
				c.eqText = jsonscan.UnescapeString(v[1 : len(v)-1])
			case '{', '[':
				c.eqKind = 'c'
			case 't', 'f', 'n':
				c.eqKind = 'l'
			default:
				c.eqKind = 'n'
				c.eqNum, _ = strconv.ParseFloat(c.eqText, 64)
				c.eqInt = isIntLiteral(canon)
			}
		case "prefix", "glob":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("%q on %q must be a string, not %s", op, p, v)
			}
			if s == "" {
				return fmt.Errorf("%q on %q is empty", op, p)
			}
			if op == "glob" {
				if err := checkGlob(s, fmt.Sprintf("the glob %q on %q", s, p)); err != nil {
					return err
				}
			}
			if op == "prefix" {
				c.hasPrefix, c.prefix = true, s
			} else {
				c.hasGlob, c.glob = true, compilePattern(s)
			}
		default:
			return fmt.Errorf("unknown operator %q in the condition on %q (known: %s)", op, p, quoteList(opFields))
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	if !c.hasEq && !c.hasPrefix && !c.hasGlob {
		return c, fmt.Errorf("the condition on %q is empty; give it one of %s", p, quoteList(opFields))
	}
	c.expand = !(c.eqKind == 'c' && v0(c.eqText) == '[')
	return c, nil
}

// v0 returns the first byte of s, or 0.
func v0(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// argState accumulates the values a condition found.
type argState struct {
	found int
	any   bool // some value satisfied the condition
	all   bool // every value satisfied it
}

// eval reports whether the condition holds for a rule with effect eff.
// Deny and ask rules need some value at the path to satisfy it; allow rules
// need at least one value and every value to satisfy it, so duplicate keys,
// keys that differ only in case, and arrays cannot smuggle in a second
// value. Arguments that cannot be read satisfy deny and ask conditions and
// fail allow conditions.
func (c *argCond) eval(a *argsView, eff Verdict) bool {
	if !a.valid {
		return eff != Allow
	}
	if !a.object {
		return false
	}
	st := argState{all: true}
	if !a.indexed {
		a.index()
	}
	if a.ntop < 0 {
		c.walk(a.raw, a.start, 0, eff, &st)
	} else {
		for _, m := range a.top[:a.ntop] {
			if keyMatches(a.raw[m.ks:m.ke], c.path[0]) {
				c.walk(a.raw, m.vs, 1, eff, &st)
			}
		}
	}
	if eff == Allow {
		return st.found > 0 && st.all
	}
	return st.any
}

// walk visits the values at c.path[seg:] under the value at b[i]. A name
// part that meets an array applies to its elements, one level deep: an
// array of arrays is not flattened, which keeps the walk linear in the
// size of the arguments.
func (c *argCond) walk(b []byte, i, seg int, eff Verdict, st *argState) {
	c.walkIn(b, i, seg, false, eff, st)
}

func (c *argCond) walkIn(b []byte, i, seg int, inArray bool, eff Verdict, st *argState) {
	i = jsonscan.SkipSpace(b, i)
	if i >= len(b) {
		return
	}
	if seg == len(c.path) {
		if b[i] == '[' && c.expand {
			it := jsonscan.NewElements(b, i)
			for {
				vs, ve, ok := it.Next()
				if !ok {
					break
				}
				c.test(b[vs:ve], eff, st)
			}
			return
		}
		c.test(b[i:jsonscan.SkipValue(b, i)], eff, st)
		return
	}
	switch b[i] {
	case '{':
		it := jsonscan.NewMembers(b, i)
		for {
			k, vs, _, ok := it.Next()
			if !ok {
				break
			}
			if keyMatches(k, c.path[seg]) {
				c.walkIn(b, vs, seg+1, false, eff, st)
			}
		}
	case '[':
		it := jsonscan.NewElements(b, i)
		for n := 0; ; n++ {
			vs, _, ok := it.Next()
			if !ok {
				break
			}
			switch idx := c.index[seg]; {
			case idx < 0 && !inArray:
				c.walkIn(b, vs, seg, true, eff, st) // a name applies to every element
			case idx == n:
				c.walkIn(b, vs, seg+1, false, eff, st)
			}
		}
	}
}

// keyMatches compares a raw object key with a path segment, ignoring case
// as Go's encoding/json does when it fills a struct, so that a server
// written in Go cannot be handed a differently cased key the rule misses.
func keyMatches(raw []byte, seg string) bool {
	if hasByte(raw, '\\') {
		var buf [64]byte
		return foldEqual(jsonscan.Unescape(buf[:0], raw), seg)
	}
	return foldEqual(raw, seg)
}

func (c *argCond) test(v []byte, eff Verdict, st *argState) {
	st.found++
	if c.holds(v, eff) {
		st.any = true
	} else {
		st.all = false
	}
}

// holds tests one value. A string that contains '/' and is not a clean
// path is also tested in its cleaned form ("/srv/../etc" as "/etc"): deny
// and ask rules match if either form satisfies the condition, allow rules
// only if both do.
func (c *argCond) holds(v []byte, eff Verdict) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == '"' {
		s := v[1:max(1, len(v)-1)]
		escaped, slash := false, false
		for _, b := range s {
			switch b {
			case '\\':
				escaped = true
			case '/':
				slash = true
			}
		}
		var buf [256]byte
		if escaped {
			s = jsonscan.Unescape(buf[:0], s)
			slash = hasByte(s, '/')
		}
		ok := c.stringHolds(s)
		if slash && !isCleanPath(s) {
			okClean := c.stringHolds([]byte(path.Clean(string(s))))
			if eff == Allow {
				return ok && okClean
			}
			return ok || okClean
		}
		return ok
	}
	if c.hasPrefix || c.hasGlob {
		return false
	}
	switch c.eqKind {
	case 'n':
		return (v[0] == '-' || isDigit(v[0])) && c.numberEquals(v)
	case 'l':
		return string(v) == c.eqText
	case 'c':
		if v[0] != '{' && v[0] != '[' {
			return false
		}
		canon, err := Canonical(v)
		return err == nil && string(canon) == c.eqText
	}
	return false
}

func (c *argCond) stringHolds(s []byte) bool {
	if c.hasEq && (c.eqKind != '"' || string(s) != c.eqText) {
		return false
	}
	if c.hasPrefix && (len(s) < len(c.prefix) || string(s[:len(c.prefix)]) != c.prefix) {
		return false
	}
	if c.hasGlob && !c.glob.matchBytes(s) {
		return false
	}
	return true
}

// numberEquals compares numbers by value. Integers are compared exactly,
// so that two large identifiers that round to the same float stay apart.
func (c *argCond) numberEquals(v []byte) bool {
	if string(v) == c.eqText {
		return true
	}
	if c.eqInt && isIntLiteral(v) {
		return isZeroInt(v) && isZeroInt([]byte(c.eqText))
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return err == nil && f == c.eqNum
}

func isIntLiteral(b []byte) bool {
	for _, c := range b {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return len(b) > 0
}

func isZeroInt(b []byte) bool { return string(b) == "0" || string(b) == "-0" }

// isCleanPath reports whether path.Clean would return s unchanged.
func isCleanPath(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	if len(s) == 1 {
		return true
	}
	if s[len(s)-1] == '/' {
		return false
	}
	rooted := s[0] == '/'
	i := 0
	if rooted {
		i = 1
	}
	leadingDots := true // only ".." parts so far
	for i <= len(s) {
		j := i
		for j < len(s) && s[j] != '/' {
			j++
		}
		part := s[i:j]
		switch string(part) {
		case "", ".":
			return false
		case "..":
			if rooted || !leadingDots {
				return false
			}
		default:
			leadingDots = false
		}
		i = j + 1
	}
	return true
}

// foldEqual reports whether a and b are equal under simple Unicode case
// folding.
func foldEqual(a []byte, b string) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		if lowerASCII(rune(a[i])) != lowerASCII(rune(b[i])) {
			return false
		}
		i++
	}
	a, b = a[i:], b[i:]
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRune(a)
		rb, nb := utf8.DecodeRuneInString(b)
		a, b = a[na:], b[nb:]
		if ra == rb {
			continue
		}
		if ra < 0x80 && rb < 0x80 {
			if lowerASCII(ra) != lowerASCII(rb) {
				return false
			}
			continue
		}
		if !sameFoldOrbit(ra, rb) {
			return false
		}
	}
	return len(a) == 0 && len(b) == 0
}

// Home returns the home directory the policy expands "~" and $HOME with,
// cleaned, or "".
func (p *Policy) Home() string {
	if p == nil {
		return ""
	}
	return p.home
}

// ProtectsPaths reports whether the policy has protected paths, so that a
// host can skip finding where arguments lead when nothing is protected.
func (p *Policy) ProtectsPaths() bool { return p != nil && len(p.prot) > 0 }

// maxPathLen bounds the relative strings resolved against Input.Bases:
// longer ones, once cleaned, name no file the system would open.
const maxPathLen = 4096

// protScan is one protected-path check: the policy, the directories
// relative paths are resolved against, and whether the call is a read.
type protScan struct {
	p     *Policy
	bases []string
	read  bool // only paths at or inside a protected one count, not their ancestors
}

// protects reports whether the call's arguments lead to a protected path:
// some string in valid arguments, object keys included, or a word of one,
// names a protected path (or, unless read is set, a directory that holds
// one) as an absolute path, after "~" or $HOME expansion, or as a
// relative path joined with one of in.Bases; or one of in.Paths, the
// places the host found the arguments lead to, does.
func (p *Policy) protects(a *argsView, in *Input, read bool) bool {
	if len(p.prot) == 0 || !a.valid {
		return false
	}
	sc := protScan{p: p, bases: in.Bases, read: read}
	for _, q := range in.Paths {
		if len(q) > 0 && q[0] == '/' && sc.pathTouches([]byte(q)) {
			return true
		}
	}
	b := a.raw
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		// One quick pass finds the end of the string and whether a word
		// in it could name a path at all; most strings stop here.
		j, mark, decode, escaped := i+1, false, false, false
	scan:
		for j < len(b) {
			switch scanClass[b[j]] {
			case scanOther:
				j++
			case scanMark:
				mark = true
				j++
			case scanQuote:
				break scan
			case scanEscape:
				escaped = true
				if j+1 < len(b) && (b[j+1] == 'u' || b[j+1] == '/' || b[j+1] == '\\') {
					decode = true
				}
				j += 2
			}
		}
		content := b[i+1 : min(j, len(b))]
		var buf [256]byte
		whole := content // the decoded string, where it is needed
		if escaped && (decode || len(sc.bases) > 0) {
			whole = jsonscan.Unescape(buf[:0], content)
		}
		switch {
		case decode:
			if sc.wordsTouch(whole, false) {
				return true
			}
		case mark:
			if sc.wordsTouch(content, true) {
				return true
			}
		}
		if sc.relativeTouches(whole) {
			return true
		}
		i = j
	}
	return false
}

// relativeTouches checks a whole string as a relative path, joined with
// each base: "notes.txt" and "../x" as a server would resolve them.
func (sc *protScan) relativeTouches(s []byte) bool {
	if len(sc.bases) == 0 || len(s) == 0 || s[0] == '/' || s[0] == '\\' {
		return false
	}
	str := string(s)
	if hasByte(s, '\\') {
		str = strings.ReplaceAll(str, `\`, "/")
	}
	rel := path.Clean(str)
	if len(rel) > maxPathLen || rel[0] == '/' {
		return false
	}
	for _, base := range sc.bases {
		if len(base) > 0 && base[0] == '/' && sc.pathTouches([]byte(path.Join(base, rel))) {
			return true
		}
	}
	return false
}

// wordsTouch splits s into words and checks each word that could name a
// path. With raw set, s is undecoded JSON string content without escapes
// that could hide a path character; its simple escapes (\n, \", \b, ...)
// separate words, as the characters they stand for do.
func (sc *protScan) wordsTouch(s []byte, raw bool) bool {
	start, mark := -1, false
	for j := 0; j <= len(s); j++ {
		var sep bool
		switch {
		case j == len(s):
			sep = true
		case raw && s[j] == '\\':
			sep = true
		default:
			switch byteClass[s[j]] {
			case classSep:
				sep = true
			case classMark:
				mark = true
			}
		}
		if !sep {
			if start < 0 {
				start = j
			}
			continue
		}
		if mark && start >= 0 && sc.tokenTouches(s[start:j]) {
			return true
		}
		start, mark = -1, false
		if raw && j < len(s) && s[j] == '\\' {
			j++ // skip the escaped character too
		}
	}
	return false
}

// scanClass sorts the bytes of JSON string content for the quick pass of
// protects.
var scanClass = func() (t [256]uint8) {
	for _, c := range []byte(`/~$%`) {
		t[c] = scanMark
	}
	t['"'] = scanQuote
	t['\\'] = scanEscape
	return t
}()

const (
	scanOther = iota
	scanMark
	scanQuote
	scanEscape
)

// byteClass sorts the bytes of argument strings for wordsTouch. Separators
// split the paths a string may hold: a path alone, a shell command line, an
// option such as --config=/path, a list such as /a:/b, or a file:// URL.
// Marks are the bytes without which a word cannot name a protected path
// (after '\\' becomes '/', "~" and "$HOME" expand, and %2F decodes).
var byteClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\n\r\v\f\b\"'`=;|&()<>,:") {
		t[c] = classSep
	}
	for _, c := range []byte(`/\~$%`) {
		t[c] = classMark
	}
	return t
}()

const (
	classOther = iota
	classSep
	classMark
)

func (sc *protScan) tokenTouches(tok []byte) bool {
	p := sc.p
	if p.home != "" {
		var rest []byte
		switch {
		case tok[0] == '~' && (len(tok) == 1 || tok[1] == '/'):
			rest = tok[1:]
		case hasWordPrefix(tok, "$HOME"):
			rest = tok[len("$HOME"):]
		case hasWordPrefix(tok, "${HOME}"):
			rest = tok[len("${HOME}"):]
		}
		if rest != nil {
			return sc.pathTouches([]byte(p.home + string(rest)))
		}
	}
	if hasByte(tok, '\\') {
		tok = []byte(strings.ReplaceAll(string(tok), `\`, "/"))
	}
	if hasByte(tok, '%') {
		if u, err := url.PathUnescape(string(tok)); err == nil && sc.pathTouches([]byte(strings.ReplaceAll(u, `\`, "/"))) {
			return true
		}
	}
	if len(tok) > 0 && tok[0] != '/' && hasByte(tok, '/') && !(len(tok) >= 2 && isLetter(tok[0]) && tok[1] == ':') {
		// A relative path with a directory part inside a longer string,
		// such as a shell command's "> .config/app/x". Only a path at or
		// inside a protected one counts: "../" in a file's text is no
		// reference to the directory above.
		inside := *sc
		inside.read = true
		return inside.relativeTouches(tok)
	}
	return sc.pathTouches(tok)
}

// hasWordPrefix reports whether tok is w, or w followed by '/'.
func hasWordPrefix(tok []byte, w string) bool {
	return len(tok) >= len(w) && string(tok[:len(w)]) == w && (len(tok) == len(w) || tok[len(w)] == '/')
}

// pathTouches reports whether the absolute path tok is a protected path or
// inside one, or, for a call that is not a read, a directory holding one.
func (sc *protScan) pathTouches(tok []byte) bool {
	if len(tok) >= 2 && isLetter(tok[0]) && tok[1] == ':' {
		tok = tok[2:]
	}
	if len(tok) == 0 || tok[0] != '/' {
		return false
	}
	if !isCleanPath(tok) {
		tok = []byte(path.Clean(string(tok)))
	}
	for _, pr := range sc.p.prot {
		if pathWithin(tok, pr) || (!sc.read && pathWithin(pr, tok)) {
			return true
		}
	}
	return false
}

// pathWithin reports whether the clean absolute path s is dir or inside it,
// ignoring ASCII case (some file systems do).
func pathWithin[S, D ~string | ~[]byte](s S, dir D) bool {
	if len(s) < len(dir) {
		return false
	}
	for i := 0; i < len(dir); i++ {
		if lowerASCII(rune(s[i])) != lowerASCII(rune(dir[i])) {
			return false
		}
	}
	return len(s) == len(dir) || (len(dir) == 1 && dir[0] == '/') || s[len(dir)] == '/'
}

func lowerASCII(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// sameFoldOrbit reports whether a and b are the same letter in different
// cases, including the special folds such as 'K' and U+212A KELVIN SIGN.
func sameFoldOrbit(a, b rune) bool {
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}
