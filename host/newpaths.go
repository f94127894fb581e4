package host

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/client"
)

// newPaths reports whether a call of a tool of spec's server with args
// names at least one path and nothing that exists yet (decide.Input.
// NewPaths): every string of the arguments, object keys included, and
// every word of one, is looked up as a path the server could resolve it to
// (absolute, after "~" and $HOME, or joined with each of the server's bases,
// links followed), and none exists; and at least one of them has a
// directory part ("notes/n.md", "/tmp/x"), so that it is a path at all and
// not a name or a sentence. It answers false whenever it cannot tell: a
// server reached over the network, whose file system is not this one;
// arguments with more strings than are looked at; or more lookups than
// the bounds allow. It reads the file system (Lstat, Readlink) and never
// fails.
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
		for _, w := range append([]string{s}, pathWords(s)...) {
			if strings.ContainsRune(w, '/') || strings.HasPrefix(w, "~") {
				named = true
			}
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
