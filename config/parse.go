package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcphost/mcphost/internal/netcheck"
	"github.com/mcphost/mcphost/pgstore"
)

// Keys mcphost reads, in the order suggestions prefer them.
var (
	topKeys        = []string{"mcpServers", "permissions", "model", "models", "toolSearch", "notify", "samplingBudget", "telemetry", "askVia", "serve", "store"}
	serverKeys     = []string{"command", "args", "env", "cwd", "type", "url", "headers", "trust", "protocolVersion", "tasks", "startTimeout", "callTimeout", "disabled", "oauth", "alwaysLoad", "allowInsecureHTTP"}
	oauthKeys      = []string{"clientId", "clientSecret", "scopes"}
	permissionKeys = []string{"autoApprove", "allow", "ask", "deny"}
)

// Keys that other MCP hosts write and mcphost deliberately ignores, with the
// reason or the mcphost equivalent. They are warned about, never fatal.
var (
	topForeign = map[string]string{
		"$schema":        "", // for editors; accepted silently
		"globalShortcut": "it is a Claude Desktop setting",
		"servers":        `mcphost reads servers from "mcpServers"`,
		"inputs":         "input prompts are not supported; refer to environment variables with ${NAME}",
	}
	serverForeign = map[string]string{
		"autoApprove":   `a server entry cannot approve tools; add rules to "permissions" in your own config`,
		"alwaysAllow":   `a server entry cannot approve tools; add rules to "permissions" in your own config`,
		"timeout":       `hosts disagree on its unit; use "callTimeout" with a unit, like "60s"`,
		"description":   "mcphost does not use it",
		"transportType": `use "type"`,
		"httpUrl":       `use "url" with "type": "http"`,
		"envFile":       `set variables in "env"`,
		"includeTools":  `use "permissions" rules to limit tools`,
		"excludeTools":  `use "permissions" rules to limit tools`,
	}
	permissionForeign = map[string]string{
		"defaultMode": `use "autoApprove"`,
	}
)

var transports = map[string]string{
	"stdio":           TransportStdio,
	"http":            TransportHTTP,
	"streamable-http": TransportHTTP,
	"streamablehttp":  TransportHTTP,
	"sse":             TransportSSE,
}

// Parse parses one config file. file names it in messages and in
// Server.File; src says how far it is trusted: a SourceProject file
// contributes servers only, and its "trust", "permissions" and "model" are
// ignored with a warning. ${NAME} references are expanded from the process
// environment; Load takes an injected one.
//
// The error, if any, is an *Error positioned in the file. Warnings (unknown
// or ignored keys, duplicates) come in file order and are returned even
// with an error.
func Parse(file string, data []byte, src Source) (*Config, []Warning, error) {
	r, err := parse(file, data, src, os.Getenv)
	return r.cfg, r.warnings, err
}

// parsed is one file's result plus what Load needs to explain merges.
type parsed struct {
	cfg       *Config // nil on error
	warnings  []Warning
	serverPos map[string][2]int // server name → line and column of its key
}

func parse(file string, data []byte, src Source, getenv func(string) string) (parsed, error) {
	return parseFile(file, data, src, getenv, false)
}

// parseForEdit parses file as parse does, except that a problem with a
// project file's entry is an error, as in the person's own file: an edit
// is the person's, and the loader's leniency toward a project file (see
// parser.skip) would only hide the problem from them.
func parseForEdit(file string, data []byte, src Source, getenv func(string) string) (parsed, error) {
	return parseFile(file, data, src, getenv, true)
}

func parseFile(file string, data []byte, src Source, getenv func(string) string, strict bool) (parsed, error) {
	p := &parser{file: file, data: data, src: src, getenv: getenv, pos: newPositioner(data), serverOff: map[string]int{}, strict: strict}
	p.cfg.Files = []string{file}
	err := p.parse()
	r := parsed{warnings: p.sortedWarnings()}
	if err != nil {
		return r, err
	}
	slices.SortFunc(p.cfg.Servers, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	r.cfg = &p.cfg
	r.serverPos = make(map[string][2]int, len(p.serverOff))
	pos := newPositioner(data)
	names := make([]string, 0, len(p.serverOff))
	for name := range p.serverOff {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(p.serverOff[a], p.serverOff[b]) })
	for _, name := range names {
		line, col := pos.pos(p.serverOff[name])
		r.serverPos[name] = [2]int{line, col}
	}
	return r, nil
}

type parser struct {
	file      string
	data      []byte
	src       Source
	getenv    func(string) string
	cfg       Config
	pos       *positioner // for rules, which come in file order
	warnings  []offWarning
	serverOff map[string]int
	// strict makes a problem with a project file's entry an error rather
	// than a reason to skip the entry (see parseForEdit).
	strict bool
}

// offWarning is a warning before its position is worked out. When ref is
// set, the message needs a second position and is made by ref.
type offWarning struct {
	off    int
	msg    string
	refOff int
	ref    func(line, col int) string
}

// maxWarnings bounds the warnings reported for one file, so a hostile
// project file cannot flood the terminal.
const maxWarnings = 100

func (p *parser) errorf(off int, format string, args ...any) *Error {
	line, col := lineCol(p.data, off)
	return &Error{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), off: off}
}

func (p *parser) warnf(off int, format string, args ...any) {
	p.warnings = append(p.warnings, offWarning{off: off, msg: fmt.Sprintf(format, args...)})
}

func (p *parser) sortedWarnings() []Warning {
	slices.SortStableFunc(p.warnings, func(a, b offWarning) int { return cmp.Compare(a.off, b.off) })
	pos, refPos := newPositioner(p.data), newPositioner(p.data)
	var out []Warning
	for i, w := range p.warnings {
		line, col := pos.pos(w.off)
		if i == maxWarnings {
			out = append(out, Warning{File: p.file, Line: line, Col: col,
				Message: fmt.Sprintf("%d more warnings about this file are not shown", len(p.warnings)-i)})
			break
		}
		msg := w.msg
		if w.ref != nil {
			msg = w.ref(refPos.pos(w.refOff))
		}
		out = append(out, Warning{File: p.file, Line: line, Col: col, Message: msg})
	}
	return out
}

// topMembers parses the file, which must hold one JSON object, and returns
// its members as uniq keeps them.
func (p *parser) topMembers(where string) ([]member, error) {
	root, serr := parseTree(p.data)
	if serr != nil {
		return nil, p.errorf(serr.off, "%s", serr.msg)
	}
	if root.kind != kindObject {
		return nil, p.errorf(root.start, "expected a JSON object at the top level, got %s", root.kind)
	}
	return p.uniq(root, where), nil
}

func (p *parser) parse() error {
	const where = "at the top level"
	top, err := p.topMembers(where)
	if err != nil {
		return err
	}
	for _, m := range top {
		if m.val.kind == kindNull && slices.Contains(topKeys, m.key) {
			continue
		}
		var err error
		switch m.key {
		case "mcpServers":
			err = p.servers(m)
		case "permissions":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"permissions" is ignored in a project file: a project file may add servers but cannot add rules or change auto-approval`)
				continue
			}
			err = p.permissions(m)
		case "model":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"model" is ignored in a project file: only your own config or --model chooses the model`)
				continue
			}
			p.cfg.Model, err = p.str(m.val, quote(m.key), where)
		case "models":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"models" is ignored in a project file: only your own config sets model limits`)
				continue
			}
			err = p.models(m)
		case "toolSearch":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"toolSearch" is ignored in a project file: only your own config chooses what the model is offered`)
				continue
			}
			p.cfg.ToolSearch, err = p.str(m.val, quote(m.key), where)
			if err == nil && !slices.Contains(ToolSearchModes, p.cfg.ToolSearch) {
				err = p.errorf(m.val.start, `invalid "toolSearch" %q; expected one of %s`, short(p.cfg.ToolSearch), strings.Join(ToolSearchModes, ", "))
			}
		case "notify":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"notify" is ignored in a project file: only your own config chooses how mcphost calls you`)
				continue
			}
			p.cfg.Notify, err = p.str(m.val, quote(m.key), where)
			if err == nil && !slices.Contains(NotifyModes, p.cfg.Notify) {
				err = p.errorf(m.val.start, `invalid "notify" %q; expected one of %s (leave it out for both the bell and a desktop notification)`, short(p.cfg.Notify), strings.Join(NotifyModes, ", "))
			}
		case "samplingBudget":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"samplingBudget" is ignored in a project file: only your own config lets servers spend more of your model`)
				continue
			}
			k, cerr := strconv.Atoi(m.val.str)
			if m.val.kind != kindNumber || cerr != nil || k < 0 {
				err = p.errorf(m.val.start, `expected a whole number of tokens, 0 or more, for "samplingBudget", like %d (0 refuses every sampling request)`, DefaultSamplingBudget)
				break
			}
			p.cfg.SamplingBudget = &k
		case "telemetry":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"telemetry" is ignored in a project file: only your own config (or a team's managed policy) chooses where mcphost reports`)
				continue
			}
			p.cfg.Telemetry, err = p.telemetry(m)
		case "serve":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"serve" is ignored in a project file: only your own config says who may call mcphost serve`)
				continue
			}
			p.cfg.Serve, err = p.serve(m)
		case "askVia":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"askVia" is ignored in a project file: only your own config (or a team's managed policy) says which channels may approve a call`)
				continue
			}
			p.cfg.AskVia, err = p.askVia(m)
		case "store":
			if p.src == SourceProject {
				p.warnf(m.keyOff, `"store" is ignored in a project file: only your own config says where mcphost keeps its audit chain and held calls`)
				continue
			}
			p.cfg.Store, err = p.str(m.val, quote(m.key), where)
			if err == nil {
				if cerr := pgstore.CheckURL(p.cfg.Store); cerr != nil {
					p.cfg.Store = ""
					err = p.errorf(m.val.start, `invalid "store": %v`, cerr)
				}
			}
		case "approvers":
			p.warnf(m.keyOff, `"approvers" is ignored here: only the managed policy routes calls to an approver group`)
			continue
		default:
			p.unknown(m, where, topKeys, topForeign)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// uniq returns the members of object n, keeping only the last of each key
// (as encoding/json and JavaScript do) and warning about the others.
func (p *parser) uniq(n *node, where string) []member {
	last := make(map[string]int, len(n.members))
	for i, m := range n.members {
		last[m.key] = i
	}
	out := make([]member, 0, len(last))
	for i, m := range n.members {
		if j := last[m.key]; j != i {
			key := short(m.key)
			p.warnings = append(p.warnings, offWarning{off: m.keyOff, refOff: n.members[j].keyOff, ref: func(line, col int) string {
				return fmt.Sprintf("duplicate key %q %s; this one is ignored, the one at %d:%d is used", key, where, line, col)
			}})
			continue
		}
		out = append(out, m)
	}
	return out
}

// unknown warns about a key mcphost does not read.
func (p *parser) unknown(m member, where string, known []string, foreign map[string]string) {
	if why, ok := foreign[m.key]; ok {
		if why != "" {
			p.warnf(m.keyOff, "%q %s is ignored: %s", m.key, where, why)
		}
		return
	}
	if s := suggest(m.key, known); s != "" {
		p.warnf(m.keyOff, "unknown key %q %s; did you mean %q?", short(m.key), where, s)
		return
	}
	p.warnf(m.keyOff, "unknown key %q %s is ignored", short(m.key), where)
}

func (p *parser) servers(m member) error {
	n := m.val
	if n.kind != kindObject {
		return p.errorf(n.start, `expected an object for "mcpServers", got %s; it maps names to servers: {"name": {"command": "..."}}`, n.kind)
	}
	first := map[string]int{} // name → offset of its first key
	twice := map[string]bool{}
	for _, sm := range n.members {
		if off, ok := first[sm.key]; ok {
			// The same name twice is never resolved by keeping one: rules
			// name servers, so the one kept would inherit the rules the
			// person wrote for the other.
			twice[sm.key] = true
			if p.src != SourceProject || p.strict {
				e := p.errorf(sm.keyOff, "server %q is defined twice in \"mcpServers\", here and at %s: rules name servers, so a second entry under a name would take the first one's rules; rename or remove one",
					short(sm.key), p.at(off))
				e.Err = twiceError(sm.key)
				return e
			}
			p.warnf(sm.keyOff, "server %q is skipped, and so is the entry at %s: the project file defines it twice, and mcphost starts neither rather than guess which one your consent and rules are for", short(sm.key), p.at(off))
			continue
		}
		first[sm.key] = sm.keyOff
	}
	for _, sm := range n.members {
		if twice[sm.key] {
			continue
		}
		s, err := p.server(sm)
		if err != nil && p.src == SourceProject && !p.strict {
			p.skip(sm, err)
			continue
		}
		if err != nil {
			return err
		}
		p.cfg.Servers = append(p.cfg.Servers, s)
		p.serverOff[s.Name] = sm.keyOff
	}
	return nil
}

// twiceError is the Err of the *Error for a server name defined twice in
// one file: removing that server is how the file is fixed, so RemoveServer
// lets it pass.
type twiceError string

func (e twiceError) Error() string { return fmt.Sprintf("server %q is defined twice", string(e)) }

// skip turns the problem err with the project file's entry sm into a
// warning: a project file comes with whatever directory mcphost runs in,
// and a bad entry in it must not stop mcphost (and with it the gate in
// front of the person's own servers). The entry is left out; nothing of it
// starts.
func (p *parser) skip(sm member, err error) {
	off, msg := sm.keyOff, err.Error()
	var e *Error
	if errors.As(err, &e) {
		off, msg = e.off, e.Msg
	}
	p.warnf(off, "server %q is skipped: %s (a problem in a project file's entry never stops mcphost; your own servers start)", short(sm.key), msg)
}

func (p *parser) server(m member) (Server, error) {
	name, n := m.key, m.val
	if why := NameProblem(name); why != "" {
		return Server{}, p.errorf(m.keyOff, "%s", why)
	}
	if why := reservedName(name); why != "" {
		return Server{}, p.errorf(m.keyOff, "%s", why)
	}
	if n.kind != kindObject {
		return Server{}, p.errorf(n.start, "expected an object for server %q, got %s", name, n.kind)
	}
	where := fmt.Sprintf("in server %q", name)
	s := Server{
		Name:            name,
		ProtocolVersion: DefaultProtocolVersion,
		Source:          p.src,
		File:            p.file,
	}
	members := p.uniq(n, where)
	// A disabled server is not started, so its unset variables are no error.
	for _, f := range members {
		if f.key == "disabled" && f.val.kind == kindBool {
			s.Disabled = f.val.b
		}
	}
	vars := map[string]bool{}
	// expandAt expands one string value found at v; label says where it is.
	// When the value reads a variable, keep gets it as written (see
	// Server.Shown).
	expandAt := func(str string, v *node, label string, keep func(string)) (string, error) {
		out, names, err := expand(str, p.getenv, s.Disabled)
		for _, n := range names {
			vars[n] = true
		}
		if err == nil && len(names) > 0 {
			keep(str)
		}
		if err != nil {
			off := v.start
			if ee, ok := err.(*expandError); ok {
				// Point at the reference itself when it is written plainly.
				if i := bytes.Index(p.data[v.start:v.end], []byte(ee.ref)); i >= 0 {
					off += i
				}
			}
			return "", p.errorf(off, "%v (in %s %s)", err, label, where)
		}
		return out, nil
	}

	present := map[string]member{}
	var typ string
	for _, f := range members {
		v, label := f.val, quote(f.key)
		if v.kind == kindNull && slices.Contains(serverKeys, f.key) {
			continue
		}
		present[f.key] = f
		var err error
		switch f.key {
		case "command":
			s.Command, err = p.str(v, label, where)
			if err == nil && strings.TrimSpace(s.Command) == "" {
				err = p.errorf(v.start, "%s %s is empty", label, where)
			}
			if err == nil && strings.Contains(s.Command, "${") {
				p.warnf(v.start, `%s %s is not expanded: "${" is taken literally there (only "args", "env", "url" and "headers" are expanded)`, label, where)
			}
		case "args":
			s.Args, err = p.strList(v, label, where)
			for i := 0; err == nil && i < len(s.Args); i++ {
				s.Args[i], err = expandAt(s.Args[i], v.elems[i], fmt.Sprintf("%s[%d]", label, i), func(w string) {
					if s.keep().args == nil {
						s.written.args = map[int]string{}
					}
					s.written.args[i] = w
				})
			}
		case "env":
			s.Env, err = p.strMap(v, label, where, func(e member) (string, error) {
				if e.key == "" || strings.ContainsAny(e.key, "=\x00") {
					return "", p.errorf(e.keyOff, "invalid environment variable name %q %s", short(e.key), where)
				}
				return expandAt(e.val.str, e.val, fmt.Sprintf("%s.%q", label, short(e.key)), func(w string) {
					if s.keep().env == nil {
						s.written.env = map[string]string{}
					}
					s.written.env[e.key] = w
				})
			})
		case "cwd":
			s.Cwd, err = p.str(v, label, where)
		case "type":
			typ, err = p.str(v, label, where)
			if err == nil {
				t, ok := transports[strings.ToLower(typ)]
				if !ok {
					err = p.errorf(v.start, `unknown "type" %q %s; use "stdio", "http" or "sse"`, short(typ), where)
				}
				typ = t
			}
		case "url":
			s.URL, err = p.str(v, label, where)
			if err == nil {
				s.URL, err = expandAt(s.URL, v, label, func(w string) { s.keep().url = &w })
			}
		case "headers":
			s.Headers, err = p.strMap(v, label, where, func(h member) (string, error) {
				if !validHeaderName(h.key) {
					return "", p.errorf(h.keyOff, "invalid header name %q %s", short(h.key), where)
				}
				out, err := expandAt(h.val.str, h.val, fmt.Sprintf("%s.%q", label, short(h.key)), func(w string) {
					if s.keep().headers == nil {
						s.written.headers = map[string]string{}
					}
					s.written.headers[h.key] = w
				})
				if err == nil && strings.ContainsAny(out, "\r\n\x00") {
					return "", p.errorf(h.val.start, "header %q %s contains a line break or NUL character", short(h.key), where)
				}
				return out, err
			})
		case "oauth":
			if v.kind != kindObject {
				err = p.typeError(v, "an object", label, where)
				break
			}
			s.OAuth = &OAuthClient{}
			for _, o := range p.uniq(v, fmt.Sprintf("in %s %s", label, where)) {
				olabel := fmt.Sprintf("%s.%q", label, o.key)
				switch o.key {
				case "clientId":
					s.OAuth.ClientID, err = p.str(o.val, olabel, where)
				case "clientSecret":
					if s.OAuth.ClientSecret, err = p.str(o.val, olabel, where); err == nil {
						s.OAuth.ClientSecret, err = expandAt(s.OAuth.ClientSecret, o.val, olabel, func(w string) { s.keep().secret = &w })
					}
				case "scopes":
					s.OAuth.Scopes, err = p.strList(o.val, olabel, where)
				default:
					p.warnf(o.keyOff, "unknown key %q in %s %s; known keys: %s", short(o.key), label, where, strings.Join(oauthKeys, ", "))
				}
				if err != nil {
					break
				}
			}
		case "trust":
			if p.src == SourceProject {
				p.warnf(f.keyOff, `"trust" %s is ignored: a project file cannot grant trust; project servers are trusted through consent, not by the file`, where)
				continue
			}
			s.Trust, err = p.boolean(v, label, where)
			s.distrusted = err == nil && !s.Trust
		case "protocolVersion":
			s.ProtocolVersion, err = p.str(v, label, where)
			if err == nil && !isDate(s.ProtocolVersion) && s.ProtocolVersion != ProtocolAuto {
				err = p.errorf(v.start, `invalid "protocolVersion" %q %s; expected a date such as %q, or %q`, short(s.ProtocolVersion), where, DefaultProtocolVersion, ProtocolAuto)
			}
		case "tasks":
			s.Tasks, err = p.str(v, label, where)
			if err == nil && !slices.Contains(TaskModes, s.Tasks) {
				err = p.errorf(v.start, `invalid "tasks" %q %s; expected one of %s`, short(s.Tasks), where, strings.Join(TaskModes, ", "))
			}
		case "startTimeout":
			s.StartTimeout, err = p.duration(v, label, where)
		case "callTimeout":
			s.CallTimeout, err = p.duration(v, label, where)
		case "disabled":
			s.Disabled, err = p.boolean(v, label, where)
		case "allowInsecureHTTP":
			if p.src == SourceProject {
				p.warnf(f.keyOff, `"allowInsecureHTTP" %s is ignored: a project file cannot have your credentials sent in clear; only your own config can`, where)
				continue
			}
			s.AllowInsecureHTTP, err = p.boolean(v, label, where)
		case "alwaysLoad":
			if p.src == SourceProject {
				p.warnf(f.keyOff, `"alwaysLoad" %s is ignored: a project file cannot have its tools offered in full past tool search; list them in your own config`, where)
				continue
			}
			s.AlwaysLoad, err = p.strList(v, label, where)
		default:
			p.unknown(f, where, serverKeys, serverForeign)
		}
		if err != nil {
			return Server{}, err
		}
	}
	if err := p.checkNUL(s, present, where); err != nil {
		return Server{}, err
	}

	_, hasCmd := present["command"]
	urlM, hasURL := present["url"]
	typeM := present["type"]
	switch {
	case !hasCmd && !hasURL:
		return Server{}, p.errorf(m.keyOff, `server %q needs "command" (a program to start) or "url" (a remote server)`, name)
	case hasCmd && hasURL:
		return Server{}, p.errorf(urlM.keyOff, `server %q has both "command" and "url"; keep one`, name)
	}
	switch {
	case typ != "":
		s.Transport = typ
	case hasCmd:
		s.Transport = TransportStdio
	default:
		s.Transport = TransportHTTP
	}
	if s.Transport == TransportStdio && !hasCmd {
		return Server{}, p.errorf(typeM.val.start, `server %q has "type": %q but no "command"`, name, typeM.val.str)
	}
	if s.Transport != TransportStdio && !hasURL {
		return Server{}, p.errorf(typeM.val.start, `server %q has "type": %q but no "url"; a %s server is reached by URL`, name, typeM.val.str, s.Transport)
	}
	if hasURL && !(s.Disabled && strings.Contains(s.URL, "${")) {
		if why := checkURL(s.URL); why != "" {
			return Server{}, p.errorf(urlM.val.start, "invalid \"url\" %q %s: %s", short(urlM.val.str), where, why)
		}
	}
	if hasURL && s.Transport != TransportStdio && !s.AllowInsecureHTTP {
		if what := credentialsInClear(s); what != "" {
			return Server{}, p.errorf(urlM.val.start, `server %q would get %s over plain http to %s, which is not this machine: anyone on the path could read them; use an https URL, or add "allowInsecureHTTP": true to the entry if the network is yours`,
				name, what, shownHost(s))
		}
	}
	ignored := []string{"headers"}
	if s.Transport != TransportStdio {
		ignored = []string{"args", "env", "cwd"}
	}
	for _, k := range ignored {
		if f, ok := present[k]; ok {
			p.warnf(f.keyOff, "%q %s is ignored: it does not apply to a %s server", k, where, s.Transport)
		}
	}
	for v := range vars {
		s.Vars = append(s.Vars, v)
	}
	slices.Sort(s.Vars)
	return s, nil
}

// credentialsInClear says which credentials the HTTP entry s would send
// over plain http to a host that is not this machine — its "headers", the
// user and password of its URL, values of its URL read from the
// environment — or "" when it sends none that way. A model key and an
// OAuth token are refused on such a transport (see netcheck.IsLoopbackHost);
// what the config itself carries is held to the same rule.
func credentialsInClear(s Server) string {
	return inClear(s.URL, len(s.Headers) > 0, s.written != nil && s.written.url != nil)
}

// inClear says which credentials a request to rawURL would carry over
// plain http to a host that is not this machine: headers (when it has
// any), the URL's user and password, values the URL read from the
// environment (when fromEnv); "" when none goes that way.
func inClear(rawURL string, headers, fromEnv bool) string {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || netcheck.IsLoopbackHost(u.Hostname()) {
		return ""
	}
	var what []string
	if headers {
		what = append(what, `its "headers"`)
	}
	if u.User != nil {
		what = append(what, "the user and password in its URL")
	}
	if fromEnv {
		what = append(what, "the values its URL reads from your environment")
	}
	return strings.Join(what, " and ")
}

// telemetryInClear refuses an export whose credentials would cross the
// network in clear, as a server entry's are, unless the setting says
// "allowInsecureHTTP": true.
func (p *parser) telemetryInClear(m member, endpoint string, headers, allowed bool) error {
	if allowed {
		return nil
	}
	if what := inClear(endpoint, headers, false); what != "" {
		host := "another machine"
		if u, err := url.Parse(endpoint); err == nil {
			host = short(u.Host)
		}
		return p.errorf(m.val.start, `"telemetry" would send %s over plain http to %s, which is not this machine: anyone on the path could read them; use an https endpoint, or add "allowInsecureHTTP": true to "telemetry" if the network is yours`, what, host)
	}
	return nil
}

// shownHost names the host of s's URL in a message, unless it was read
// from the environment.
func shownHost(s Server) string {
	if u, err := url.Parse(s.Shown().URL); err == nil && u.Host != "" {
		return short(u.Host)
	}
	return "a host read from your environment"
}

// checkNUL rejects NUL bytes that would make starting the process fail.
func (p *parser) checkNUL(s Server, present map[string]member, where string) error {
	bad := func(key string) error {
		f := present[key]
		return p.errorf(f.val.start, "%q %s contains a NUL character", key, where)
	}
	if strings.ContainsRune(s.Command, 0) {
		return bad("command")
	}
	if strings.ContainsRune(s.Cwd, 0) {
		return bad("cwd")
	}
	for _, a := range s.Args {
		if strings.ContainsRune(a, 0) {
			return bad("args")
		}
	}
	for _, v := range s.Env {
		if strings.ContainsRune(v, 0) {
			return bad("env")
		}
	}
	return nil
}

func (p *parser) permissions(m member) error {
	n := m.val
	if n.kind != kindObject {
		return p.errorf(n.start, `expected an object for "permissions", got %s`, n.kind)
	}
	const where = `in "permissions"`
	for _, f := range p.uniq(n, where) {
		v := f.val
		if v.kind == kindNull && slices.Contains(permissionKeys, f.key) {
			continue
		}
		switch f.key {
		case "autoApprove":
			level, err := p.str(v, quote(f.key), where)
			if err != nil {
				return err
			}
			if !slices.Contains(AutoApproveLevels, level) {
				return p.errorf(v.start, `unknown "autoApprove" level %q; use "none", "reads" or "additive"`, short(level))
			}
			p.cfg.AutoApprove = level
		case "allow", "ask", "deny":
			if err := p.rules(f, where); err != nil {
				return err
			}
		default:
			p.unknown(f, where, permissionKeys, permissionForeign)
		}
	}
	return nil
}

// rules appends the rules of f, a "permissions" member named after their
// effect, to p.cfg.Rules.
func (p *parser) rules(f member, where string) error {
	v := f.val
	if v.kind != kindArray {
		return p.errorf(v.start, "expected an array of rules for %q %s, got %s", f.key, where, v.kind)
	}
	for i, e := range v.elems {
		if e.kind != kindString && e.kind != kindObject {
			return p.errorf(e.start, "expected a rule (a string or an object) in %q[%d] %s, got %s", f.key, i, where, e.kind)
		}
		var raw bytes.Buffer
		if err := json.Compact(&raw, p.data[e.start:e.end]); err != nil {
			return p.errorf(e.start, "rule %q[%d]: %v", f.key, i, err)
		}
		line, col := p.pos.pos(e.start)
		p.cfg.Rules = append(p.cfg.Rules, RuleSpec{
			Effect: f.key, Source: p.file, Index: i, Line: line, Col: col,
			Raw: json.RawMessage(raw.Bytes()),
		})
	}
	return nil
}

// typeError reports a value of the wrong JSON type, with the fix when one is
// obvious.
func (p *parser) typeError(v *node, want, label, where string) error {
	msg := fmt.Sprintf("expected %s for %s %s, got %s", want, label, where, v.kind)
	if want == "a string" && (v.kind == kindNumber || v.kind == kindBool) {
		text := string(p.data[v.start:v.end])
		msg += fmt.Sprintf("; put it in quotes: %q", short(text))
	}
	return p.errorf(v.start, "%s", msg)
}

func (p *parser) str(v *node, label, where string) (string, error) {
	if v.kind != kindString {
		return "", p.typeError(v, "a string", label, where)
	}
	return v.str, nil
}

func (p *parser) boolean(v *node, label, where string) (bool, error) {
	if v.kind != kindBool {
		return false, p.typeError(v, "true or false", label, where)
	}
	return v.b, nil
}

func (p *parser) strList(v *node, label, where string) ([]string, error) {
	if v.kind != kindArray {
		return nil, p.typeError(v, "an array of strings", label, where)
	}
	var out []string
	for i, e := range v.elems {
		s, err := p.str(e, fmt.Sprintf("%s[%d]", label, i), where)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// strMap decodes an object of strings, passing each value through conv.
func (p *parser) strMap(v *node, label, where string, conv func(member) (string, error)) (map[string]string, error) {
	if v.kind != kindObject {
		return nil, p.typeError(v, "an object of strings", label, where)
	}
	var out map[string]string
	for _, f := range p.uniq(v, fmt.Sprintf("in %s %s", label, where)) {
		if f.val.kind != kindString {
			return nil, p.typeError(f.val, "a string", fmt.Sprintf("%s.%q", label, short(f.key)), where)
		}
		s, err := conv(f)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		out[f.key] = s
	}
	return out, nil
}

func (p *parser) duration(v *node, label, where string) (time.Duration, error) {
	if v.kind == kindNumber {
		return 0, p.errorf(v.start, `expected a duration string for %s %s, got number; write it with a unit, like "%ss"`, label, where, short(v.str))
	}
	s, err := p.str(v, label, where)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, p.errorf(v.start, `invalid duration %q for %s %s; write a number with a unit, like "30s" or "2m"`, short(s), label, where)
	}
	if d <= 0 {
		return 0, p.errorf(v.start, "%s %s must be positive, got %q", label, where, short(s))
	}
	return d, nil
}

const maxNameLen = 64

// ValidName reports whether name can name a server: 1 to 64 letters,
// digits, '-', '_' and '.'. Names become prefixes of tool names, so
// nothing else is allowed.
func ValidName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return false
		}
	}
	return true
}

// NameProblem says why name cannot name a server, in words that give the
// rule, or returns "" when ValidName accepts it. The name is quoted and
// cut, so any name may be given.
func NameProblem(name string) string {
	if ValidName(name) {
		return ""
	}
	return fmt.Sprintf("invalid server name %q: use letters, digits, '-', '_' and '.', at most %d characters", short(name), maxNameLen)
}

// HostName is the name mcphost uses for itself where a server's name
// would go: the server part of its own tools' names (the search tool is
// "mcphost__search_tools") and of their audit and call records. No server
// may take it, in any case, or its tools would pass for mcphost's own.
const HostName = "mcphost"

// reservedName returns why name cannot name a server although it is
// valid, or "".
func reservedName(name string) string {
	if strings.EqualFold(name, HostName) {
		return fmt.Sprintf("server name %q is reserved: mcphost uses it for its own tools and records; rename the server", name)
	}
	return ""
}

// checkURL returns why u cannot be a server URL, or "".
func checkURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err // the URL itself may hold a secret; do not repeat it
		}
		return err.Error()
	}
	if parsed.Scheme != "http" && parsed.Scheme != "https" {
		return "it must start with http:// or https://"
	}
	if parsed.Host == "" {
		return "it has no host"
	}
	return ""
}

// validHeaderName reports whether k is an HTTP header field name (an RFC
// 9110 token).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return false
		}
	}
	return true
}

// isDate reports whether s looks like YYYY-MM-DD, the shape of MCP protocol
// versions.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func quote(s string) string { return strconv.Quote(short(s)) }

// short cuts s to a length fit for a message.
func short(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// telemetry decodes the user's "telemetry" setting: an OTLP/HTTP endpoint
// and the headers sent with every export (values may use ${VAR}).
func (p *parser) telemetry(m member) (*Telemetry, error) {
	const where = `in "telemetry"`
	if m.val.kind != kindObject {
		return nil, p.errorf(m.val.start, `expected an object for "telemetry", got %s; write {"endpoint": "http://localhost:4318"}`, m.val.kind)
	}
	t := &Telemetry{}
	allowInsecure := false
	for _, f := range p.uniq(m.val, where) {
		var err error
		switch f.key {
		case "endpoint":
			t.Endpoint, err = p.str(f.val, `"endpoint"`, where)
			if err == nil {
				if u, perr := url.Parse(t.Endpoint); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					err = p.errorf(f.val.start, `the telemetry "endpoint" must be an http or https URL, like "http://localhost:4318"`)
				}
			}
		case "headers":
			t.Headers, err = p.strMap(f.val, `"headers"`, where, func(h member) (string, error) {
				if !validHeaderName(h.key) {
					return "", p.errorf(h.keyOff, "invalid header name %q %s", short(h.key), where)
				}
				out, _, err := expand(h.val.str, p.getenv, false)
				if err != nil {
					return "", p.errorf(h.val.start, "%v (in the header %q %s)", err, short(h.key), where)
				}
				if strings.ContainsAny(out, "\r\n\x00") {
					return "", p.errorf(h.val.start, "header %q %s contains a line break or NUL character", short(h.key), where)
				}
				return out, nil
			})
		case "allowInsecureHTTP":
			allowInsecure, err = p.boolean(f.val, `"allowInsecureHTTP"`, where)
		default:
			p.unknown(f, where, []string{"endpoint", "headers", "allowInsecureHTTP"}, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	if t.Endpoint == "" {
		return nil, p.errorf(m.val.start, `"telemetry" needs an "endpoint", like "http://localhost:4318"`)
	}
	if err := p.telemetryInClear(m, t.Endpoint, len(t.Headers) > 0, allowInsecure); err != nil {
		return nil, err
	}
	return t, nil
}
