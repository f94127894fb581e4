package main

import (
	"context"

	"fmt"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/pgstore"
)

// auditLog is where a session's gate writes its records: the audit file
// (*audit.Log), or the chain in the PostgreSQL store.
type auditLog interface {
	host.AuditLog
	Close() error
}

// storeOpenTimeout bounds connecting to the store and migrating it.
const storeOpenTimeout = 30 * time.Second

// storeURL is the store the audit chain and held calls go to: flag (serve
// --store, audit --store) over the user config's "store"; "" for the files
// of the state directory. A managed policy that fixes the audit file keeps
// the chain there: the administrator's log is not moved by a person's
// setting.
func storeURL(flag string, cfg *config.Config, managed *config.Managed, s *streams) string {
	url := flag
	if url == "" && cfg != nil {
		url = cfg.Store
	}
	if url != "" && managed != nil && managed.Audit != "" {
		fmt.Fprintf(s.Err, "mcphost: warning: the store %s is not used: the managed policy (%s) writes the audit log to %s\n", pgstore.Redact(url), managed.At["audit"], managed.Audit)
		return ""
	}
	return url
}

// openStore connects to the store at url and migrates it, bounded.
func openStore(ctx context.Context, url string) (*pgstore.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
	defer cancel()
	return pgstore.Open(ctx, url)
}

// openAuditLog opens the log a session writes: the chain in the store
// when one is set (st.shared when the caller opened it already), else the
// audit file.
func (st *setup) openAuditLog(g *globalOptions) (auditLog, error) {
	if st.storeURL == "" {
		l, err := audit.Open(st.auditPath(g), st.auditOptions())
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	if st.shared != nil {
		return audit.OpenChain(st.shared, audit.Options{}), nil
	}
	s, err := openStore(context.Background(), st.storeURL)
	if err != nil {
		return nil, err
	}
	return &chainLog{ChainLog: audit.OpenChain(s, audit.Options{}), store: s}, nil
}

// chainLog is a chain in a store the log opened itself, and closes with
// it.
type chainLog struct {
	*audit.ChainLog
	store *pgstore.Store
}

func (l *chainLog) Close() error {
	err := l.ChainLog.Close()
	l.store.Close()
	return err
}
