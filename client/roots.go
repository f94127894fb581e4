package client

import "net/url"

// RootDirs returns the directories of the file:// roots the manager offers
// its servers, in the order of Options.Roots. A root that is not a local
// file URL is left out.
func (m *Manager) RootDirs() []string {
	var dirs []string
	for _, r := range m.opts.Roots {
		if r == nil {
			continue
		}
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			continue
		}
		dirs = append(dirs, u.Path)
	}
	return dirs
}
