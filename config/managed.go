package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// Managed is the policy an administrator sets for every user of a machine,
// read from one file at a fixed place (ManagedPath). It only ever narrows
// what the user's own configuration and flags allow:
//
//   - Rules (its "permissions" "deny" and "ask") are evaluated before
//     every user rule, and no allow rule, flag or grant lifts them;
//   - AutoApprove is a ceiling: a user level above it is lowered to it;
//   - AllowedServers and DeniedServers decide which servers may start at
//     all, whatever file or flag names them;
//   - Trust limits which servers a user may mark trusted;
//   - Audit fixes where the audit log is written;
//   - Serve and Telemetry are read here for the commands that use them;
//   - Approvers route a team serve's held calls to approver groups.
//
// A nil *Managed is no managed policy: every method then allows what the
// user's configuration says.
type Managed struct {
	File string // where it was read from

	// Rules are the managed deny rules, then the ask rules, each in file
	// order. An allow rule is not accepted in a managed file.
	Rules []RuleSpec
	// AutoApprove is the most a user may auto-approve, one of
	// AutoApproveLevels; "" sets no ceiling.
	AutoApprove string

	// AllowedServers, when HasAllowed, lists the only servers that may
	// start; an empty list allows none. DeniedServers never start, even
	// when they are also allowed.
	AllowedServers []ServerMatch
	HasAllowed     bool
	DeniedServers  []ServerMatch

	// Trust, when HasTrust, names the only servers a user may mark trusted;
	// an empty list ("trust": false or []) allows none.
	Trust    []string
	HasTrust bool

	// Audit is where the audit log must be written; "" leaves it to the
	// user. It is absolute.
	Audit string

	// Serve says whether and where mcphost serve may listen on HTTP; nil
	// when the file does not say.
	Serve *ManagedServe
	// Telemetry is an export no user can switch off; nil when the file
	// does not set one.
	Telemetry *ManagedTelemetry
	// AskVia narrows the user's "askVia": for each tier it names, only
	// these channels may approve, whatever the user's file says.
	AskVia AskVia
	// Approvers route calls to an approver group on serve's team page
	// (ApproverRoute); only this file may set them.
	Approvers []ApproverRoute

	// At maps each setting the file makes ("permissions.autoApprove",
	// "allowedServers", "deniedServers", "trust", "audit", "serve",
	// "telemetry") to where it is: "FILE:LINE:COL".
	At map[string]string
}

// ServerMatch is one entry of "allowedServers" or "deniedServers". It
// matches a stdio server by its command and arguments, or an HTTP or SSE
// server by its URL. In every pattern '*' matches any run of characters
// and everything else matches itself; in a URL, a '*' before the path
// stays within the scheme, host and port (see urlMatch).
type ServerMatch struct {
	// Command matches the command as the entry or flag writes it. In
	// "deniedServers" it also matches the command's base name, so that
	// "/usr/bin/npx" is denied by "npx"; in "allowedServers" it does
	// not, so that "./npx" is not allowed by "npx".
	Command string
	// Args, when HasArgs, must match the server's arguments one for one:
	// the same number, each pattern matching its argument. Without
	// "args" any arguments match.
	Args    []string
	HasArgs bool
	// URL matches the server's URL, compared without case, user
	// information or a default port.
	URL string

	At string // "FILE:LINE:COL" of the entry
}

// ManagedServe is the "serve" setting: {"http": false} forbids listening on
// HTTP, {"http": ["127.0.0.1:8080", "localhost:*"]} allows only these
// addresses ('*' as in ServerMatch), {"http": true} any address.
type ManagedServe struct {
	HTTP      bool
	Addresses []string // nil: any address, when HTTP
}

// AllowsHTTP reports whether mcphost serve may listen on HTTP at addr
// ("host:port"). A nil *ManagedServe allows any address.
func (s *ManagedServe) AllowsHTTP(addr string) bool {
	if s == nil {
		return true
	}
	if !s.HTTP {
		return false
	}
	if s.Addresses == nil {
		return true
	}
	for _, a := range s.Addresses {
		if starMatch(strings.ToLower(a), strings.ToLower(addr)) {
			return true
		}
	}
	return false
}

// ManagedTelemetry is the "telemetry" setting: an OTLP endpoint and the
// headers sent with every export. Header values are taken as written (no
// ${VAR}: a user's environment must not change them).
type ManagedTelemetry struct {
	Endpoint string
	Headers  map[string]string // nil when empty
}

// Keys of a managed file. Anything else is an error: a misspelt
// "deniedServers" must not silently deny nothing.
var (
	managedKeys        = []string{"permissions", "allowedServers", "deniedServers", "trust", "serve", "telemetry", "audit", "askVia", "approvers"}
	managedPermKeys    = []string{"deny", "ask", "autoApprove"}
	managedMatchKeys   = []string{"command", "args", "url"}
	managedServeKeys   = []string{"http"}
	managedTelemetryKs = []string{"endpoint", "headers", "allowInsecureHTTP"}
)

// LoadManaged reads the managed policy at path. A missing file is no
// policy: (nil, nil, nil). Any other problem — a file that cannot be read,
// is not a regular file, is not valid JSON, has an unknown key or a bad
// value — is an *Error naming the file and, where it is inside the file,
// the line and column; the caller must then refuse to run any call (fail
// closed), since the policy it would have enforced is unknown.
//
// The warnings say when the file or its directory can be written by
// someone other than the administrator (see managedPermWarnings).
func LoadManaged(path string) (*Managed, []Warning, error) {
	data, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, &Error{File: path, Msg: "cannot read the managed policy: " + strings.TrimPrefix(readFailure(err), "cannot read config file: ") +
			"; no call runs until an administrator fixes or removes it", Err: err}
	}
	warnings := managedPermWarnings(path)
	m, err := ParseManaged(path, data)
	return m, warnings, err
}

// ParseManaged parses the contents of a managed file; file names it in
// errors and in the sources of its rules. The error is an *Error
// positioned in the file.
func ParseManaged(file string, data []byte) (*Managed, error) {
	p := &parser{file: file, data: data, src: SourceUser, getenv: func(string) string { return "" }, pos: newPositioner(data), serverOff: map[string]int{}}
	m := &Managed{File: file, At: map[string]string{}}
	if err := p.managed(m); err != nil {
		return nil, fixFailClosed(err)
	}
	return m, nil
}

// fixFailClosed adds to a managed file's error what it means and who can
// fix it.
func fixFailClosed(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.Msg += " (in the managed policy: no call runs until an administrator fixes it)"
	}
	return err
}

func (p *parser) at(off int) string {
	line, col := lineCol(p.data, off)
	return fmt.Sprintf("%s:%d:%d", p.file, line, col)
}

// strictKey is the error for a key a managed file may not hold.
func (p *parser) strictKey(m member, where string, known []string) error {
	msg := fmt.Sprintf("unknown key %q %s", short(m.key), where)
	if s := suggest(m.key, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; known keys: " + strings.Join(known, ", ")
	}
	return p.errorf(m.keyOff, "%s", msg)
}

func (p *parser) managed(m *Managed) error {
	const where = "at the top level"
	top, err := p.topMembers(where)
	if err != nil {
		return err
	}
	for _, f := range top {
		if f.key == "$schema" {
			continue
		}
		if !slices.Contains(managedKeys, f.key) {
			return p.strictKey(f, where, managedKeys)
		}
		if f.val.kind == kindNull {
			continue
		}
		var err error
		switch f.key {
		case "permissions":
			err = p.managedPermissions(m, f)
		case "allowedServers":
			m.AllowedServers, err = p.serverMatches(f)
			m.HasAllowed = err == nil
		case "deniedServers":
			m.DeniedServers, err = p.serverMatches(f)
		case "trust":
			err = p.managedTrust(m, f)
		case "serve":
			m.Serve, err = p.managedServe(f)
		case "telemetry":
			m.Telemetry, err = p.managedTelemetry(f)
		case "askVia":
			m.AskVia, err = p.askVia(f)
		case "approvers":
			m.Approvers, err = p.approvers(f)
		case "audit":
			m.Audit, err = p.str(f.val, quote(f.key), where)
			if err == nil && !filepath.IsAbs(m.Audit) {
				err = p.errorf(f.val.start, `"audit" must be an absolute path, got %q`, short(m.Audit))
			}
		}
		if err != nil {
			return err
		}
		if _, ok := m.At[f.key]; !ok {
			m.At[f.key] = p.at(f.keyOff)
		}
	}
	return nil
}

func (p *parser) managedPermissions(m *Managed, f member) error {
	n := f.val
	if n.kind != kindObject {
		return p.errorf(n.start, `expected an object for "permissions", got %s`, n.kind)
	}
	const where = `in "permissions"`
	var deny, ask *member
	for _, g := range p.uniq(n, where) {
		switch g.key {
		case "deny":
			deny = &g
		case "ask":
			ask = &g
		case "autoApprove":
			if g.val.kind == kindNull {
				continue
			}
			level, err := p.str(g.val, quote(g.key), where)
			if err != nil {
				return err
			}
			if !slices.Contains(AutoApproveLevels, level) {
				return p.errorf(g.val.start, `unknown "autoApprove" level %q; use "none", "reads" or "additive"`, short(level))
			}
			m.AutoApprove = level
			m.At["permissions.autoApprove"] = p.at(g.keyOff)
		case "allow":
			return p.errorf(g.keyOff, `"allow" rules are not accepted in a managed policy: it holds only what no one can loosen ("deny" and "ask"); allow rules belong in each user's own config`)
		default:
			return p.strictKey(g, where, managedPermKeys)
		}
	}
	// Deny rules first: they are what a reader looks for first, and within
	// an effect the order is the file's either way.
	for _, g := range []*member{deny, ask} {
		if g == nil || g.val.kind == kindNull {
			continue
		}
		if err := p.rules(*g, where); err != nil {
			return err
		}
	}
	m.Rules = p.cfg.Rules
	return nil
}

func (p *parser) serverMatches(f member) ([]ServerMatch, error) {
	v := f.val
	label := quote(f.key)
	if v.kind != kindArray {
		return nil, p.errorf(v.start, `expected an array for %s, got %s; each entry is {"command": "...", "args": [...]} or {"url": "..."}`, label, v.kind)
	}
	out := []ServerMatch{} // not nil: an empty allow list allows nothing
	for i, e := range v.elems {
		entry := fmt.Sprintf("%s[%d]", label, i)
		where := "in " + entry
		if e.kind != kindObject {
			return nil, p.errorf(e.start, `expected an object %s, got %s; write {"command": "..."} or {"url": "..."}`, where, e.kind)
		}
		sm := ServerMatch{At: p.at(e.start)}
		var hasCmd, hasURL bool
		for _, g := range p.uniq(e, where) {
			var err error
			switch g.key {
			case "command":
				sm.Command, err = p.str(g.val, quote(g.key), where)
				hasCmd = true
			case "args":
				sm.Args, err = p.strList(g.val, quote(g.key), where)
				sm.HasArgs = true
				if sm.Args == nil {
					sm.Args = []string{}
				}
			case "url":
				sm.URL, err = p.str(g.val, quote(g.key), where)
				hasURL = true
			default:
				err = p.strictKey(g, where, managedMatchKeys)
			}
			if err != nil {
				return nil, err
			}
		}
		switch {
		case hasCmd && hasURL:
			return nil, p.errorf(e.start, `%s has both "command" and "url"; an entry matches one kind of server, write two entries`, entry)
		case !hasCmd && !hasURL:
			return nil, p.errorf(e.start, `%s needs "command" (for a server that is started) or "url" (for a remote server)`, entry)
		case hasURL && sm.HasArgs:
			return nil, p.errorf(e.start, `%s has "args" with "url"; "args" only applies with "command"`, entry)
		case hasCmd && strings.TrimSpace(sm.Command) == "":
			return nil, p.errorf(e.start, `"command" %s is empty`, where)
		case hasURL && !strings.Contains(sm.URL, "://"):
			return nil, p.errorf(e.start, `"url" %s must start with its scheme, like "https://mcp.example.com/*"`, where)
		}
		out = append(out, sm)
	}
	return out, nil
}

func (p *parser) managedTrust(m *Managed, f member) error {
	v := f.val
	m.HasTrust = true
	switch v.kind {
	case kindBool:
		if v.b {
			return p.errorf(v.start, `"trust": true is not accepted: list the servers a user may mark trusted, or write false for none; leave "trust" out to let users decide`)
		}
		m.Trust = []string{}
		return nil
	case kindArray:
		names, err := p.strList(v, quote(f.key), "at the top level")
		if err != nil {
			return err
		}
		for i, name := range names {
			if !ValidName(name) {
				return p.errorf(v.elems[i].start, `invalid server name %q in "trust"[%d]: use letters, digits, '-', '_' and '.', at most %d characters`, short(name), i, maxNameLen)
			}
		}
		m.Trust = append([]string{}, names...)
		return nil
	}
	return p.errorf(v.start, `expected a list of server names or false for "trust", got %s`, v.kind)
}

func (p *parser) managedServe(f member) (*ManagedServe, error) {
	v := f.val
	const where = `in "serve"`
	if v.kind != kindObject {
		return nil, p.errorf(v.start, `expected an object for "serve", got %s; write {"http": false} or {"http": ["127.0.0.1:8080"]}`, v.kind)
	}
	s := &ManagedServe{HTTP: true}
	for _, g := range p.uniq(v, where) {
		if g.key != "http" {
			return nil, p.strictKey(g, where, managedServeKeys)
		}
		switch g.val.kind {
		case kindBool:
			s.HTTP = g.val.b
		case kindArray:
			addrs, err := p.strList(g.val, `"http"`, where)
			if err != nil {
				return nil, err
			}
			s.Addresses = append([]string{}, addrs...)
		default:
			return nil, p.errorf(g.val.start, `expected true, false or a list of addresses for "http" %s, got %s`, where, g.val.kind)
		}
	}
	return s, nil
}

func (p *parser) managedTelemetry(f member) (*ManagedTelemetry, error) {
	v := f.val
	const where = `in "telemetry"`
	if v.kind != kindObject {
		return nil, p.errorf(v.start, `expected an object for "telemetry", got %s; write {"endpoint": "https://collector.example:4318"}`, v.kind)
	}
	t := &ManagedTelemetry{}
	allowInsecure := false
	for _, g := range p.uniq(v, where) {
		var err error
		switch g.key {
		case "endpoint":
			t.Endpoint, err = p.str(g.val, `"endpoint"`, where)
			if err == nil {
				if why := checkURL(t.Endpoint); why != "" {
					err = p.errorf(g.val.start, `invalid "endpoint" %q %s: %s`, short(t.Endpoint), where, why)
				}
			}
		case "headers":
			t.Headers, err = p.strMap(g.val, `"headers"`, where, func(h member) (string, error) {
				if !validHeaderName(h.key) {
					return "", p.errorf(h.keyOff, "invalid header name %q %s", short(h.key), where)
				}
				if strings.ContainsAny(h.val.str, "\r\n\x00") {
					return "", p.errorf(h.val.start, "header %q %s contains a line break or NUL character", short(h.key), where)
				}
				return h.val.str, nil
			})
		case "allowInsecureHTTP":
			allowInsecure, err = p.boolean(g.val, `"allowInsecureHTTP"`, where)
		default:
			err = p.strictKey(g, where, managedTelemetryKs)
		}
		if err != nil {
			return nil, err
		}
	}
	if t.Endpoint == "" {
		return nil, p.errorf(v.start, `"telemetry" needs an "endpoint"`)
	}
	if err := p.telemetryInClear(f, t.Endpoint, len(t.Headers) > 0, allowInsecure); err != nil {
		return nil, err
	}
	return t, nil
}

// ServerVerdict says whether the managed policy lets srv start. When it
// does not, why names the managed file and the entry (or the list) that
// keeps it from starting, for the person to take to an administrator.
func (m *Managed) ServerVerdict(srv Server) (ok bool, why string) {
	if m == nil {
		return true, ""
	}
	for _, d := range m.DeniedServers {
		if d.matches(srv, true) {
			return false, fmt.Sprintf("denied by the managed policy (deniedServers entry at %s)", d.At)
		}
	}
	if !m.HasAllowed {
		return true, ""
	}
	for _, a := range m.AllowedServers {
		if a.matches(srv, false) {
			return true, ""
		}
	}
	return false, fmt.Sprintf("not in the allowedServers of the managed policy (%s)", m.At["allowedServers"])
}

// MayTrust reports whether a user may mark the server named name trusted.
func (m *Managed) MayTrust(name string) bool {
	return m == nil || !m.HasTrust || slices.Contains(m.Trust, name)
}

// ClampAutoApprove returns the user's auto-approve level lowered to the
// managed ceiling, and whether it was lowered. "" is the default level,
// "additive".
func (m *Managed) ClampAutoApprove(user string) (level string, clamped bool) {
	if m == nil || m.AutoApprove == "" {
		return user, false
	}
	u := user
	if u == "" {
		u = "additive"
	}
	if slices.Index(AutoApproveLevels, u) > slices.Index(AutoApproveLevels, m.AutoApprove) {
		return m.AutoApprove, true
	}
	return user, false
}

// matches reports whether the entry matches srv. deny widens a command
// pattern to the command's base name too (see ServerMatch.Command).
func (sm *ServerMatch) matches(srv Server, deny bool) bool {
	if sm.URL != "" {
		if srv.URL == "" {
			return false
		}
		return urlMatch(strings.ToLower(sm.URL), canonicalURL(srv.URL))
	}
	if srv.Command == "" {
		return false
	}
	if !starMatch(sm.Command, srv.Command) && !(deny && starMatch(sm.Command, commandBase(srv.Command))) {
		return false
	}
	if !sm.HasArgs {
		return true
	}
	if len(sm.Args) != len(srv.Args) {
		return false
	}
	for i, a := range sm.Args {
		if !starMatch(a, srv.Args[i]) {
			return false
		}
	}
	return true
}

// commandBase is the last element of a command path, by either separator,
// so that a Windows path is cut the same way on every system.
func commandBase(cmd string) string {
	if i := strings.LastIndexAny(cmd, `/\`); i >= 0 {
		return cmd[i+1:]
	}
	return cmd
}

// canonicalURL is u in the form URL patterns are compared with: lower
// case, without user information, a default port, or a trailing dot after
// the host, so that "HTTPS://x@Evil.example.:443/mcp" is
// "https://evil.example/mcp". A URL that does not parse is only lowered.
func canonicalURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Host == "" {
		return strings.ToLower(u)
	}
	host, port := strings.ToLower(parsed.Hostname()), parsed.Port()
	host = strings.TrimSuffix(host, ".")
	scheme := strings.ToLower(parsed.Scheme)
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	parsed.Scheme, parsed.User, parsed.Host = scheme, nil, host
	return strings.ToLower(parsed.String())
}

// urlMatch matches a URL pattern against a canonical URL, the part up to
// the first '/' after "://" (scheme, host and port) separately from the
// rest, so that a '*' in the host never reaches into the path:
// "https://*.corp.example/*" does not match
// "https://evil.example/x.corp.example/". A pattern without a path
// matches every path on its host.
func urlMatch(pat, u string) bool {
	pa, pr := splitURL(pat)
	ua, ur := splitURL(u)
	if ur == "" {
		ur = "/" // "https://h" is "https://h/"
	}
	if !starMatch(pa, ua) {
		return false
	}
	return pr == "" || starMatch(pr, ur)
}

func splitURL(u string) (authority, rest string) {
	i := strings.Index(u, "://")
	if i < 0 {
		return u, ""
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u, ""
	}
	return u[:i+3+j], u[i+3+j:]
}

// starMatch reports whether s matches pat, where '*' matches any run of
// characters (none included) and everything else matches itself.
func starMatch(pat, s string) bool {
	// Iterative matching with one backtrack point: linear in practice,
	// never exponential.
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pat) && pat[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(pat) && pat[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == '*' {
		pi++
	}
	return pi == len(pat)
}

// ServeRule is the file's rule for mcphost serve, nil when there is no
// managed policy or it says nothing of serve. Safe on a nil *Managed.
func (m *Managed) ServeRule() *ManagedServe {
	if m == nil {
		return nil
	}
	return m.Serve
}

// Where says where in the managed file a setting is made ("FILE:LINE:COL",
// see At), or "" when it is not. Safe on a nil *Managed.
func (m *Managed) Where(key string) string {
	if m == nil {
		return ""
	}
	return m.At[key]
}

// TelemetryRule is the export the managed file requires, nil when there is
// no managed policy or it requires none. Safe on a nil *Managed.
func (m *Managed) TelemetryRule() *ManagedTelemetry {
	if m == nil {
		return nil
	}
	return m.Telemetry
}
