package decide

// Protected reports whether the absolute path abs is one of the host's
// protected paths (Options.ProtectedPaths) or inside one. It compares
// paths lexically, as every protected-path check here does: a caller that
// opens files resolves symbolic links first and asks about both the path
// as given and where it leads. A relative or empty abs is not protected
// by this check; the caller makes paths absolute.
func (p *Policy) Protected(abs string) bool {
	if p == nil {
		return false
	}
	c, ok := absPath(abs)
	if !ok {
		return false
	}
	for _, pr := range p.prot {
		if pathWithin(c, pr) {
			return true
		}
	}
	return false
}
