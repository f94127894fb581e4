package client

// A JSON tree for tools/list pages, built with package jsonscan's lexer. A
// listing of 10,000 tools used to spend most of its time in encoding/json: a token walk per
// duplicate check and schema check, and a decode into map[string]any plus a
// re-marshal per hashed field. The scanner validates a page once, recording
// the spans of every value in a flat tree; entries, duplicate keys, schema
// bounds and canonical JSON are then read off the tree. Once its buffers
// have grown to the size of a page, a scanner does not allocate.
//
// Every answer is the one encoding/json gives: the grammar is its scanner's
// (no UTF-8 validation, at most 10,000 levels of nesting), keys compare and
// strings decode as its unquote does (invalid UTF-8 and lone surrogates
// become U+FFFD), and canonical JSON is jsonscan.DefinitionForm, which is
// what json.Marshal writes. FuzzScanner and FuzzCanonical hold the two side
// by side.

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/mcphost/mcphost/decide/jsonscan"
)

type span struct{ start, end int }

// item is a value in the tree: the root, an object member or an array
// element. The zero item is an absent value.
type item struct {
	key span // the quoted key of an object member
	val span // the value, without surrounding whitespace
	nd  int  // for an object or array, 1 + its index in scanner.nodes; else 0
	// The key, or the string value, holds only htmlSafe bytes, so it
	// decodes and re-encodes to itself.
	plainKey, plainVal bool
}

func (it item) present() bool { return it.val.end > 0 }

// node is an object or array; its members or elements are
// scanner.items[first : first+n], in document order.
type node struct{ first, n int }

// scanner holds one scanned JSON document and the buffers reused from one
// document to the next. A scanner is not safe for concurrent use.
type scanner struct {
	b     []byte
	nodes []node
	items []item
	stack []item   // members of the containers still open
	depth int      // containers open
	mem   []member // object members being sorted or compared
	keys  []byte   // decoded keys of members in mem
	tmp   []byte   // decoded strings
	text  []byte   // the strings of the tool being read
	canon []byte   // canonical JSON of the fields being hashed
	hash  []byte   // the bytes the definition hash covers
}

// member is an object member with its decoded key. It holds no pointers,
// so that sorting members needs no write barriers.
type member struct {
	key     span // the decoded key, in scanner.b or, if decoded, scanner.keys
	decoded bool
	item    int // index in scanner.items
}

// scan reads b as one JSON document and reports whether it is valid. The
// returned root and the tree behind it stay valid until the next scan.
func (s *scanner) scan(b []byte) (item, bool) {
	s.b, s.nodes, s.items, s.stack, s.depth = b, s.nodes[:0], s.items[:0], s.stack[:0], 0
	root, i, ok := s.value(jsonscan.SkipSpace(b, 0))
	if !ok || jsonscan.SkipSpace(b, i) != len(b) {
		return item{}, false
	}
	return root, true
}

func (s *scanner) raw(it item) []byte {
	if !it.present() {
		return nil
	}
	return s.b[it.val.start:it.val.end:it.val.end]
}

func (s *scanner) node(it item) node { return s.nodes[it.nd-1] }

// value reads the value starting at b[i] and returns it and the offset
// after it.
func (s *scanner) value(i int) (item, int, bool) {
	b := s.b
	if i >= len(b) {
		return item{}, 0, false
	}
	var j int
	ok, plain := true, false
	nd := 0
	switch c := b[i]; {
	case c == '{' || c == '[':
		j, ok = s.container(i)
		nd = len(s.nodes)
	case c == '"':
		j, plain, ok = jsonscan.ScanString(b, i)
	case c == 't':
		j, ok = i+4, bytes.HasPrefix(b[i:], []byte("true"))
	case c == 'f':
		j, ok = i+5, bytes.HasPrefix(b[i:], []byte("false"))
	case c == 'n':
		j, ok = i+4, bytes.HasPrefix(b[i:], []byte("null"))
	case c == '-' || c >= '0' && c <= '9':
		j, ok = jsonscan.ScanNumber(b, i)
	default:
		ok = false
	}
	return item{val: span{i, j}, nd: nd, plainVal: plain}, j, ok
}

// container reads the object or array starting at b[i]. Its items are
// gathered on the stack while nested containers are read, then moved to
// s.items in one block.
func (s *scanner) container(i int) (int, bool) {
	s.depth++
	if s.depth > jsonscan.MaxDepth {
		return 0, false
	}
	b := s.b
	obj := b[i] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	mark := len(s.stack)
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == end {
		i++
	} else {
		for {
			var key span
			var plainKey bool
			if obj {
				if i >= len(b) || b[i] != '"' {
					return 0, false
				}
				j, plain, ok := jsonscan.ScanString(b, i)
				if !ok {
					return 0, false
				}
				key, plainKey = span{i, j}, plain
				i = jsonscan.SkipSpace(b, j)
				if i >= len(b) || b[i] != ':' {
					return 0, false
				}
				i = jsonscan.SkipSpace(b, i+1)
			}
			it, j, ok := s.value(i)
			if !ok {
				return 0, false
			}
			it.key, it.plainKey = key, plainKey
			s.stack = append(s.stack, it)
			i = jsonscan.SkipSpace(b, j)
			if i >= len(b) {
				return 0, false
			}
			if b[i] == ',' {
				i = jsonscan.SkipSpace(b, i+1)
				continue
			}
			if b[i] != end {
				return 0, false
			}
			i++
			break
		}
	}
	first := len(s.items)
	s.items = append(s.items, s.stack[mark:]...)
	s.stack = s.stack[:mark]
	s.nodes = append(s.nodes, node{first, len(s.items) - first})
	s.depth--
	return i, true
}

// kind returns the first byte of it, which tells its JSON type, or 0 when
// it is absent.
func (s *scanner) kind(it item) byte {
	if !it.present() {
		return 0
	}
	return s.b[it.val.start]
}

// appendString appends the decoded string value of it.
func (s *scanner) appendString(dst []byte, it item) []byte {
	in := s.b[it.val.start+1 : it.val.end-1]
	if it.plainVal || jsonscan.PlainString(in) {
		return append(dst, in...)
	}
	return jsonscan.Decode(dst, in)
}

// str decodes the string value of it.
func (s *scanner) str(it item) string {
	s.tmp = s.appendString(s.tmp[:0], it)
	return string(s.tmp)
}

// appendOptionalString appends the string value of it as json.Unmarshal
// into a string reads it: absent and null append nothing, and anything
// else but a string is not ok.
func (s *scanner) appendOptionalString(dst []byte, it item) ([]byte, bool) {
	switch s.kind(it) {
	case 0, 'n':
		return dst, true
	case '"':
		return s.appendString(dst, it), true
	default:
		return dst, false
	}
}

// keyIs reports whether the key of it decodes to name, which is ASCII.
func (s *scanner) keyIs(it item, name string) bool {
	in := s.b[it.key.start+1 : it.key.end-1]
	if string(in) == name {
		return true
	}
	// Without escapes a key decodes to itself, or to something with
	// U+FFFD in it: neither is name.
	if bytes.IndexByte(in, '\\') < 0 {
		return false
	}
	s.tmp = jsonscan.Decode(s.tmp[:0], in)
	return string(s.tmp) == name
}

// member returns the member s.items[i] with its key decoded, into s.keys
// when it does not decode to itself.
func (s *scanner) member(i int) member {
	k := s.items[i].key
	in := s.b[k.start+1 : k.end-1]
	if s.items[i].plainKey || jsonscan.PlainString(in) {
		return member{key: span{k.start + 1, k.end - 1}, item: i}
	}
	start := len(s.keys)
	s.keys = jsonscan.Decode(s.keys, in)
	return member{key: span{start, len(s.keys)}, decoded: true, item: i}
}

func (s *scanner) keyOf(m member) []byte {
	if m.decoded {
		return s.keys[m.key.start:m.key.end]
	}
	return s.b[m.key.start:m.key.end]
}

// lookup sets out[i] to the member of the object nd named names[i]. As
// in json.Unmarshal, the last of duplicate members wins.
func (s *scanner) lookup(nd node, names []string, out []item) {
	for _, it := range s.items[nd.first : nd.first+nd.n] {
		for i, name := range names {
			if s.keyIs(it, name) {
				out[i] = it
				break
			}
		}
	}
}

// firstRepeat returns the first key of the object nd, in document order,
// that repeats an earlier key.
func (s *scanner) firstRepeat(nd node) (string, bool) {
	mark, keysMark := len(s.mem), len(s.keys)
	defer func() { s.mem, s.keys = s.mem[:mark], s.keys[:keysMark] }()
	if nd.n > 16 {
		seen := make(map[string]bool, nd.n)
		for i := nd.first; i < nd.first+nd.n; i++ {
			k := string(s.keyOf(s.member(i)))
			if seen[k] {
				return k, true
			}
			seen[k] = true
		}
		return "", false
	}
	for i := nd.first; i < nd.first+nd.n; i++ {
		m := s.member(i)
		k := s.keyOf(m)
		for _, earlier := range s.mem[mark:] {
			if bytes.Equal(s.keyOf(earlier), k) {
				return string(k), true
			}
		}
		s.mem = append(s.mem, m)
	}
	return "", false
}

// appendCanonical appends the canonical JSON of it: what decoding it with
// UseNumber into an any and json.Marshal give. Object keys are sorted by
// their decoded bytes and, as when decoding into a map, the last of
// duplicate keys wins; strings are decoded and re-encoded, so "\u0041" and
// "A" are the same; numbers, true, false and null keep their written form.
// An absent item is null.
func (s *scanner) appendCanonical(dst []byte, it item) []byte {
	raw := s.raw(it)
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	switch raw[0] {
	case '"':
		if it.plainVal {
			return append(dst, raw...)
		}
		return jsonscan.AppendString(dst, raw[1:len(raw)-1], jsonscan.DefinitionForm)
	case '[':
		nd := s.node(it)
		dst = append(dst, '[')
		for i := range nd.n {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = s.appendCanonical(dst, s.items[nd.first+i])
		}
		return append(dst, ']')
	case '{':
		nd := s.node(it)
		mark, keysMark := len(s.mem), len(s.keys)
		for i := nd.first; i < nd.first+nd.n; i++ {
			s.mem = append(s.mem, s.member(i))
		}
		s.sortMembers(s.mem[mark:])
		dst = append(dst, '{')
		first := true
		// s.mem grows while members are written; index it afresh each time.
		for i, n := 0, nd.n; i < n; i++ {
			m := s.mem[mark+i]
			if i+1 < n && bytes.Equal(s.keyOf(s.mem[mark+i+1]), s.keyOf(m)) {
				continue // a later duplicate wins
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			it := s.items[m.item]
			if k := it.key; it.plainKey {
				dst = append(dst, s.b[k.start:k.end]...)
			} else {
				dst = jsonscan.AppendString(dst, s.b[k.start+1:k.end-1], jsonscan.DefinitionForm)
			}
			dst = append(dst, ':')
			dst = s.appendCanonical(dst, it)
		}
		s.mem, s.keys = s.mem[:mark], s.keys[:keysMark]
		return append(dst, '}')
	default:
		return append(dst, raw...)
	}
}

// sortMembers sorts by key, keeping the document order of equal keys.
func (s *scanner) sortMembers(ms []member) {
	if len(ms) > 12 {
		slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(s.keyOf(a), s.keyOf(b)) })
		return
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && bytes.Compare(s.keyOf(ms[j-1]), s.keyOf(ms[j])) > 0; j-- {
			ms[j-1], ms[j] = ms[j], ms[j-1]
		}
	}
}

// schemaWalk checks a schema in document order, as a json.Decoder token
// walk would meet its values, so that of several faults the first is
// reported.
type schemaWalk struct {
	s      *scanner
	values int  // tokens so far: delimiters, keys and scalars
	depth  int  // containers open
	refKey bool // the last key read was $ref and no scalar came since
}

func (w *schemaWalk) count() error {
	w.values++
	if w.values > maxSchemaNodes {
		return errTooManyValues
	}
	return nil
}

func (w *schemaWalk) value(it item) error {
	s := w.s
	raw := s.raw(it)
	switch raw[0] {
	case '{', '[':
		if err := w.count(); err != nil {
			return err
		}
		if w.depth++; w.depth > maxSchemaDepth {
			return errTooDeep
		}
		nd := s.node(it)
		for _, m := range s.items[nd.first : nd.first+nd.n] {
			if raw[0] == '{' {
				if err := w.count(); err != nil {
					return err
				}
				w.refKey = s.keyIs(m, "$ref")
			}
			if err := w.value(m); err != nil {
				return err
			}
		}
		w.depth--
		return w.count()
	case '"':
		if err := w.count(); err != nil {
			return err
		}
		if w.refKey {
			s.tmp = s.appendString(s.tmp[:0], it)
			if len(s.tmp) == 0 || s.tmp[0] != '#' {
				return errExternalRef(string(s.tmp))
			}
		}
	case 't', 'f', 'n':
		if err := w.count(); err != nil {
			return err
		}
	default:
		// A json.Decoder token walk decodes numbers into float64 and
		// fails on one out of its range; so does this walk. Only an
		// exponent or over 300 digits can leave the range.
		if len(raw) > 300 || bytes.ContainsAny(raw, "eE") {
			if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
				var v any
				return json.Unmarshal(raw, &v) // the error the decoder reports
			}
		}
		if err := w.count(); err != nil {
			return err
		}
	}
	w.refKey = false
	return nil
}
