package config

// A config file is decoded into a small tree that remembers where every key
// and value starts, so that every error and warning can name a line and a
// column. encoding/json does the actual parsing: it validates the whole
// input first (its syntax errors carry a byte offset), then a Decoder walks
// the valid input token by token while InputOffset locates each token.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	case kindObject:
		return "object"
	}
	return "unknown"
}

// node is a JSON value and the byte range [start, end) it occupies.
type node struct {
	kind       kind
	start, end int
	str        string // a string's value, or a number's text
	b          bool
	members    []member // objects, in file order, duplicates included
	elems      []*node  // arrays
}

type member struct {
	key    string
	keyOff int // offset of the key's opening quote
	val    *node
}

// syntaxError is a JSON syntax error at a byte offset.
type syntaxError struct {
	off int
	msg string
}

// parseTree parses data, which must hold exactly one JSON value.
func parseTree(data []byte) (*node, *syntaxError) {
	// A UTF-8 byte order mark is harmless; encoding/json rejects it. Blank it
	// out so that offsets stay those of the original bytes.
	if bytes.HasPrefix(data, bom) {
		data = append([]byte("   "), data[len(bom):]...)
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, explainSyntax(data, se)
		}
		return nil, &syntaxError{0, err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{data: data, dec: dec}
	n, err := w.value()
	if err != nil {
		// The input was validated above, so this is not expected.
		return nil, &syntaxError{w.offset(), err.Error()}
	}
	return n, nil
}

type walker struct {
	data []byte
	dec  *json.Decoder
}

// offset returns where the next token starts: the decoder's offset is the
// end of the previous token, possibly followed by blanks, ':' or ','.
func (w *walker) offset() int {
	i := int(w.dec.InputOffset())
	for i < len(w.data) {
		switch w.data[i] {
		case ' ', '\t', '\n', '\r', ':', ',':
			i++
			continue
		}
		break
	}
	return i
}

func (w *walker) value() (*node, error) {
	n := &node{start: w.offset()}
	tok, err := w.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = kindObject
			for w.dec.More() {
				off := w.offset()
				kt, err := w.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %T", kt)
				}
				v, err := w.value()
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key: key, keyOff: off, val: v})
			}
		case '[':
			n.kind = kindArray
			for w.dec.More() {
				v, err := w.value()
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
		default:
			return nil, fmt.Errorf("unexpected %q", rune(t))
		}
		if _, err := w.dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.kind, n.str = kindString, t
	case json.Number:
		n.kind, n.str = kindNumber, string(t)
	case bool:
		n.kind, n.b = kindBool, t
	case nil:
		n.kind = kindNull
	default:
		return nil, fmt.Errorf("unexpected token %T", tok)
	}
	n.end = int(w.dec.InputOffset())
	return n, nil
}

// explainSyntax turns an encoding/json syntax error into a message that says
// what to fix, positioned where the fix goes.
func explainSyntax(data []byte, se *json.SyntaxError) *syntaxError {
	msg := se.Error()
	off := int(se.Offset)
	if msg == "unexpected end of JSON input" {
		return explainEOF(data)
	}
	if !strings.HasPrefix(msg, "invalid character ") || off < 1 || off > len(data) {
		return &syntaxError{max(0, min(off, len(data))), msg}
	}
	// The offending byte is the last one the scanner read.
	at := off - 1
	r, size := utf8.DecodeRune(data[at:])
	found := quoteRune(r)
	if r == utf8.RuneError && size == 1 {
		found = fmt.Sprintf("byte 0x%02X (not UTF-8)", data[at])
	}
	has := func(s string) bool { return strings.HasSuffix(msg, s) }
	prev := at - 1
	for prev >= 0 && isSpace(data[prev]) {
		prev--
	}

	switch {
	case has(" in string literal"):
		if r == '\n' || r == '\r' {
			return &syntaxError{at, "line break inside a string; close the string on the same line, or write \\n"}
		}
		if r == '\t' {
			return &syntaxError{at, "tab character inside a string; write \\t instead"}
		}
		return &syntaxError{at, fmt.Sprintf("control character %U inside a string; write it as \\u%04X", r, r)}
	case has(" in string escape code"):
		esc := string(r)
		if !strconv.IsPrint(r) {
			esc = fmt.Sprintf("%U", r)
		}
		return &syntaxError{at - 1, fmt.Sprintf("invalid escape \\%s in a string; write \\\\ for a backslash (a Windows path can also use forward slashes)", esc)}
	case has(" in \\u hexadecimal character escape"):
		return &syntaxError{at, "invalid \\u escape in a string; it needs exactly four hex digits"}
	case r == '/' && at+1 < len(data) && (data[at+1] == '/' || data[at+1] == '*'):
		return &syntaxError{at, "comments are not allowed in JSON; remove them"}
	case r == '“' || r == '”' || r == '‘' || r == '’':
		return &syntaxError{at, fmt.Sprintf("%s is a typographic quote; JSON needs plain double quotes (\")", found)}
	case (r == '}' || r == ']') && prev >= 0 && data[prev] == ',':
		return &syntaxError{prev, fmt.Sprintf("trailing comma before %s; remove it", found)}
	case has(" looking for beginning of object key string"):
		if r == '\'' {
			return &syntaxError{at, "keys need double quotes (\"), not single quotes"}
		}
		return &syntaxError{at, fmt.Sprintf("expected a key in double quotes, found %s", found)}
	case has(" after object key"):
		return &syntaxError{at, fmt.Sprintf("expected ':' after the key, found %s", found)}
	case has(" after object key:value pair"):
		return &syntaxError{at, fmt.Sprintf("expected ',' or '}' after a value, found %s; is a comma missing?", found)}
	case has(" after array element"):
		return &syntaxError{at, fmt.Sprintf("expected ',' or ']' after an array element, found %s; is a comma missing?", found)}
	case has(" after top-level value"):
		return &syntaxError{at, fmt.Sprintf("unexpected %s after the end of the top-level object; a config file holds one JSON object", found)}
	case has(" looking for beginning of value"):
		if r == '\'' {
			return &syntaxError{at, "strings need double quotes (\"), not single quotes"}
		}
		if isLetter(r) {
			return &syntaxError{at, fmt.Sprintf("expected a value, found %s; put strings in double quotes (true, false and null are lower case)", found)}
		}
		return &syntaxError{at, fmt.Sprintf("expected a value (a string, number, object, array, true, false or null), found %s", found)}
	case strings.Contains(msg, " in literal "):
		return &syntaxError{at, fmt.Sprintf("invalid word, found %s; expected true, false or null (or a string in double quotes)", found)}
	case strings.Contains(msg, "numeric literal"):
		return &syntaxError{at, fmt.Sprintf("invalid number, found %s", found)}
	case has(" exceeded max depth"):
		return &syntaxError{at, "values are nested too deeply"}
	}
	return &syntaxError{at, fmt.Sprintf("unexpected %s", found)}
}

// explainEOF explains input that ends too early: an unterminated string, an
// unclosed object or array, or no value at all.
func explainEOF(data []byte) *syntaxError {
	var open []int // offsets of unclosed '{' and '['
	inString, escaped, strStart := false, false, 0
	for i, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString, strStart = true, i
		case c == '{' || c == '[':
			open = append(open, i)
		case (c == '}' || c == ']') && len(open) > 0:
			open = open[:len(open)-1]
		}
	}
	end := len(data)
	for end > 0 && isSpace(data[end-1]) {
		end--
	}
	switch {
	case inString:
		return &syntaxError{strStart, "unterminated string; it needs a closing \""}
	case end == 0 || (end == len(bom) && bytes.HasPrefix(data, bom)):
		return &syntaxError{0, `the file is empty; expected a JSON object such as {"mcpServers": {}}`}
	case len(open) > 0:
		o := open[len(open)-1]
		closer := '}'
		if data[o] == '[' {
			closer = ']'
		}
		line, col := lineCol(data, o)
		return &syntaxError{end, fmt.Sprintf("unexpected end of file; the %q at %d:%d needs a closing %q", rune(data[o]), line, col, closer)}
	}
	return &syntaxError{end, "unexpected end of file"}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isLetter(r rune) bool { return r == '_' || (r|0x20 >= 'a' && r|0x20 <= 'z') }

// quoteRune quotes r for a message, escaping anything unprintable.
func quoteRune(r rune) string { return strconv.Quote(string(r)) }
