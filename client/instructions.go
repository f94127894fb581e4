package client

// Instructions returns the "instructions" a ready server sent in its
// initialize result, as the server wrote them: untrusted text, for the
// caller to bound and quote. A server that is not ready has none.
func (m *Manager) Instructions(server string) string {
	cs, err := m.session(server)
	if err != nil {
		return ""
	}
	if ir := cs.InitializeResult(); ir != nil {
		return ir.Instructions
	}
	return ""
}
