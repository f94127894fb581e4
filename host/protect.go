package host

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/client"
)

// Finding where a call's arguments lead on the file system, for the
// protected-path check of package decide. A server resolves a relative
// path against its working directory, a directory on its command line
// (server-filesystem uses the directories it was started with), or a root
// it was offered, and "~" against the home directory; and the kernel, or
// the server, follows symbolic links. Decide joins strings with the bases
// lexically; the host adds where symbolic links lead, which only the file
// system knows.
const (
	// maxPathStrings is how many distinct argument strings per call have
	// their symbolic links followed; later strings are still compared
	// lexically by Decide.
	maxPathStrings = 64
	// maxPathString bounds a string whose links are followed: a longer
	// one names no file the system would open.
	maxPathString = 4096
	// maxBases bounds the directories a relative path is joined with.
	maxBases = 16
	// maxCommandArgs bounds the command-line words looked at for bases.
	maxCommandArgs = 64
	// maxLookups bounds the file system lookups per call; beyond it the
	// rest of a path is taken as written.
	maxLookups = 1024
	// maxLinkHops bounds the symbolic links followed in one path, as the
	// kernel does (ELOOP).
	maxLinkHops = 40
)

// rootLister is a Catalog that offers roots to its servers, as
// client.Manager does.
type rootLister interface{ RootDirs() []string }

// argPlaces returns decide.Input's Bases and Paths for a call of a tool of
// spec's server with args. Arguments without a string, such as {} (most
// reads), name no path: Decide looks for protected paths only in the
// strings of the arguments and in Paths, which come from those strings, so
// the file system is not read for them.
func (g *Gate) argPlaces(spec *client.Spec, args json.RawMessage) (bases, paths []string) {
	if !g.o.Policy.ProtectsPaths() || bytes.IndexByte(args, '"') < 0 {
		return nil, nil
	}
	return ArgPlaces(spec, g.roots(), g.o.Policy.Home(), args)
}

// ArgPlaces returns the directories spec's server may resolve a relative
// path in args against (decide.Input.Bases), and where the path-like
// strings in args lead once "~", $HOME, file:// URLs, ".." and symbolic
// links are resolved (decide.Input.Paths). roots are the directories
// offered to the server as roots; home is the user's home directory. It
// reads the file system (Lstat, Readlink, Stat) within fixed bounds and
// never fails: what it cannot resolve it leaves as written.
func ArgPlaces(spec *client.Spec, roots []string, home string, args json.RawMessage) (bases, paths []string) {
	strs := argStrings(args, maxPathStrings)
	r := &resolver{seen: map[string]lookup{}, budget: maxLookups}
	homes := homeDirs(spec, home)
	bases = serverBases(spec, roots, homes, r)
	if len(strs) == 0 {
		return bases, nil
	}
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, s := range strs {
		for _, abs := range candidates(s, bases, homes) {
			clean := filepath.Clean(abs)
			add(r.resolve(clean)) // as a server that cleans first resolves it
			if clean != abs {
				add(r.resolve(abs)) // as the kernel resolves it: ".." after a link leaves the link's target
			}
		}
	}
	return bases, paths
}

// argStrings returns up to n distinct strings of a JSON document, object
// keys included, in document order. Strings that cannot name a file (empty,
// too long, holding a NUL byte) are left out. Invalid JSON yields the
// strings before the error.
func argStrings(args json.RawMessage, n int) []string {
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.UseNumber()
	var out []string
	seen := map[string]bool{}
	for len(out) < n {
		tok, err := dec.Token()
		if err != nil {
			break // the end, or invalid JSON, which Decide refuses to read
		}
		s, ok := tok.(string)
		if !ok || s == "" || len(s) > maxPathString || strings.IndexByte(s, 0) >= 0 || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// homeDirs returns the home directories "~" may mean to the server: the
// user's, and the one the server's environment sets.
func homeDirs(spec *client.Spec, home string) []string {
	var out []string
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	for _, h := range []string{home, spec.Env["HOME"]} {
		if filepath.IsAbs(h) && !contains(out, filepath.Clean(h)) {
			out = append(out, filepath.Clean(h))
		}
	}
	return out
}

// serverBases returns the directories the server may resolve a relative
// path against: its working directory (mcphost's when the spec names
// none), its roots, the directories on its command line (arguments that
// are existing directories, and the directory of each absolute path),
// and the home directories; each as written and with its symbolic links
// resolved, at most maxBases.
func serverBases(spec *client.Spec, roots, homes []string, r *resolver) []string {
	var out []string
	add := func(d string) {
		for _, p := range []string{filepath.Clean(d), r.resolve(filepath.Clean(d))} {
			if len(out) < maxBases && filepath.IsAbs(p) && !contains(out, p) {
				out = append(out, p)
			}
		}
	}
	wd, _ := os.Getwd()
	cwd := spec.Cwd
	switch {
	case cwd == "":
		cwd = wd
	case !filepath.IsAbs(cwd) && wd != "":
		cwd = filepath.Join(wd, cwd)
	}
	if filepath.IsAbs(cwd) {
		add(cwd)
	}
	for _, d := range roots {
		add(d)
	}
	words := append([]string{spec.Command}, spec.Args...)
	for _, w := range words[:min(len(words), maxCommandArgs)] {
		if strings.HasPrefix(w, "-") {
			_, w, _ = strings.Cut(w, "=") // --root=/srv/data
		}
		for _, p := range expandHome(w, homes) {
			if !filepath.IsAbs(p) {
				if !filepath.IsAbs(cwd) || p == "" {
					continue
				}
				p = filepath.Join(cwd, p)
			}
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				add(p)
			} else if filepath.IsAbs(w) || strings.HasPrefix(w, "~") {
				add(filepath.Dir(p))
			}
		}
	}
	for _, h := range homes {
		add(h)
	}
	return out
}

// candidates returns the absolute paths s may name: itself when absolute,
// a file:// URL's path, "~", $HOME and ${HOME} expanded with each home,
// or s joined with each base, unclean.
func candidates(s string, bases, homes []string) []string {
	if strings.HasPrefix(s, "file://") {
		if u, err := url.Parse(s); err == nil && u.Scheme == "file" && u.Path != "" {
			s = u.Path
		}
	}
	var out []string
	for _, p := range expandHome(s, homes) {
		if filepath.IsAbs(p) {
			out = append(out, p)
			continue
		}
		for _, b := range bases {
			out = append(out, b+string(filepath.Separator)+p)
		}
	}
	return out
}

// expandHome returns s with a leading "~", $HOME or ${HOME} replaced by
// each home, or s alone.
func expandHome(s string, homes []string) []string {
	for _, pre := range []string{"~", "$HOME", "${HOME}"} {
		rest, ok := strings.CutPrefix(s, pre)
		if !ok || (rest != "" && rest[0] != '/') {
			continue
		}
		out := make([]string, 0, len(homes))
		for _, h := range homes {
			out = append(out, h+rest)
		}
		return out
	}
	return []string{s}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RealPath returns the absolute path p with the symbolic links of its
// longest existing prefix resolved and the rest appended as written: where
// p is, or would be once created. It never fails.
func RealPath(p string) string {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	r := &resolver{seen: map[string]lookup{}, budget: maxLookups}
	return r.resolve(p)
}

// resolver follows symbolic links for one call, remembering what it looked
// up, within a budget of lookups.
type resolver struct {
	seen   map[string]lookup
	budget int
}

type lookup struct {
	exists bool
	dir    bool // a directory (not a link to one)
	link   bool
	target string
}

func (r *resolver) lstat(p string) lookup {
	if l, ok := r.seen[p]; ok {
		return l
	}
	if r.budget <= 0 {
		return lookup{}
	}
	r.budget--
	var l lookup
	if fi, err := os.Lstat(p); err == nil {
		l.exists, l.dir = true, fi.IsDir()
		if fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				l.link, l.target = true, t
			}
		}
	}
	r.seen[p] = l
	return l
}

// resolve walks the absolute path p as the kernel does: each existing
// component that is a symbolic link is replaced by its target, and ".."
// leaves the directory reached so far. From the first component that does
// not exist (or once the budget is spent) the rest is appended lexically.
func (r *resolver) resolve(p string) string {
	sep := string(filepath.Separator)
	cur := filepath.VolumeName(p) + sep
	comps := strings.Split(p[len(filepath.VolumeName(p)):], sep)
	exists, hops := true, 0
	for i := 0; i < len(comps); i++ {
		c := comps[i]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if exists {
			l := r.lstat(next)
			switch {
			case !l.exists:
				exists = false
			case l.link && hops < maxLinkHops:
				hops++
				t := l.target
				if filepath.IsAbs(t) {
					cur = filepath.VolumeName(t) + sep
					t = t[len(filepath.VolumeName(t)):]
				}
				comps = append(strings.Split(t, sep), comps[i+1:]...)
				i = -1
				continue
			}
		}
		cur = next
	}
	return cur
}
