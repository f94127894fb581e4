package chatlog

import "sort"

// ServerChanges is how the servers a session is resumed with differ from
// the ones it ran with, by config name, each list sorted.
type ServerChanges struct {
	Missing []string // ran with, not configured now
	Added   []string // configured now, not in the session
	Changed []string // the same name, another identity (command or URL)
}

// Any reports a difference.
func (c ServerChanges) Any() bool {
	return len(c.Missing)+len(c.Added)+len(c.Changed) > 0
}

// CompareServers compares the servers a session ran with (saved) with the
// ones it resumes with (now). A nil saved is a file that predates the
// record: nothing is known, so nothing differs.
func CompareServers(saved, now []Server) ServerChanges {
	var c ServerChanges
	if saved == nil {
		return c
	}
	was := make(map[string]string, len(saved))
	for _, s := range saved {
		was[s.Name] = s.Identity
	}
	is := make(map[string]bool, len(now))
	for _, s := range now {
		is[s.Name] = true
		id, ok := was[s.Name]
		switch {
		case !ok:
			c.Added = append(c.Added, s.Name)
		case id != s.Identity:
			c.Changed = append(c.Changed, s.Name)
		}
	}
	for _, s := range saved {
		if !is[s.Name] {
			c.Missing = append(c.Missing, s.Name)
		}
	}
	sort.Strings(c.Missing)
	sort.Strings(c.Added)
	sort.Strings(c.Changed)
	return c
}
