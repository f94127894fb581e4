package host

import (
	"slices"
	"sync"

	"github.com/mcphost/mcphost/client"
)

// Pins remembers the definition hash of every tool mcphost has listed, so
// that a definition that changes later — a rug pull after
// notifications/tools/list_changed, or a new version between two runs — is
// seen as changed and counts as unannotated until a person accepts it.
//
// A trusted server's tools are pinned in the Store, so the pins outlive the
// run; any other server's tools are pinned for this process only, so that a
// change within the session is still caught without the state file growing
// with every server someone tried once. A pin in the Store wins over one in
// memory. While the Store cannot be read (a PinLookup that fails), a pin in
// memory is used, and a tool with none has UnreadablePin: its definition
// counts as changed, never as first seen. Pins is safe for concurrent use.
//
// Only the first listing of a server is first sight: a tool that appears in
// a later listing (in this run, or in the first listing of a run when the
// Store already holds pins for the server) is a change to the server — a
// pinned tool retired and offered again under a new name looks just so —
// and is held as new (NewToolPin) until a person accepts it.
type Pins struct {
	store Store // nil: every pin is kept in memory

	// lmu makes one listing at a time first sight or not; it is taken
	// before mu.
	lmu    sync.Mutex
	mu     sync.Mutex
	mem    map[string]string // identity + "\x00" + tool → hash, or NewToolPin
	listed map[string]bool   // identities listed in this run

	defs *Definitions // nil: no definition is kept (KeepDefinitions)
}

// NewToolPin is the pin Pins holds for a tool that appeared after its
// server's first listing and that no person has accepted yet. It is never a
// definition hash, so the tool counts as changed (its hints the riskiest,
// every call asked) until a call of it is approved, which pins its
// definition.
const NewToolPin = "new-tool"

// NewToolField is what Question.ChangedFields and Result.ChangedFields hold
// for a tool held as new (NewToolPin): the whole tool is what changed.
const NewToolField = "new tool"

// UnreadablePin is the pin of a tool while the Store's pins cannot be read
// and none is kept in memory. It is never a definition hash, so the tool
// counts as changed (every call asked) rather than as seen for the first
// time; a call a person approves pins its definition in memory until the
// Store can be read again.
const UnreadablePin = "unreadable"

// UnreadablePinField is what Question.ChangedFields holds for a tool whose
// pin could not be read (UnreadablePin).
const UnreadablePinField = "pin unreadable"

// NewPins returns pins kept in store (nil: in memory only).
func NewPins(store Store) *Pins {
	return &Pins{store: store, mem: map[string]string{}, listed: map[string]bool{}}
}

// Get returns the definition hash pinned for a tool of the server with
// this identity: UnreadablePin when the Store cannot be read and memory
// holds none.
func (p *Pins) Get(ident, tool string) (string, bool) {
	h, ok, _ := p.get(ident, tool)
	return h, ok
}

// get is Get that also says whether the Store could not be read.
func (p *Pins) get(ident, tool string) (hash string, ok, unreadable bool) {
	if p.store != nil {
		h, ok, err := lookupPin(p.store, ident, tool)
		if ok {
			return h, true, false
		}
		unreadable = err != nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.mem[ident+"\x00"+tool]; ok {
		return h, true, unreadable
	}
	if unreadable {
		return UnreadablePin, true, true
	}
	return "", false, false
}

// Set pins t's current definition: in the Store when persist is set or the
// Store already holds a pin for the tool, in memory otherwise. A pin that
// cannot be saved is kept in memory, so this session still holds it; the
// next run asks again.
func (p *Pins) Set(ident string, t *client.Tool, persist bool) {
	if p.store != nil {
		if _, had := p.store.Pin(ident, t.Name); had {
			persist = true
		}
	}
	if persist && p.store != nil {
		if p.store.SetPin(ident, t.Name, t.Hash) == nil {
			if p.defs != nil {
				p.defs.keep(ident, []*client.Tool{t}, p.stored(ident), false)
			}
			return
		}
	}
	p.mu.Lock()
	p.mem[ident+"\x00"+t.Name] = t.Hash
	p.mu.Unlock()
}

// Listed takes a listing of the server with this identity. At the
// server's first listing (none before in this run, and no pin in the Store)
// it pins every tool (first sight); at any later one, a tool with no pin is
// held as new (NewToolPin). It leaves every existing pin as it is: only a
// person moves a pin. The pins of a trusted server go to the Store in one
// write. A listing taken while the Store cannot be read pins nothing, and
// is not the server's first listing: the first one read with the Store is.
func (p *Pins) Listed(ident string, trusted bool, tools []*client.Tool) {
	p.lmu.Lock()
	defer p.lmu.Unlock()
	p.mu.Lock()
	seen := p.listed[ident]
	p.mu.Unlock()
	unreadable := false
	if !seen && p.store != nil {
		has, err := lookupHasPins(p.store, ident)
		// Pinned in an earlier run, or perhaps (the store cannot be read):
		// this is not first sight.
		seen, unreadable = has || err != nil, err != nil
	}
	fresh := map[string]string{}
	for _, t := range tools {
		if t == nil || t.Name == "" || t.Hash == "" {
			continue
		}
		if _, ok, bad := p.get(ident, t.Name); ok {
			unreadable = unreadable || bad
			continue
		}
		if seen {
			p.mu.Lock()
			p.mem[ident+"\x00"+t.Name] = NewToolPin
			p.mu.Unlock()
			continue
		}
		fresh[t.Name] = t.Hash
	}
	if !unreadable {
		p.mu.Lock()
		p.listed[ident] = true
		p.mu.Unlock()
	}
	p.pinFirst(ident, trusted, fresh)
	if p.defs != nil && p.store != nil {
		p.defs.keep(ident, tools, p.stored(ident), true)
	}
}

// KeepDefinitions makes p keep, in d, the definitions its pins in the Store
// are hashes of, from every listing and every pin a person moves, so that
// Pinned can hand them out in a later run. Call it before the first
// listing.
func (p *Pins) KeepDefinitions(d *Definitions) { p.defs = d }

// stored returns a lookup of the Store's pins of the server with this
// identity: only those outlive the run.
func (p *Pins) stored(ident string) func(string) (string, bool) {
	return func(tool string) (string, bool) { return p.store.Pin(ident, tool) }
}

// Pinned returns the definitions kept (KeepDefinitions) for the server with
// this identity whose hash is the tool's pin now: exactly the definitions
// the pins are of, each a copy with Server empty. A tool whose pin moved
// since its definition was kept is left out.
func (p *Pins) Pinned(ident string) []*client.Tool {
	if p.defs == nil {
		return nil
	}
	ts := p.defs.tools(ident)
	return slices.DeleteFunc(ts, func(t *client.Tool) bool {
		h, ok := p.Get(ident, t.Name)
		return !ok || h != t.Hash
	})
}

// pinFirst pins tools (name → hash) on first sight: in the Store for a
// trusted server, in memory otherwise or when the Store cannot be written.
func (p *Pins) pinFirst(ident string, trusted bool, fresh map[string]string) {
	if len(fresh) == 0 {
		return
	}
	if trusted && p.store != nil && p.store.PinNew(ident, fresh) == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, h := range fresh {
		if _, ok := p.mem[ident+"\x00"+name]; !ok {
			p.mem[ident+"\x00"+name] = h
		}
	}
}

// Check returns the hash a tool's definition is compared with (NewToolPin
// for a tool held as new), pinning it first if it was never seen, and
// whether the definition differs from it. A tool no listing showed Pins (a
// gate without the listing hook) is pinned as first sight.
func (p *Pins) Check(ident string, t *client.Tool, trusted bool) (pinned string, changed bool) {
	if h, ok := p.Get(ident, t.Name); ok {
		return h, h != t.Hash
	}
	p.pinFirst(ident, trusted, map[string]string{t.Name: t.Hash})
	return t.Hash, false
}

// Hook returns a client.Options.OnListing that gives Listed every listing,
// with trusted saying which servers' pins are kept in the Store.
func (p *Pins) Hook(trusted func(server string) bool) func(*client.Spec, []*client.Tool) {
	return func(spec *client.Spec, tools []*client.Tool) {
		p.Listed(spec.Identity(), trusted(spec.Name), tools)
	}
}
