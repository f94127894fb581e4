package config

import (
	"fmt"
	"strings"
)

// expandError is a failed ${...} reference. ref is the reference as written,
// from "${", so the caller can find it in the file.
type expandError struct {
	ref string
	msg string
}

func (e *expandError) Error() string { return e.msg }

// expand replaces ${NAME} and ${NAME:-default} in s with values from getenv
// and returns the names referred to. A variable counts as unset when getenv
// returns "" (getenv cannot tell unset from empty). "$${" stands for a
// literal "${". Nothing else is special: $NAME without braces, $(...) and
// backquotes stay as written.
//
// When lenient is set, an unset variable without a default is left as
// written instead of failing; disabled servers are parsed this way so that
// a missing token does not break the whole file.
func expand(s string, getenv func(string) string, lenient bool) (string, []string, error) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var b strings.Builder
	var names []string
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", nil, &expandError{ref: "${", msg: `unterminated "${"; close it with "}" (write "$${" for a literal "${")`}
		}
		ref := s[i : i+2+end+1]
		body := ref[2 : len(ref)-1]
		name, def, hasDef := strings.Cut(body, ":-")
		if !validVarName(name) {
			return "", nil, &expandError{ref: ref, msg: fmt.Sprintf("invalid reference %q; write ${NAME} or ${NAME:-default}, where NAME has letters, digits and '_'", short(ref))}
		}
		if strings.Contains(def, "${") {
			return "", nil, &expandError{ref: ref, msg: fmt.Sprintf("a default cannot contain another reference: %q", short(ref))}
		}
		names = append(names, name)
		switch v := getenv(name); {
		case v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		case lenient:
			b.WriteString(ref)
		default:
			return "", nil, &expandError{ref: ref, msg: fmt.Sprintf("environment variable %s is not set", short(name))}
		}
		i += len(ref)
	}
	return b.String(), names, nil
}

func validVarName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return false
		}
	}
	return true
}
