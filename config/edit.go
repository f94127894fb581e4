package config

// Writing servers into a config file (mcphost mcp add, remove and import).
//
// A person's config file is theirs: an edit changes only the "mcpServers"
// member and leaves every other byte as it was. New entries are spliced in
// after the last server, indented like their neighbours; a removed entry is
// cut out with its separator. Nothing is written unless the file parsed
// before the change and the result parses after it, with the loader's own
// parser, so an edit can never turn a working file into a broken one, nor
// write over a file the loader would refuse.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/decide/jsonscan"
)

// Entry is a server entry as mcphost writes it. Zero fields are left out.
// Field order is the order of the keys in the file.
type Entry struct {
	Command      string            `json:"command,omitempty"`
	Args         []string          `json:"args,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Cwd          string            `json:"cwd,omitempty"`
	Type         string            `json:"type,omitempty"` // "" for stdio; "http" or "sse"
	URL          string            `json:"url,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	StartTimeout string            `json:"startTimeout,omitempty"` // a duration, "30s"
	CallTimeout  string            `json:"callTimeout,omitempty"`
	Disabled     bool              `json:"disabled,omitempty"`
	Trust        bool              `json:"trust,omitempty"`
	// AllowInsecureHTTP is "allowInsecureHTTP" (see Server).
	AllowInsecureHTTP bool `json:"allowInsecureHTTP,omitempty"`
}

// NamedEntry is an Entry and the name it is written under.
type NamedEntry struct {
	Name  string
	Entry Entry
}

// Written says what an edit did.
type Written struct {
	// Path is the file written: the path given, or the file a symbolic
	// link there points to (the link is kept).
	Path string
	// Created is set when the file did not exist before.
	Created bool
}

// unsetStandIn is what a ${NAME} reference to a variable that is not set
// expands to while an edit is checked. The check is about the file's shape;
// the variable has to be set by the time a command loads the file. It is a
// valid URL so that "url": "${BASE}/mcp" checks as it will load.
const unsetStandIn = "https://unset.invalid"

// checkEnv resolves references for the checks of an edit: a variable's value
// when it is set, else unsetStandIn.
func checkEnv(getenv func(string) string) func(string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return unsetStandIn
	}
}

// ServerNames returns the names of the servers file defines, in file order,
// and whether the file exists. A file that exists must parse as the loader
// parses a file of source src; otherwise the error is the loader's *Error.
func ServerNames(file string, src Source, getenv func(string) string) ([]string, bool, error) {
	data, err := readFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, &Error{File: file, Msg: readFailure(err), Err: err}
	}
	r, err := parseForEdit(file, data, src, checkEnv(getenv))
	if err != nil {
		return nil, true, err
	}
	names := make([]string, 0, len(r.serverPos))
	for _, s := range r.cfg.Servers {
		names = append(names, s.Name)
	}
	slices.SortFunc(names, func(a, b string) int {
		pa, pb := r.serverPos[a], r.serverPos[b]
		if pa[0] != pb[0] {
			return pa[0] - pb[0]
		}
		return pa[1] - pb[1]
	})
	return names, true, nil
}

// AddServers writes entries into file's "mcpServers", after the servers it
// already has, creating the file (mode 0600, and its directory, 0700) when
// it does not exist. src is how the loader reads the file (SourceProject
// for a project's .mcp.json), and getenv resolves ${NAME} references for
// the checks (see unsetStandIn); nil means os.Getenv.
//
// It refuses, writing nothing: a file that does not parse as the loader
// parses it (the loader's *Error, with its line and column); a name that
// ValidName rejects or the file already defines; and a result that would
// not load, such as an entry with an invalid URL. The write is atomic: a
// temporary file in the same directory, synced, renamed over the file, with
// the file's mode kept.
func AddServers(file string, src Source, entries []NamedEntry, getenv func(string) string) (Written, error) {
	for _, e := range entries {
		if why := NameProblem(e.Name); why != "" {
			return Written{}, &Error{Msg: why}
		}
	}
	return rewrite(file, src, getenv, nil, func(data []byte) ([]byte, error) {
		return addMembers(file, data, entries)
	}, func(cfg *Config) error {
		for _, e := range entries {
			if _, ok := cfg.Server(e.Name); !ok {
				return fmt.Errorf("server %q is missing after the edit", e.Name)
			}
		}
		return nil
	})
}

// CheckAdd reports whether AddServers would accept entries for file,
// without writing anything: nil, or the error AddServers would return.
func CheckAdd(file string, src Source, entries []NamedEntry, getenv func(string) string) error {
	for _, e := range entries {
		if why := NameProblem(e.Name); why != "" {
			return &Error{Msg: why}
		}
	}
	data, err := readFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &Error{File: file, Msg: readFailure(err), Err: err}
	}
	if err != nil {
		data = nil
	}
	if data != nil {
		if _, err := parseForEdit(file, data, src, checkEnv(getenv)); err != nil {
			return err
		}
	}
	out, err := addMembers(file, data, entries)
	if err != nil {
		return err
	}
	return checkResult(file, out, src, getenv)
}

// RemoveServer removes every entry named name from file's "mcpServers"
// (duplicates too), with the same checks and atomic write as AddServers.
// A name the file does not define is an *Error.
func RemoveServer(file string, src Source, name string, getenv func(string) string) (Written, error) {
	// A file that defines name twice is refused by the loader; removing
	// name (every entry of it) is the fix, so that one refusal is let pass.
	twice := func(err error) bool {
		var t twiceError
		return errors.As(err, &t) && string(t) == name
	}
	return rewrite(file, src, getenv, twice, func(data []byte) ([]byte, error) {
		if data == nil {
			return nil, &Error{File: file, Msg: "no such file; there is no server to remove"}
		}
		out, n, err := removeMembers(file, data, name)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, &Error{File: file, Msg: fmt.Sprintf("no server named %q is defined here", short(name))}
		}
		return out, nil
	}, func(cfg *Config) error {
		if _, ok := cfg.Server(name); ok {
			return fmt.Errorf("server %q is still defined after the edit", name)
		}
		return nil
	})
}

// rewrite reads file, checks it, applies change, checks the result with
// the loader's parser and with verify, and writes it atomically.
//
// A file the loader refuses is never written over, unless fixable says the
// refusal is one the change fixes (the result is checked all the same).
func rewrite(file string, src Source, getenv func(string) string, fixable func(error) bool, change func([]byte) ([]byte, error), verify func(*Config) error) (Written, error) {
	target := file
	if real, err := filepath.EvalSymlinks(file); err == nil {
		target = real // write through a symbolic link, keeping it
	}
	w := Written{Path: target}
	mode := fs.FileMode(0o600)
	data, err := readFile(target)
	switch {
	case err == nil:
		if info, err := os.Stat(target); err == nil {
			mode = info.Mode().Perm()
		}
		if _, err := parseForEdit(file, data, src, checkEnv(getenv)); err != nil && (fixable == nil || !fixable(err)) {
			return w, err // the loader refuses this file: never write over it
		}
	case errors.Is(err, fs.ErrNotExist):
		data, w.Created = nil, true
	default:
		return w, &Error{File: file, Msg: readFailure(err), Err: err}
	}
	out, err := change(data)
	if err != nil {
		return w, err
	}
	if err := checkResult(file, out, src, getenv); err != nil {
		return w, err // a result the loader would refuse is never written
	}
	if r, _ := parseForEdit(file, out, src, checkEnv(getenv)); r.cfg != nil {
		if err := verify(r.cfg); err != nil {
			return w, &Error{File: file, Msg: fmt.Sprintf("the edit did not come out as intended (%v); the file was not changed", err)}
		}
	}
	if w.Created {
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return w, &Error{File: file, Msg: "cannot create the directory for the config file: " + strings.TrimSpace(unwrapPath(err).Error()), Err: err}
		}
	}
	if err := writeAtomic(target, out, mode); err != nil {
		return w, &Error{File: file, Msg: "cannot write the config file: " + strings.TrimSpace(unwrapPath(err).Error()) + "; the file was not changed", Err: err}
	}
	return w, nil
}

// checkResult parses what would be written as the loader will: an edit
// that would not load is refused and nothing is written.
func checkResult(file string, out []byte, src Source, getenv func(string) string) error {
	if _, err := parseForEdit(file, out, src, checkEnv(getenv)); err != nil {
		msg := err.Error()
		var ce *Error
		if errors.As(err, &ce) {
			msg = ce.Msg
		}
		return &Error{File: file, Msg: "the new entry would not load: " + msg + "; the file was not changed", Err: err}
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, written, given mode, synced, then renamed over path, so that a
// crash leaves either the old file or the new one, never a part.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return nil // directories cannot be synced there
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil // the file is in place; only the rename's durability is unconfirmed
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}

// layout is how a file is indented, learnt from the file itself.
type layout struct {
	unit      string // one level of indentation
	multiLine bool   // objects are written one member a line
}

// guessLayout reads the indentation of the top-level object's members:
// "  " and multi-line when the file says nothing (empty or new).
func guessLayout(data []byte, root *node) layout {
	l := layout{unit: "  ", multiLine: true}
	if root == nil || len(root.members) == 0 {
		return l
	}
	ws := separator(data, root, len(root.members)-1)
	i := strings.LastIndexByte(ws, '\n')
	if i < 0 {
		l.multiLine = false
		return l
	}
	if ind := ws[i+1:]; ind != "" {
		l.unit = ind
	}
	return l
}

// separator is the blank text before member i's key in object n (after the
// '{' or the ',' that precedes it).
func separator(data []byte, n *node, i int) string {
	from := n.start + 1
	if i > 0 {
		from = n.members[i-1].val.end
	}
	s := string(data[from:n.members[i].keyOff])
	if j := strings.LastIndexByte(s, ','); j >= 0 {
		s = s[j+1:]
	}
	return s
}

// lineIndent is the blank text that starts the line holding offset off.
func lineIndent(data []byte, off int) string {
	start := bytes.LastIndexAny(data[:off], "\r\n") + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// encodeValue writes v as JSON. On several lines, every line after the
// first starts with indent; on one line, members are separated by ", " and
// keys from values by ": ", as people write them.
func encodeValue(v any, indent string, l layout) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if l.multiLine {
		enc.SetIndent(indent, l.unit)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if !l.multiLine {
		out = spaceOut(out)
	}
	return out, nil
}

// spaceOut puts a space after every ':' and ',' of compact JSON that is not
// inside a string.
func spaceOut(s string) string {
	var b strings.Builder
	raw := []byte(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			end := jsonscan.SkipString(raw, i)
			b.WriteString(s[i:end])
			i = end - 1
		case ':', ',':
			b.WriteByte(c)
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// membersText is the members "name": entry, joined by sep, each value's
// inner lines indented with indent.
func membersText(entries []NamedEntry, sep, indent string, l layout) (string, error) {
	var parts []string
	for _, e := range entries {
		key, _ := json.Marshal(e.Name) // names are ValidName: plain ASCII
		v, err := encodeValue(e.Entry, indent, l)
		if err != nil {
			return "", err
		}
		parts = append(parts, string(key)+": "+v)
	}
	return strings.Join(parts, sep), nil
}

// objectText is a whole object holding entries, its '{' at the end of a
// line indented with outer.
func objectText(entries []NamedEntry, outer string, l layout) (string, error) {
	if !l.multiLine {
		inner, err := membersText(entries, ", ", "", l)
		return "{" + inner + "}", err
	}
	in := outer + l.unit
	inner, err := membersText(entries, ",\n"+in, in, l)
	return "{\n" + in + inner + "\n" + outer + "}", err
}

// lastMember returns the last member of object n named key, or nil.
func lastMember(n *node, key string) *member {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

// syntaxErr positions a syntax error of data as the loader does.
func syntaxErr(file string, data []byte, se *syntaxError) error {
	line, col := lineCol(data, se.off)
	return &Error{File: file, Line: line, Col: col, Msg: se.msg}
}

// addMembers returns data with entries added to its "mcpServers" (the last
// one, which is the one the loader reads). nil data is a new file. A name
// already defined is an *Error at its key.
func addMembers(file string, data []byte, entries []NamedEntry) ([]byte, error) {
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Name] {
			return nil, &Error{Msg: fmt.Sprintf("server %q is given twice", e.Name)}
		}
		seen[e.Name] = true
	}
	if len(bytes.TrimSpace(data)) == 0 {
		text, err := objectText(entries, "  ", layout{unit: "  ", multiLine: true})
		if err != nil {
			return nil, err
		}
		return []byte("{\n  \"mcpServers\": " + text + "\n}\n"), nil
	}
	root, serr := parseTree(data)
	if serr != nil {
		return nil, syntaxErr(file, data, serr)
	}
	if root.kind != kindObject {
		return nil, &Error{File: file, Msg: "expected a JSON object at the top level"}
	}
	l := guessLayout(data, root)
	splice := func(from, to int, text string) []byte {
		out := make([]byte, 0, len(data)+len(text))
		out = append(out, data[:from]...)
		out = append(out, text...)
		return append(out, data[to:]...)
	}
	servers := lastMember(root, "mcpServers")
	switch {
	case servers == nil && len(root.members) == 0:
		// {} or { }: the file becomes a whole new one.
		text, err := objectText(entries, "  ", layout{unit: "  ", multiLine: true})
		if err != nil {
			return nil, err
		}
		return splice(root.start, root.end, "{\n  \"mcpServers\": "+text+"\n}"), nil
	case servers == nil:
		last := root.members[len(root.members)-1]
		sep := separator(data, root, len(root.members)-1)
		outer := lineIndent(data, last.keyOff)
		text, err := objectText(entries, outer, l)
		if err != nil {
			return nil, err
		}
		return splice(last.val.end, last.val.end, ","+sep+`"mcpServers": `+text), nil
	case servers.val.kind == kindNull:
		text, err := objectText(entries, lineIndent(data, servers.keyOff), l)
		if err != nil {
			return nil, err
		}
		return splice(servers.val.start, servers.val.end, text), nil
	case servers.val.kind != kindObject:
		return nil, &Error{File: file, Msg: `"mcpServers" is not an object`}
	}
	obj := servers.val
	for _, m := range obj.members {
		if seen[m.key] {
			line, col := lineCol(data, m.keyOff)
			return nil, &Error{File: file, Line: line, Col: col,
				Msg: fmt.Sprintf("a server named %q is already defined here; remove it first (mcphost mcp remove %s) or choose another name", m.key, m.key)}
		}
	}
	if len(obj.members) == 0 {
		// "mcpServers": {} gets its members on lines of their own, unless
		// the file is written on one line.
		objLayout := l
		if !bytes.ContainsAny(data[obj.start:obj.end], "\r\n") && !l.multiLine {
			objLayout.multiLine = false
		}
		text, err := objectText(entries, lineIndent(data, servers.keyOff), objLayout)
		if err != nil {
			return nil, err
		}
		return splice(obj.start, obj.end, text), nil
	}
	last := obj.members[len(obj.members)-1]
	sep := separator(data, obj, len(obj.members)-1)
	ml := l
	ml.multiLine = strings.ContainsAny(sep, "\r\n")
	if !ml.multiLine && len(obj.members) == 1 {
		sep = " " // "{"a": …}" says nothing about what follows a comma
	}
	indent := ""
	if ml.multiLine {
		indent = sep[strings.LastIndexAny(sep, "\r\n")+1:]
		if outer := lineIndent(data, servers.keyOff); strings.HasPrefix(indent, outer) && len(indent) > len(outer) {
			ml.unit = indent[len(outer):]
		}
	}
	text, err := membersText(entries, ","+sep, indent, ml)
	if err != nil {
		return nil, err
	}
	return splice(last.val.end, last.val.end, ","+sep+text), nil
}

// removeMembers cuts every member named name out of data's "mcpServers"
// (the last one) and returns the result and how many were cut.
func removeMembers(file string, data []byte, name string) ([]byte, int, error) {
	n := 0
	for {
		root, serr := parseTree(data)
		if serr != nil {
			return nil, 0, syntaxErr(file, data, serr)
		}
		if root.kind != kindObject {
			return data, n, nil
		}
		servers := lastMember(root, "mcpServers")
		if servers == nil || servers.val.kind != kindObject {
			return data, n, nil
		}
		obj := servers.val
		i := slices.IndexFunc(obj.members, func(m member) bool { return m.key == name })
		if i < 0 {
			return data, n, nil
		}
		var from, to int
		switch {
		case len(obj.members) == 1:
			from, to = obj.start+1, obj.end-1 // leaves {}
		case i > 0:
			from, to = obj.members[i-1].val.end, obj.members[i].val.end
		default:
			from, to = obj.members[0].keyOff, obj.members[1].keyOff
		}
		data = append(append([]byte(nil), data[:from]...), data[to:]...)
		n++
	}
}
