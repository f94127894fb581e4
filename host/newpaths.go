package host

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/client"
)

// newPaths reports whether a call of a tool of spec's server with args
// names at least one path and nothing that exists yet (decide.Input.
// NewPaths). Every string of the arguments, object keys included, and
// every word of one, is looked up as a path the server could resolve it to
// (absolute, after "~" and $HOME, or joined with each of the server's
// bases, links followed), and none may exist. A string with a directory
// part ("notes/n.md", "~/x", "/srv/x") must moreover be a place on this
// machine: its directory exists under one of those bases. At least one
// such string is needed, so that the arguments name a path at all; a
// string like "owner/repo" or "feature/x", whose directory is nowhere
// here, or a command line ("echo > out/x"), is no new path but something
// else, and makes the answer false. It answers false whenever it cannot
// tell: a server reached over the network, whose file system is not this
// one; arguments with more strings than are looked at; or more lookups
// than the bounds allow. It reads the file system (Lstat, Readlink) and
// never fails.
func newPaths(spec *client.Spec, roots []string, home string, args json.RawMessage) bool {
	if spec.URL != "" {
		return false // the server's files are not this machine's
	}
	strs := argStrings(args, maxPathStrings+1)
	if len(strs) == 0 || len(strs) > maxPathStrings {
		return false
	}
	r := &resolver{seen: map[string]lookup{}, budget: maxLookups}
	homes := homeDirs(spec, home)
	bases := serverBases(spec, roots, homes, r)
	named := false
	for _, s := range strs {
		if strings.ContainsRune(s, '/') || strings.HasPrefix(s, "~") {
			if !inDirectoryHere(r, candidates(s, bases, homes)) {
				return false
			}
			named = true
		}
		for _, w := range append([]string{s}, pathWords(s)...) {
			abs := candidates(w, bases, homes)
			if len(abs) == 0 {
				return false // a relative path, and nowhere known to look for it
			}
			for _, a := range abs {
				clean := filepath.Clean(a)
				for _, p := range []string{clean, r.resolve(clean)} {
					if r.budget <= 0 || r.lstat(p).exists {
						return false // it exists, or it was not looked at and may
					}
				}
			}
		}
	}
	return named
}

// inDirectoryHere reports whether the directory of one of the paths a
// string may name exists, links followed. A directory known only from
// before the lookups ran out still counts: the string itself is then
// looked up with none left, which makes newPaths false.
func inDirectoryHere(r *resolver, paths []string) bool {
	for _, p := range paths {
		dir := r.resolve(filepath.Dir(filepath.Clean(p)))
		if r.lstat(dir).dir {
			return true
		}
	}
	return false
}

// pathWords splits s into the words a command line or a sentence holds,
// at the separators the protected-path check splits at, so that "rm -rf
// build" names "build". s itself is not among them unless it is one word.
func pathWords(s string) []string {
	words := strings.FieldsFunc(s, func(r rune) bool {
		return r < 0x80 && r != '/' && r != '\\' && r != '~' && r != '$' && r != '%' && isWordSep(byte(r))
	})
	if len(words) == 1 && words[0] == s {
		return nil
	}
	return words
}

func isWordSep(b byte) bool { return strings.IndexByte(" \t\n\r\v\f\b\"'`=;|&()<>,:", b) >= 0 }
