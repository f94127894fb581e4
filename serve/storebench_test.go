package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/pgstore"
)

// storeChain opens a pool of its own on the database at url (as a replica
// does) and returns an audit log writing to its chain.
func storeChain(b *testing.B, url string) *audit.ChainLog {
	b.Helper()
	s, err := pgstore.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return audit.OpenChain(s, audit.Options{})
}

// BenchmarkReadServeHTTPStore is BenchmarkReadServeHTTP with the audit
// chain in PostgreSQL (a throwaway cluster on this machine, over its Unix
// socket): the difference of the two is what the store adds to a read,
// whose intent and outcome are both appended.
//
//	go test -run '^$' -bench 'ReadServeHTTP' -benchtime 2000x ./serve
func BenchmarkReadServeHTTPStore(b *testing.B) {
	srv := servedWorldWith(b, storeChain(b, pgtest.DB(b)))
	ts := httptest.NewServer(srv.Handler("tok"))
	b.Cleanup(ts.Close)
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	measure(b, cs, "flaky__read_value")
	cs.Close()
}

// BenchmarkReplicasHTTP runs 20 clients at once, 50 reads each, spread
// over serve replicas: one with the file log, one with the PostgreSQL
// store, and two on one PostgreSQL store (as behind a load balancer). It
// reports calls per second and fails unless the log holds every call's
// intent and outcome once and verifies.
//
//	go test -run '^$' -bench Replicas -benchtime 3x ./serve
func BenchmarkReplicasHTTP(b *testing.B) {
	for _, c := range []struct {
		name     string
		replicas int
		store    bool
	}{{"file-1", 1, false}, {"store-1", 1, true}, {"store-2", 2, true}} {
		b.Run(c.name, func(b *testing.B) {
			var url string
			if c.store {
				url = pgtest.DB(b)
			}
			var endpoints []string
			var logs []*audit.ChainLog
			for range c.replicas {
				var srv *Server
				if c.store {
					l := storeChain(b, url)
					logs = append(logs, l)
					srv = servedWorldWith(b, l)
				} else {
					srv = servedWorld(b)
				}
				ts := httptest.NewServer(srv.Handler("tok"))
				b.Cleanup(ts.Close)
				endpoints = append(endpoints, ts.URL)
			}
			const clients, calls = 20, 50
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			b.Cleanup(tr.CloseIdleConnections)
			b.ResetTimer()
			for range b.N {
				b.ReportMetric(loadHTTP(b, endpoints, tr, clients, calls), "calls/s")
			}
			b.StopTimer()
			if !c.store {
				return
			}
			s, err := pgstore.Open(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rep, err := s.Verify(context.Background())
			if err != nil || len(rep.Problems) > 0 {
				b.Fatalf("the shared chain does not verify: %v %+v", err, rep.Problems)
			}
			if want := 2 * clients * calls * b.N; rep.Records < want {
				b.Fatalf("the chain holds %d records, want at least %d (every call's intent and outcome)", rep.Records, want)
			}
		})
	}
}
