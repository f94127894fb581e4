package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"
)

// recordVersion is the format version of a token file.
const recordVersion = 1

// maxRecordSize bounds what Load reads: a token file is a few kilobytes.
const maxRecordSize = 1 << 20

// Record is what mcphost keeps about one server's authorization: the token
// and everything needed to refresh it and to know where it may be sent.
type Record struct {
	Version int    `json:"version"`
	Server  string `json:"server"` // the name in the configuration

	// Origin (scheme://host:port) and Resource (RFC 8707) the token was
	// issued for. The token is attached only to requests to Origin, and only
	// while the server's URL is covered by Resource.
	Origin   string `json:"origin"`
	Resource string `json:"resource"`
	Issuer   string `json:"issuer,omitempty"`

	TokenURL string `json:"tokenEndpoint"`
	// RevocationURL is the authorization server's token revocation
	// endpoint (RFC 7009), when its metadata named one.
	RevocationURL string `json:"revocationEndpoint,omitempty"`
	AuthStyle     int    `json:"authStyle,omitempty"` // an oauth2.AuthStyle
	ClientID      string `json:"clientId"`
	// ClientSecret is kept only for a dynamically registered client; a
	// pre-registered client's secret stays in the configuration.
	ClientSecret string `json:"clientSecret,omitempty"`

	Scopes       []string  `json:"scopes,omitempty"`
	TokenType    string    `json:"tokenType,omitempty"`
	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Obtained     time.Time `json:"obtained,omitzero"`
}

func (r *Record) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: r.AccessToken, TokenType: "Bearer", RefreshToken: r.RefreshToken, Expiry: r.Expiry}
}

// fresh reports whether the access token can still be used at now, with a
// margin so that a token does not expire on its way to the server.
func (r *Record) fresh(now time.Time) bool {
	return r.AccessToken != "" && (r.Expiry.IsZero() || now.Add(expiryMargin).Before(r.Expiry))
}

const expiryMargin = 30 * time.Second

// Store keeps token records, one file per server, in a directory that only
// the user can read.
type Store struct {
	dir string
}

// NewStore returns a store in dir, typically $XDG_STATE_HOME/mcphost/tokens.
// Nothing is created until a record is saved.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// Dir is the directory the store keeps its files in.
func (s *Store) Dir() string { return s.dir }

// plainName reports whether name matches ^[a-z0-9][a-z0-9_.-]{0,63}$. It is
// written out, not a regexp, so that the package compiles nothing when the
// program starts.
func plainName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// path is the file of server's record. Names that are not plain lower-case
// words are hashed, so that no name can escape the directory or collide with
// another on a case-insensitive file system.
func (s *Store) path(server string) string {
	if plainName(server) {
		return filepath.Join(s.dir, server+".json")
	}
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(s.dir, "h-"+hex.EncodeToString(sum[:12])+".json")
}

// Load returns server's record, or nil and no error if there is none.
func (s *Store) Load(server string) (*Record, error) {
	p := s.path(server)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read token for %s: %w", server, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		// Someone loosened it; a token file is for the user's eyes only.
		_ = f.Chmod(0o600)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecordSize+1))
	if err != nil {
		return nil, fmt.Errorf("read token for %s: %w", server, err)
	}
	if len(data) > maxRecordSize {
		return nil, fmt.Errorf("token file %s is larger than %d bytes; remove it with mcphost auth logout %s", p, maxRecordSize, server)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		// The decoder's message quotes no input, so no secret leaks into it.
		return nil, fmt.Errorf("token file %s is not valid: %v; remove it with mcphost auth logout %s", p, err, server)
	}
	if r.Version != recordVersion {
		return nil, fmt.Errorf("token file %s has format version %d, this mcphost knows %d", p, r.Version, recordVersion)
	}
	if r.Server != server {
		// A hashed name that collided, or a file copied by hand.
		return nil, nil
	}
	return &r, nil
}

// Save writes r atomically: a reader sees the old record or the new one,
// never a mix, and the file is never readable by anyone but the user.
func (s *Store) Save(r *Record) error {
	r.Version = recordVersion
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := s.ensureDir(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("save token for %s: %w", r.Server, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("save token for %s: %w", r.Server, err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("save token for %s: %w", r.Server, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save token for %s: %w", r.Server, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save token for %s: %w", r.Server, err)
	}
	if err := os.Rename(tmp.Name(), s.path(r.Server)); err != nil {
		return fmt.Errorf("save token for %s: %w", r.Server, err)
	}
	return nil
}

// Delete removes server's record. It reports whether there was one.
func (s *Store) Delete(server string) (bool, error) {
	err := os.Remove(s.path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove token for %s: %w", server, err)
	}
	return true, nil
}

func (s *Store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create token directory: %w", err)
	}
	fi, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("create token directory: %w", err)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(s.dir, 0o700); err != nil {
			return fmt.Errorf("restrict token directory: %w", err)
		}
	}
	return nil
}

// lock takes the lock that serializes refreshing server's token across
// processes: an authorization server that rotates refresh tokens would
// revoke both if two processes used the same one.
func (s *Store) lock(server string) (unlock func(), err error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	return lockFile(s.path(server) + ".lock")
}
