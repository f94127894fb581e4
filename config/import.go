package config

// Reading other MCP hosts' configuration files, for mcphost mcp import.
//
// Each host keeps its servers in its own file and dialect. Entries are
// converted field by field into an Entry: only fields that mean the same
// to mcphost are carried over, and whatever is left out or changed is said
// in the Imported's notes. Trust, auto-approval lists and allowed tools are
// never carried over: another program's approval is not the person's
// approval of mcphost running that server unasked.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/decide/jsonscan"
)

// The hosts whose files ImportFiles knows.
const (
	FromClaudeDesktop = "claude-desktop"
	FromClaudeCode    = "claude-code"
	FromCursor        = "cursor"
	FromVSCode        = "vscode"
	FromCodex         = "codex"
)

// ImportSources lists the hosts, in the order their files are read (and
// the order in which the first of two servers with one name wins).
var ImportSources = []string{FromClaudeDesktop, FromClaudeCode, FromCursor, FromVSCode, FromCodex}

// ImportPlace is where a person's files are: injected, so that tests use
// temporary directories.
type ImportPlace struct {
	Home    string // the home directory
	GOOS    string // "darwin", "windows", "linux", …
	WorkDir string // the project directory; "" looks at no project files
	// Getenv reads APPDATA, XDG_CONFIG_HOME and CODEX_HOME; nil means none
	// is set.
	Getenv func(string) string
}

// ImportFile is a file another host reads servers from.
type ImportFile struct {
	From string // one of ImportSources
	Path string
	// Scope is the host's word for where the file applies: "user",
	// "project", or for Claude Code's per-project entries "local".
	Scope  string
	format importFormat
}

type importFormat int

const (
	formatMCPServers    importFormat = iota // {"mcpServers": {...}}
	formatClaudeLocal                       // ~/.claude.json: "projects"[WorkDir]."mcpServers"
	formatVSCode                            // {"servers": {...}, "inputs": [...]}
	formatCodex                             // TOML [mcp_servers.NAME]
	formatCursorMCPJSON                     // like formatMCPServers, with editor variables
)

// maxImportSize bounds the files read. Claude Code's ~/.claude.json holds
// much more than servers and grows large.
const maxImportSize = 64 << 20

// ImportFiles returns the files the host from (or every host when from is
// "") keeps servers in, whether or not they exist, in ImportSources order.
func ImportFiles(pl ImportPlace, from string) []ImportFile {
	getenv := pl.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	// appConfig is the per-OS directory desktop applications keep their
	// settings in.
	appConfig := func() string {
		switch pl.GOOS {
		case "darwin":
			return filepath.Join(pl.Home, "Library", "Application Support")
		case "windows":
			if d := getenv("APPDATA"); d != "" {
				return d
			}
			return filepath.Join(pl.Home, "AppData", "Roaming")
		}
		if d := getenv("XDG_CONFIG_HOME"); d != "" {
			return d
		}
		return filepath.Join(pl.Home, ".config")
	}
	codexHome := getenv("CODEX_HOME")
	if codexHome == "" {
		codexHome = filepath.Join(pl.Home, ".codex")
	}
	var out []ImportFile
	add := func(src, path, scope string, f importFormat) {
		if from == "" || from == src {
			out = append(out, ImportFile{From: src, Path: path, Scope: scope, format: f})
		}
	}
	project := func(src string, f importFormat, parts ...string) {
		if pl.WorkDir != "" {
			add(src, filepath.Join(append([]string{pl.WorkDir}, parts...)...), "project", f)
		}
	}
	add(FromClaudeDesktop, filepath.Join(appConfig(), "Claude", "claude_desktop_config.json"), "user", formatMCPServers)
	add(FromClaudeCode, filepath.Join(pl.Home, ".claude.json"), "user", formatMCPServers)
	if pl.WorkDir != "" {
		add(FromClaudeCode, filepath.Join(pl.Home, ".claude.json"), "local", formatClaudeLocal)
	}
	project(FromClaudeCode, formatMCPServers, ProjectFile)
	add(FromCursor, filepath.Join(pl.Home, ".cursor", "mcp.json"), "user", formatCursorMCPJSON)
	project(FromCursor, formatCursorMCPJSON, ".cursor", "mcp.json")
	add(FromVSCode, filepath.Join(appConfig(), "Code", "User", "mcp.json"), "user", formatVSCode)
	project(FromVSCode, formatVSCode, ".vscode", "mcp.json")
	add(FromCodex, filepath.Join(codexHome, "config.toml"), "user", formatCodex)
	project(FromCodex, formatCodex, ".codex", "config.toml")
	return out
}

// Imported is one server found in another host's file.
type Imported struct {
	Name  string
	From  string // one of ImportSources
	File  string
	Scope string // as in ImportFile
	Entry Entry
	// Notes say what was left out or changed on the way, for the person to
	// read before they agree: values mcphost cannot resolve, trust and
	// approvals that are not imported.
	Notes []string
	// Skip is why the server cannot be imported at all; "" when it can.
	Skip string
}

// ReadImport reads the servers of one file, in file order. A file that does
// not exist gives an error matching fs.ErrNotExist; one that cannot be
// parsed, an *Error with its position. A server that cannot be converted
// comes back with Skip set, so that the person hears of it.
func ReadImport(f ImportFile, pl ImportPlace) ([]Imported, error) {
	data, err := readBounded(f.Path, maxImportSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &Error{File: f.Path, Msg: readFailure(err), Err: err}
	}
	if f.format == formatCodex {
		return readCodex(f, data)
	}
	return readJSONImport(f, pl, data)
}

// readBounded is readFile with another bound.
func readBounded(path string, limit int64) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errNotRegular
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d MiB", limit>>20)
	}
	return data, nil
}

func readJSONImport(f ImportFile, pl ImportPlace, data []byte) ([]Imported, error) {
	// VS Code's and Cursor's files are JSON with comments; blanking the
	// comments out keeps every offset, so positions stay right.
	clean := stripJSONC(data)
	root, serr := parseTree(clean)
	if serr != nil {
		return nil, syntaxErr(f.Path, clean, serr)
	}
	if root.kind != kindObject {
		return nil, &Error{File: f.Path, Line: 1, Col: 1, Msg: "expected a JSON object at the top level"}
	}
	key := "mcpServers"
	if f.format == formatVSCode {
		key = "servers"
	}
	obj := root
	if f.format == formatClaudeLocal {
		obj = claudeProject(root, pl.WorkDir)
		if obj == nil {
			return nil, nil
		}
	}
	m := lastMember(obj, key)
	if m == nil || m.val.kind == kindNull {
		return nil, nil
	}
	if m.val.kind != kindObject {
		line, col := lineCol(clean, m.val.start)
		return nil, &Error{File: f.Path, Line: line, Col: col, Msg: fmt.Sprintf("expected an object for %q, got %s", key, m.val.kind)}
	}
	vars := varsFor(f, pl)
	// A name the file defines twice is imported under neither entry: which
	// one the other host uses is its business, and mcphost's rules name
	// servers, so a guess could hand one server the other's rules.
	lines := map[string][]int{}
	for _, sm := range m.val.members {
		line, _ := lineCol(clean, sm.keyOff)
		lines[sm.key] = append(lines[sm.key], line)
	}
	var out []Imported
	for _, sm := range uniqMembers(m.val) {
		imp := Imported{Name: sm.key, From: f.From, File: f.Path, Scope: f.Scope}
		line, _ := lineCol(clean, sm.keyOff)
		if ls := lines[sm.key]; len(ls) > 1 {
			imp.Skip = fmt.Sprintf("the file defines it twice (lines %d and %d); mcphost imports neither rather than guess which one is meant", ls[0], ls[len(ls)-1])
			out = append(out, imp)
			continue
		}
		convertJSON(&imp, sm.val, vars)
		if imp.Skip != "" {
			imp.Skip += fmt.Sprintf(" (line %d)", line)
		}
		out = append(out, imp)
	}
	return out, nil
}

// claudeProject finds the entry of ~/.claude.json's "projects" for dir:
// Claude Code keys it by the project's absolute path.
func claudeProject(root *node, dir string) *node {
	projects := lastMember(root, "projects")
	if projects == nil || projects.val.kind != kindObject || dir == "" {
		return nil
	}
	want := []string{filepath.Clean(dir), realPath(dir)}
	for _, p := range slices.Backward(projects.val.members) {
		if p.val.kind == kindObject && (slices.Contains(want, filepath.Clean(p.key)) || slices.Contains(want, realPath(p.key))) {
			return p.val
		}
	}
	return nil
}

// uniqMembers keeps the last of each key, in the order of the kept ones.
func uniqMembers(n *node) []member {
	last := map[string]int{}
	for i, m := range n.members {
		last[m.key] = i
	}
	var out []member
	for i, m := range n.members {
		if last[m.key] == i {
			out = append(out, m)
		}
	}
	return out
}

// convertJSON fills imp from a server entry in the mcpServers or servers
// dialect.
func convertJSON(imp *Imported, v *node, vars varRules) {
	if v.kind != kindObject {
		imp.Skip = fmt.Sprintf("its entry is %s, not an object", v.kind)
		return
	}
	e := &imp.Entry
	str := func(m member) (string, bool) {
		if m.val.kind != kindString {
			imp.Skip = fmt.Sprintf("%q is %s, not a string", m.key, m.val.kind)
			return "", false
		}
		return m.val.str, true
	}
	strList := func(m member) ([]string, bool) {
		if m.val.kind != kindArray {
			imp.Skip = fmt.Sprintf("%q is %s, not an array of strings", m.key, m.val.kind)
			return nil, false
		}
		var out []string
		for _, el := range m.val.elems {
			if el.kind != kindString {
				imp.Skip = fmt.Sprintf("%q holds %s, not only strings", m.key, el.kind)
				return nil, false
			}
			out = append(out, el.str)
		}
		return out, true
	}
	strMap := func(m member) (map[string]string, bool) {
		if m.val.kind != kindObject {
			imp.Skip = fmt.Sprintf("%q is %s, not an object of strings", m.key, m.val.kind)
			return nil, false
		}
		out := map[string]string{}
		for _, kv := range uniqMembers(m.val) {
			switch kv.val.kind {
			case kindString:
				out[kv.key] = kv.val.str
			case kindNumber, kindBool:
				// VS Code accepts numbers in "env"; they mean their text.
				out[kv.key] = string(kv.val.str)
				if kv.val.kind == kindBool {
					out[kv.key] = fmt.Sprint(kv.val.b)
				}
			case kindNull:
				// VS Code: null removes a variable from the environment,
				// which mcphost has no way to say.
				imp.Notes = append(imp.Notes, fmt.Sprintf("%s %q is null there (unset it); left out", m.key, kv.key))
			default:
				imp.Skip = fmt.Sprintf("%s %q is %s, not a string", m.key, kv.key, kv.val.kind)
				return nil, false
			}
		}
		return out, true
	}
	var typ string
	for _, m := range uniqMembers(v) {
		if m.val.kind == kindNull {
			continue
		}
		ok := true
		switch m.key {
		case "command":
			e.Command, ok = str(m)
		case "args":
			e.Args, ok = strList(m)
		case "env":
			e.Env, ok = strMap(m)
		case "cwd":
			e.Cwd, ok = str(m)
		case "type", "transportType":
			typ, ok = str(m)
		case "url", "serverUrl":
			e.URL, ok = str(m)
		case "headers":
			e.Headers, ok = strMap(m)
		case "disabled":
			if m.val.kind == kindBool {
				e.Disabled = m.val.b
			}
		case "trust":
			if m.val.kind == kindBool {
				e.Trust = m.val.b // read only to be refused (finish)
			}
		case "autoApprove", "alwaysAllow":
			imp.Notes = append(imp.Notes, fmt.Sprintf("%q is not imported: a server entry cannot approve tools in mcphost; write \"permissions\" rules if you want them", m.key))
		case "envFile":
			imp.Notes = append(imp.Notes, `"envFile" is not imported: mcphost does not read env files; put the variables in "env"`)
		}
		if !ok {
			return
		}
	}
	if imp.Skip = vars.apply(imp); imp.Skip != "" {
		return
	}
	switch t := strings.ToLower(typ); {
	case t == "" || t == "stdio" && e.Command != "":
	case transports[t] == TransportHTTP || transports[t] == TransportSSE:
		e.Type = transports[t]
	case t == "stdio":
	default:
		imp.Skip = fmt.Sprintf("its transport %q is not one mcphost speaks", typ)
		return
	}
	finish(imp)
}

// finish checks what every converted entry needs and sets the type of a
// remote one.
func finish(imp *Imported) {
	e := &imp.Entry
	switch {
	case e.Command == "" && e.URL == "":
		imp.Skip = "it has neither a command nor a URL"
	case e.Command != "" && e.URL != "":
		imp.Skip = "it has both a command and a URL"
	case e.URL != "":
		if e.Type == "" {
			e.Type = TransportHTTP
		}
		e.Env, e.Args, e.Cwd = nil, nil, ""
	default:
		e.Type, e.Headers = "", nil
	}
	if len(e.Env) == 0 {
		e.Env = nil
	}
	if len(e.Headers) == 0 {
		e.Headers = nil
	}
	if e.Trust {
		imp.Notes = append(imp.Notes, `"trust" is not imported: trust the server in mcphost yourself (--trust NAME, or "trust": true in your config)`)
	}
	e.Trust = false // never imported: trust is the person's to give, in mcphost
}

// stripJSONC blanks out // and /* */ comments and trailing commas, the
// extensions VS Code and Cursor accept, keeping every other byte (and every
// line break) where it is.
func stripJSONC(data []byte) []byte {
	out := []byte(nil)
	blank := func(i int) {
		if out == nil {
			out = append([]byte(nil), data...)
		}
		if out[i] != '\n' && out[i] != '\r' {
			out[i] = ' '
		}
	}
	lastComma := -1 // a ',' not yet followed by a value
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			i = jsonscan.SkipString(data, i) - 1
			lastComma = -1
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for ; i < len(data) && data[i] != '\n'; i++ {
				blank(i)
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := strings.Index(string(data[i+2:]), "*/")
			stop := len(data)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				blank(i)
			}
			i--
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				blank(lastComma)
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	if out == nil {
		return data
	}
	return out
}

// varStyle is how a host expands ${...} in its entries.
type varStyle int

const (
	// varsLiteral: the host expands nothing, so "${" is literal text.
	varsLiteral varStyle = iota
	// varsShell: ${NAME} and ${NAME:-default}, as mcphost writes them.
	varsShell
	// varsEditor: VS Code's and Cursor's ${env:NAME}, ${userHome},
	// ${workspaceFolder}, ${input:ID}, ….
	varsEditor
)

type varRules struct {
	style     varStyle
	home      string
	workspace string // "" when the file is not a project's
}

func varsFor(f ImportFile, pl ImportPlace) varRules {
	r := varRules{home: pl.Home}
	if f.Scope == "project" {
		r.workspace = pl.WorkDir
	}
	switch f.From {
	case FromClaudeCode:
		r.style = varsShell
	case FromCursor, FromVSCode:
		r.style = varsEditor
	}
	return r
}

// translate rewrites s for a field that mcphost expands (expanded) or takes
// literally, returning the reference it cannot carry over, if any.
func (r varRules) translate(s string, expanded bool) (string, string) {
	if !strings.Contains(s, "${") {
		return s, ""
	}
	switch r.style {
	case varsLiteral:
		if expanded {
			return strings.ReplaceAll(s, "${", "$${"), ""
		}
		return s, ""
	case varsShell:
		if expanded {
			return s, ""
		}
		i := strings.Index(s, "${")
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return s, ""
		}
		return "", s[i : i+end+1]
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", s[i:]
		}
		ref := s[i : i+end+1]
		body := ref[2 : len(ref)-1]
		name, isEnv := strings.CutPrefix(body, "env:")
		switch {
		case isEnv && expanded && validVarName(name):
			// The editors read an unset variable as empty; mcphost's
			// ${NAME} would refuse to load, ${NAME:-} is the same.
			b.WriteString("${" + name + ":-}")
		case body == "userHome" && r.home != "":
			b.WriteString(r.home)
		case body == "workspaceFolder" && r.workspace != "":
			b.WriteString(r.workspace)
		case body == "workspaceFolderBasename" && r.workspace != "":
			b.WriteString(filepath.Base(r.workspace))
		case body == "pathSeparator" || body == "/":
			b.WriteByte(filepath.Separator)
		default:
			return "", ref
		}
		i += len(ref)
	}
	return b.String(), ""
}

// apply translates every field of imp's entry, and returns why the server
// must be skipped: a reference in its command, arguments, working directory
// or URL that cannot be carried over. Such a value in "env" or "headers" is
// left out with a note instead.
func (r varRules) apply(imp *Imported) string {
	e := &imp.Entry
	why := func(field, ref string) string {
		return fmt.Sprintf("its %s uses %s, which mcphost cannot resolve%s", field, ref, inputHint(ref))
	}
	var ref string
	if e.Command, ref = r.translate(e.Command, false); ref != "" {
		return why(`"command"`, ref)
	}
	if e.Cwd, ref = r.translate(e.Cwd, false); ref != "" {
		return why(`"cwd"`, ref)
	}
	if e.URL, ref = r.translate(e.URL, true); ref != "" {
		return why(`"url"`, ref)
	}
	for i, a := range e.Args {
		if e.Args[i], ref = r.translate(a, true); ref != "" {
			return why(`"args"`, ref)
		}
	}
	for _, m := range []struct {
		field string
		vals  map[string]string
	}{{"env", e.Env}, {"headers", e.Headers}} {
		for _, k := range slices.Sorted(maps.Keys(m.vals)) {
			v, ref := r.translate(m.vals[k], true)
			if ref != "" {
				delete(m.vals, k)
				imp.Notes = append(imp.Notes, fmt.Sprintf("%s %q is left out: its value uses %s, which mcphost cannot resolve%s; set it yourself", m.field, k, ref, inputHint(ref)))
				continue
			}
			m.vals[k] = v
		}
	}
	return ""
}

// inputHint explains a VS Code input variable.
func inputHint(ref string) string {
	if strings.HasPrefix(ref, "${input:") {
		return " (it is an input VS Code asks for when the server starts)"
	}
	return ""
}
