package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/client"
)

// Definitions keeps the definitions that persisted pins are hashes of, per
// server identity, in a file of its own beside the state file: what `mcphost
// serve` offers a client while the server is still starting, so that a host
// that lists its tools once sees them. Only a definition whose hash is the
// tool's pin is ever handed out (Pins.Pinned), so a definition kept here
// that a person has since replaced, or that the file holds wrongly, is never
// offered. It is a cache: a file that cannot be read counts as empty, and
// when two processes write it at once the last one wins.
type Definitions struct {
	path string

	mu     sync.Mutex
	loaded bool
	m      map[string][]*client.Tool // identity → tools, Server empty, sorted by name
}

// Bounds of the definitions file: a larger file, or more tools for one
// server, is not read (the server's tools are then not offered early).
const (
	maxDefinitionsFile = 16 << 20
	maxKeptTools       = 1000
)

// NewDefinitions returns the definitions kept in the file at path; the file
// is read when first needed.
func NewDefinitions(path string) *Definitions {
	return &Definitions{path: path, m: map[string][]*client.Tool{}}
}

type definitionsFile struct {
	Version int                       `json:"version"`
	Servers map[string][]*client.Tool `json:"servers"`
}

// load reads the file once. d.mu is held.
func (d *Definitions) load() {
	if d.loaded {
		return
	}
	d.loaded = true
	if m, err := readDefinitions(d.path); err == nil {
		d.m = m
	}
}

func readDefinitions(path string) (map[string][]*client.Tool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDefinitionsFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDefinitionsFile {
		return nil, errors.New("definitions file too large")
	}
	var w definitionsFile
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	if w.Version != 1 {
		return nil, errors.New("definitions file of another version")
	}
	m := map[string][]*client.Tool{}
	for ident, ts := range w.Servers {
		if len(ts) > maxKeptTools {
			continue
		}
		// Only what a listing could have pinned: a definition hash (never
		// NewToolPin, which no definition is).
		ts = slices.DeleteFunc(ts, func(t *client.Tool) bool { return t == nil || t.Name == "" || !isDefinitionHash(t.Hash) })
		for _, t := range ts {
			t.Server = ""
		}
		m[ident] = ts
	}
	return m, nil
}

// tools returns copies of the tools kept for ident.
func (d *Definitions) tools(ident string) []*client.Tool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load()
	out := make([]*client.Tool, 0, len(d.m[ident]))
	for _, t := range d.m[ident] {
		c := *t
		out = append(out, &c)
	}
	return out
}

// keep records, for ident, each tool of listed whose hash is its pin
// (pin), and keeps an earlier definition of a listed tool whose listed one
// differs from the pin while the earlier one still is the pin; tools no
// longer listed are dropped when all is set (listed is the server's whole
// list); without it, the other tools kept stay as they are. The file is written
// only when something changed.
func (d *Definitions) keep(ident string, listed []*client.Tool, pin func(tool string) (string, bool), all bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load()
	old := map[string]*client.Tool{}
	for _, t := range d.m[ident] {
		old[t.Name] = t
	}
	next := map[string]*client.Tool{}
	if !all {
		for name, t := range old {
			next[name] = t
		}
	}
	for _, t := range listed {
		if t == nil || t.Name == "" || t.Hash == "" {
			continue
		}
		h, ok := pin(t.Name)
		switch {
		case !ok:
		case h == t.Hash:
			c := *t
			c.Server = ""
			next[t.Name] = &c
		case old[t.Name] != nil && old[t.Name].Hash == h:
			next[t.Name] = old[t.Name]
		}
	}
	if len(next) > maxKeptTools {
		return
	}
	ts := make([]*client.Tool, 0, len(next))
	for _, t := range next {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *client.Tool) int { return strings.Compare(a.Name, b.Name) })
	if sameTools(ts, d.m[ident]) {
		return
	}
	if len(ts) == 0 {
		delete(d.m, ident)
	} else {
		d.m[ident] = ts
	}
	d.write(ident)
}

// isDefinitionHash reports whether h is a definition hash: 64 lowercase
// hex digits.
func isDefinitionHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func sameTools(a, b []*client.Tool) bool {
	return slices.EqualFunc(a, b, func(x, y *client.Tool) bool { return x.Name == y.Name && x.Hash == y.Hash })
}

// write saves the file: the other identities as the file holds them now
// (another process may have written them), ident's as d holds it. d.mu is
// held. A failure to write is not an error anyone acts on: the cache is
// then only older.
func (d *Definitions) write(ident string) {
	m, err := readDefinitions(d.path)
	if err != nil {
		m = map[string][]*client.Tool{}
	}
	if ts, ok := d.m[ident]; ok {
		m[ident] = ts
	} else {
		delete(m, ident)
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(definitionsFile{Version: 1, Servers: m}); err != nil || b.Len() > maxDefinitionsFile {
		return
	}
	dir := filepath.Dir(d.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".definitions-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b.Bytes())
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), d.path) != nil {
		_ = os.Remove(tmp.Name())
	}
}
