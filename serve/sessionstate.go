package serve

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/host"
)

// key is the identity as one string that tells identities apart exactly:
// each part length-prefixed, so that no choice of clientInfo name or
// version can make one identity's key another's, and the person's part
// (the token's issuer and subject, unescaped) is never the client's word.
func (id identity) key() string {
	var b []byte
	for _, part := range []string{id.person, id.clientID, id.name, id.version} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return string(b)
}

// sharedState returns the session state of the stateless identity id kept
// where every replica reads it (Options.SessionState), and names ac's
// session after the identity, so that every replica's records of the
// identity's calls name one session; nil without a store, when the state
// lives in this replica's gate and the session's name is its own.
func (s *Server) sharedState(id identity, ac *audit.Client) host.SessionState {
	if s.o.SessionState == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(id.key()))
	ac.Session = "serve-" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16])
	return s.o.SessionState(id.key())
}
