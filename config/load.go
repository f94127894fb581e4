package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ProjectFile is the name of the project-level config file looked for in
// the working directory.
const ProjectFile = ".mcp.json"

// maxFileSize bounds how much of a config file is read. A project file
// comes with whatever directory mcphost runs in, so it must not be able to
// make mcphost read without end.
const maxFileSize = 4 << 20

// LoadOptions says where configuration comes from. Flags mirror the
// command line; the other fields are injected so tests control them.
type LoadOptions struct {
	// ConfigFile is the --config flag. "" means the default file,
	// DefaultPath(ConfigHome), which need not exist; a file named here must.
	ConfigFile string
	// ServerFlags are --server values: NAME=COMMAND [ARG...] or NAME=URL.
	ServerFlags []string
	// TrustFlags are --trust values: names of user or flag servers.
	TrustFlags []string
	// Allow, Ask and Deny are --allow, --ask and --deny values: a glob, or
	// a JSON object when the value starts with '{'.
	Allow, Ask, Deny []string
	// WorkDir is where to look for ProjectFile; "" means nowhere.
	WorkDir string
	// ConfigHome replaces the XDG config home when not "".
	ConfigHome string
	// Getenv resolves ${NAME} references; nil means os.Getenv.
	Getenv func(string) string
}

// Load reads and merges every source of configuration:
//
//  1. the user's file (ConfigFile, or the XDG default when it exists);
//  2. ProjectFile in WorkDir, which may add servers and nothing else: a
//     server whose name the user's file already uses is dropped with a
//     warning, and its "trust", "permissions" and "model" are ignored.
//     Nothing in it is an error: an entry with a problem (a reserved or
//     repeated name, an unset variable, credentials over plain HTTP, ...)
//     is skipped with a warning, and a file that cannot be read or parsed
//     is ignored with one, so that a repository cannot stop mcphost;
//  3. --server flags, which are consented by being passed; one that names
//     a server of the user's file is an error (rules name servers, so it
//     would take that server's rules), and a project server of its name is
//     skipped with a warning;
//  4. --trust flags, which trust user and flag servers; naming a project
//     server or an unknown one is an error;
//  5. rules from the user's file, then --allow, --ask and --deny, in order.
//
// A project server's File is the project file's absolute path with
// symbolic links resolved, and a stdio project server's Cwd is absolute:
// WorkDir, or its "cwd" resolved against WorkDir (see projectPlace).
//
// If the user's file is also the project file (--config .mcp.json), it is
// read once, as the user's. A config file must be a regular file of at most
// 4 MiB, and at most 100 warnings are reported per file. Errors are *Error;
// warnings come in the order of the sources above.
func Load(opts LoadOptions) (*Config, []Warning, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var warnings []Warning
	cfg := &Config{}
	servers := map[string]Server{}
	pos := map[string][2]int{} // where each file server's key is

	userPath := opts.ConfigFile
	if userPath == "" {
		userPath = DefaultPath(opts.ConfigHome)
	}
	userRead := false
	data, err := readFile(userPath)
	switch {
	case err == nil:
		r, err := parse(userPath, data, SourceUser, getenv)
		warnings = append(warnings, r.warnings...)
		if err != nil {
			return nil, warnings, err
		}
		userRead = true
		cfg.Files = append(cfg.Files, userPath)
		cfg.Rules = r.cfg.Rules
		cfg.AutoApprove = r.cfg.AutoApprove
		cfg.Model = r.cfg.Model
		cfg.Models = r.cfg.Models
		cfg.ToolSearch = r.cfg.ToolSearch
		cfg.Notify = r.cfg.Notify
		cfg.SamplingBudget = r.cfg.SamplingBudget
		cfg.Telemetry = r.cfg.Telemetry
		cfg.AskVia = r.cfg.AskVia
		cfg.Serve = r.cfg.Serve
		cfg.Store = r.cfg.Store
		for _, s := range r.cfg.Servers {
			servers[s.Name] = s
			pos[s.Name] = r.serverPos[s.Name]
		}
	case errors.Is(err, fs.ErrNotExist) && opts.ConfigFile == "":
		// No config of one's own is fine.
	case errors.Is(err, fs.ErrNotExist):
		return nil, warnings, &Error{File: userPath, Msg: "config file not found (given with --config)", Err: err}
	default:
		return nil, warnings, &Error{File: userPath, Msg: readFailure(err), Err: err}
	}

	if opts.WorkDir != "" {
		projPath := filepath.Join(opts.WorkDir, ProjectFile)
		data, err := readFile(projPath)
		switch {
		case err == nil && userRead && sameFile(userPath, projPath):
			// Already read as the user's own file.
		case err == nil:
			r, err := parse(projPath, data, SourceProject, getenv)
			if err != nil {
				warnings = append(warnings, r.warnings...)
				warnings = append(warnings, projectIgnored(projPath, err))
				break
			}
			cfg.Files = append(cfg.Files, projPath)
			projWarnings := r.warnings
			where := projectPlace(opts.WorkDir, projPath)
			for _, s := range r.cfg.Servers {
				p := r.serverPos[s.Name]
				where.place(&s)
				if u, ok := servers[s.Name]; ok {
					// Not an error, which would let a repository stop
					// mcphost; the person's own server is kept, and the
					// project's never starts under its name.
					up := pos[s.Name]
					projWarnings = append(projWarnings, Warning{File: projPath, Line: p[0], Col: p[1],
						Message: fmt.Sprintf("server %q is ignored: %s already defines a server with that name", s.Name, strings.TrimSuffix(position(u.File, up[0], up[1]), ": "))})
					continue
				}
				servers[s.Name] = s
				pos[s.Name] = p
			}
			slices.SortStableFunc(projWarnings, func(a, b Warning) int {
				return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
			})
			warnings = append(warnings, projWarnings...)
		case errors.Is(err, fs.ErrNotExist):
		default:
			warnings = append(warnings, projectIgnored(projPath, &Error{File: projPath, Msg: readFailure(err), Err: err}))
		}
	}

	flagged := map[string]bool{}
	for _, f := range opts.ServerFlags {
		s, err := ParseServerFlag(f)
		if err != nil {
			return nil, warnings, &Error{Msg: fmt.Sprintf("--server %q: %v", f, err), Err: err}
		}
		if flagged[s.Name] {
			return nil, warnings, &Error{Msg: fmt.Sprintf("--server %q: a server named %q was already given with --server", f, s.Name)}
		}
		flagged[s.Name] = true
		if old, ok := servers[s.Name]; ok {
			p := pos[s.Name]
			if old.Source != SourceProject {
				// Rules name servers: the flag's server would inherit the
				// rules the person wrote for their own.
				return nil, warnings, &Error{Msg: fmt.Sprintf("--server %q: a server named %q is already defined at %s: rules name servers, so this one would take that one's rules; give it another name", f, s.Name, strings.TrimSuffix(position(old.File, p[0], p[1]), ": "))}
			}
			warnings = append(warnings, Warning{File: old.File, Line: p[0], Col: p[1],
				Message: fmt.Sprintf("server %q is replaced by --server %q", s.Name, f)})
		}
		servers[s.Name] = s
	}

	for _, name := range opts.TrustFlags {
		s, ok := servers[name]
		switch {
		case !ok:
			msg := fmt.Sprintf("--trust %q: no server is named %q", name, name)
			if sug := suggest(name, sortedKeys(servers)); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			}
			return nil, warnings, &Error{Msg: msg}
		case s.Source == SourceProject:
			// Naming a project server on the command line is the person's
			// consent to start it, for this run, and to trust it.
			s.Consented = true
		}
		s.Trust = true
		servers[name] = s
	}

	for _, flag := range []struct {
		name   string
		values []string
	}{{"--allow", opts.Allow}, {"--ask", opts.Ask}, {"--deny", opts.Deny}} {
		for i, v := range flag.values {
			r, err := flagRule(flag.name, i, v)
			if err != nil {
				return nil, warnings, err
			}
			cfg.Rules = append(cfg.Rules, r)
		}
	}

	for _, name := range sortedKeys(servers) {
		cfg.Servers = append(cfg.Servers, servers[name])
	}
	return cfg, warnings, nil
}

// projectIgnored is the warning for a project file that cannot be read or
// parsed at all. The file comes with whatever directory mcphost runs in:
// its problems must not stop mcphost, and with it the gate in front of the
// person's own servers. None of its servers start.
func projectIgnored(file string, err error) Warning {
	w := Warning{File: file, Message: err.Error()}
	var e *Error
	if errors.As(err, &e) {
		w.Line, w.Col, w.Message = e.Line, e.Col, e.Msg
	}
	w.Message += "; the project file is ignored, and none of its servers start (a project file's problem never stops mcphost; your own servers start)"
	return w
}

func sortedKeys(m map[string]Server) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// readFile reads a config file, refusing anything but a regular file (a
// FIFO or a device would block or never end) and anything too large.
func readFile(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, errTooLarge
	}
	return data, nil
}

// openRegular opens path for reading, refusing anything but a regular
// file: a FIFO or a device would block or never end.
func openRegular(path string) (*os.File, error) {
	// Check before opening: opening a FIFO for reading blocks.
	if info, err := os.Stat(path); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, errNotRegular
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// Check again: path may have been replaced since.
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errNotRegular
		}
		return nil, err
	}
	return f, nil
}

var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = fmt.Errorf("larger than %d MiB", maxFileSize>>20)
)

// readFailure describes why a config file could not be read, without
// repeating its path (the Error already carries it).
func readFailure(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return "cannot read config file: " + strings.TrimSpace(err.Error())
}

func sameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(ia, ib)
}
