package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listedRoots calls server's roots tool on cs and returns the roots it was
// given, as "URI name" lines (nil, the test marked failed, when the call
// fails: it may run on a goroutine of the test's).
func listedRoots(t *testing.T, cs *mcp.ClientSession, server string, wait int) []string {
	t.Helper()
	got, err := callText(cs, server+"__roots", fmt.Sprintf(`{"wait":%d}`, wait))
	if err != nil {
		t.Errorf("%s roots: %v", server, err)
		return nil
	}
	lines := strings.Split(got, "\n")
	if fmt.Sprint(len(lines)-1) != lines[0] {
		t.Errorf("%s roots: %q, want a count and that many lines", server, got)
		return nil
	}
	return lines[1:]
}

// With no roots configured, a server's roots/list during a call is
// answered with the roots of the client whose call runs there, each
// client's with its own, in memory, over HTTP and, for a 2026-07-28
// client, as an input request of its parked call; when calls of two
// clients run on the server, or the client did not declare the roots
// capability, the server is told none.
func TestAServersRootsAreTheCallingClients(t *testing.T) {
	for _, tc := range []struct {
		name     string
		overHTTP bool
		version  string
	}{{"in-memory", false, ""}, {"http", true, ""}, {"2026-07-28", false, "2026-07-28"}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
			var url []string
			if tc.overHTTP {
				ts := httptest.NewServer(w.srv.Handler("tok"))
				t.Cleanup(ts.Close)
				url = append(url, ts.URL)
			}
			a, b, c := newAnswerer("alice"), newAnswerer("bob"), newAnswerer("carol")
			a.roots = []*mcp.Root{{URI: "file:///home/alice/project", Name: "project"}}
			b.roots = []*mcp.Root{{URI: "file:///home/bob/work", Name: "work"}}
			c.roots, c.noRoots = []*mcp.Root{{URI: "file:///home/carol"}}, true
			a.version, b.version, c.version = tc.version, tc.version, tc.version
			csA, csB, csC := a.connect(t, w, url...), b.connect(t, w, url...), c.connect(t, w, url...)

			var wg sync.WaitGroup
			var gotA, gotB []string
			wg.Go(func() { gotA = listedRoots(t, csA, "ask1", 1) })
			wg.Go(func() { gotB = listedRoots(t, csB, "ask2", 1) })
			wg.Wait()
			if want := "file:///home/alice/project project"; len(gotA) != 1 || gotA[0] != want {
				t.Errorf("ask1 was given %q during alice's call, want alice's root only (%q)", gotA, want)
			}
			if want := "file:///home/bob/work work"; len(gotB) != 1 || gotB[0] != want {
				t.Errorf("ask2 was given %q during bob's call, want bob's root only (%q)", gotB, want)
			}

			if tc.version == "" { // a 2026-07-28 call parks; two at once are not told apart by a barrier
				wg.Go(func() { gotA = listedRoots(t, csA, "ask1", 2) })
				wg.Go(func() { gotB = listedRoots(t, csB, "ask1", 2) })
				wg.Wait()
				if len(gotA) != 0 || len(gotB) != 0 {
					t.Errorf("with calls of alice and bob on ask1 at once, it was given %q and %q, want no one's roots", gotA, gotB)
				}
			}
			if got := listedRoots(t, csC, "ask1", 1); len(got) != 0 {
				t.Errorf("carol declared no roots capability, yet ask1 was given %q", got)
			}
		})
	}
}

// Roots the person configured are the answer, whichever client's call
// runs: the person's explicit choice wins.
func TestConfiguredRootsWinOverTheClients(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true,
		roots: []*mcp.Root{{URI: "file:///srv/configured", Name: "configured"}}})
	a := newAnswerer("alice")
	a.roots = []*mcp.Root{{URI: "file:///home/alice/project", Name: "project"}}
	if got := listedRoots(t, a.connect(t, w), "ask1", 1); len(got) != 1 || got[0] != "file:///srv/configured configured" {
		t.Errorf("ask1 was given %q, want the configured root only", got)
	}
}

// A client's roots reach a server bounded: at most MaxRoots, only
// file:// URIs of at most MaxRootURI bytes, names escaped and cut. The
// roots that must be left out sort first, so a missing filter shows.
func TestAClientsHostileRootsAreBounded(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	a := newAnswerer("mallory")
	a.roots = []*mcp.Root{
		{URI: "data:,not-a-file", Name: "data"},
		{URI: "/etc/no-scheme", Name: "bare"},
		{URI: "file:///a" + strings.Repeat("a", MaxRootURI), Name: "long"},
		{URI: "file:///b\u202ereversed", Name: "a bidi override in the URI"},
	}
	for i := range 1000 {
		name := fmt.Sprintf("\x1b[31mroot %d\x1b[0m", i)
		if i == 0 {
			name = strings.Repeat("n", 10*MaxRootNameLen)
		}
		a.roots = append(a.roots, &mcp.Root{URI: fmt.Sprintf("file:///r/%04d", i), Name: name})
	}
	got := listedRoots(t, a.connect(t, w), "ask1", 1)
	if len(got) != MaxRoots {
		t.Fatalf("ask1 was given %d roots, want %d", len(got), MaxRoots)
	}
	for i, line := range got {
		uri, name, _ := strings.Cut(line, " ")
		if want := fmt.Sprintf("file:///r/%04d", i); uri != want {
			t.Fatalf("root %d is %q, want %q: only file:// URIs of bounded length, in order", i, uri, want)
		}
		if strings.ContainsRune(name, '\x1b') || len(name) > MaxRootNameLen+len("… [9999 bytes cut]") {
			t.Fatalf("root %d's name reached the server as %q, want it escaped and cut", i, name)
		}
	}
	if !strings.Contains(got[1], `\x1b[31mroot 1`) {
		t.Errorf("root 1's name is %q, want its escape shown", got[1])
	}
}

// A server that lists roots while none of its calls runs is told none,
// even with one client connected: roots go with a call, never to whoever
// happens to be connected.
func TestRootsOutsideACallAreNoOnes(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	a := newAnswerer("alice")
	a.roots = []*mcp.Root{{URI: "file:///home/alice/project", Name: "project"}}
	cs := a.connect(t, w)
	lb := label("keep")
	if got, err := callText(cs, "ask1__keep", `{"label":"`+lb+`"}`); err != nil || got != "kept" {
		t.Fatalf("keep: %q %v", got, err)
	}
	v, ok := askerSessions.Load(lb)
	if !ok {
		t.Fatal("the server kept no session")
	}
	res, err := v.(*mcp.ServerSession).ListRoots(context.Background(), nil)
	if err != nil {
		t.Fatalf("roots/list outside a call: %v", err)
	}
	if len(res.Roots) != 0 {
		t.Errorf("outside a call the server was given %v, want no one's roots", res.Roots)
	}
	// The same client's roots do reach it during a call.
	if got := listedRoots(t, cs, "ask1", 1); len(got) != 1 {
		t.Errorf("during a call: %q, want alice's root", got)
	}
}
