package oauth

import (
	"net/url"
	"time"

	"github.com/mcphost/mcphost/internal/netcheck"
)

// Status describes a server's stored authorization without its secrets.
type Status struct {
	Server string `json:"server"`
	// Origin is where the server's token may go; the full URL is left out,
	// as it may carry a key of its own.
	Origin   string    `json:"origin,omitempty"`
	State    string    `json:"state"` // one of the State constants
	Reason   string    `json:"reason,omitempty"`
	Issuer   string    `json:"issuer,omitempty"`
	Scopes   []string  `json:"scopes,omitempty"`
	Expiry   time.Time `json:"expiry,omitzero"`
	Obtained time.Time `json:"obtained,omitzero"`
	// Refreshable says whether an expired token can be renewed without a login.
	Refreshable bool `json:"refreshable"`
}

// States of a stored authorization.
const (
	StateLoggedIn    = "logged-in"
	StateExpired     = "expired"     // and refreshable: the next use renews it
	StateNeedsLogin  = "needs-login" // expired, and nothing can renew it
	StateNotLoggedIn = "not-logged-in"
	StateOtherURL    = "other-url" // issued for a URL the server no longer has
)

// Status reports server's stored authorization for its current URL.
func (s *Store) Status(server, serverURL string, now time.Time) (Status, error) {
	st := Status{Server: server, State: StateNotLoggedIn}
	if u, err := url.Parse(serverURL); err == nil {
		st.Origin, _ = netcheck.Origin(u)
	}
	rec, err := s.Load(server)
	if err != nil || rec == nil {
		return st, err
	}
	st.Issuer, st.Scopes, st.Expiry, st.Obtained = rec.Issuer, rec.Scopes, rec.Expiry, rec.Obtained
	st.Refreshable = rec.RefreshToken != ""
	switch {
	case st.Origin == "" || rec.Origin != st.Origin || !covers(rec.Resource, serverURL):
		st.State = StateOtherURL
		st.Reason = "the token was issued for " + rec.Origin
	case rec.fresh(now):
		st.State = StateLoggedIn
	case st.Refreshable:
		st.State = StateExpired
	default:
		st.State = StateNeedsLogin
		st.Reason = "the token expired and there is no refresh token"
	}
	return st, nil
}
