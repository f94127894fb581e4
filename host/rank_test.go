package host

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/llm"
)

// rankingServers are the servers of testdata/ranking.txt, in their order.
var rankingServers = []procServer{
	{"fs", "hostile --hostile none"},
	{"decoys", "hostile --hostile stuffed"},
	{"tasks", "tasks"},
}

// Each case of testdata/ranking.txt: the query's first tool is the one
// named, and no stuffed decoy comes before a tool that matches by name.
func TestSearchRanking(t *testing.T) {
	data, err := os.ReadFile("testdata/ranking.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := procManager(t, rankingServers...)
	cases := 0
	for n, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("testdata/ranking.txt:%d: want trusted | query | first, got %q", n+1, line)
		}
		trusted, query, want := strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), strings.TrimSpace(f[2])
		if trusted == "-" {
			trusted = ""
		}
		cases++
		l := NewLoop(LoopOptions{Gate: procGate(t, m, strings.Split(trusted, ",")...), Tools: m.Tools(), ToolSearch: SearchAlways})
		hits := l.rank(query)
		if want == "-" {
			if len(hits) > 0 {
				t.Errorf("testdata/ranking.txt:%d: query %q found %v, want nothing", n+1, query, refs(hits, 5))
			}
			continue
		}
		if len(hits) == 0 || !slices.Contains(strings.Split(want, " or "), hits[0].Ref()) {
			t.Errorf("testdata/ranking.txt:%d: trusted %q, query %q: first %v, want %s", n+1, trusted, query, refs(hits, 5), want)
		}
		// Untrusted decoys come after both honest read_file tools.
		if i := slices.IndexFunc(hits, func(t *client.Tool) bool { return strings.HasPrefix(t.Name, "stuffed_") }); i >= 0 && i < 2 &&
			strings.Contains(query, "file") && !strings.Contains(","+trusted+",", ",decoys,") {
			t.Errorf("testdata/ranking.txt:%d: query %q: a stuffed decoy is at %d: %v", n+1, query, i+1, refs(hits, 5))
		}
	}
	if cases < 10 {
		t.Fatalf("only %d cases read from testdata/ranking.txt", cases)
	}
}

func refs(tools []*client.Tool, n int) []string {
	var out []string
	for _, t := range tools[:min(n, len(tools))] {
		out = append(out, t.Ref())
	}
	return out
}

// An untrusted server's 101 tools do not turn search on by their number:
// every tool is still offered in full. The same tools from a trusted
// server do.
func TestUntrustedToolCountDoesNotTurnSearchOn(t *testing.T) {
	m := procManager(t, rankingServers[0], rankingServers[1])
	if n := len(m.Tools()); n <= SearchMaxTools {
		t.Fatalf("%d tools, want more than %d", n, SearchMaxTools)
	}
	for _, c := range []struct {
		trusted string
		search  bool
	}{{"fs", false}, {"fs,decoys", true}} {
		rec := &turnRecorder{Model: llm.NewScript([]llm.ScriptTurn{{Text: "hi"}})}
		// A window so large that only the count can turn search on.
		l := NewLoop(LoopOptions{Model: rec, Gate: procGate(t, m, strings.Split(c.trusted, ",")...), Tools: m.Tools(), ContextWindow: 1 << 30})
		if _, err := l.Run(context.Background(), "hello"); err != nil {
			t.Fatal(err)
		}
		offered := toolNames(rec.reqs[0].Tools)
		if got := slices.Contains(offered, SearchToolName); got != c.search {
			t.Errorf("trusting %s, the model was offered %d tools (search: %v), want search %v", c.trusted, len(offered), got, c.search)
		}
	}
}
