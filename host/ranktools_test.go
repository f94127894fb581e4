package host

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// RankTools is the Loop's ranking: for each query of testdata/ranking.txt
// and each trust, the same tools in the same order, cut at the limit as a
// search call's limit is.
func TestSearchRankToolsIsTheLoopsRanking(t *testing.T) {
	data, err := os.ReadFile("testdata/ranking.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := procManager(t, rankingServers...)
	tools := m.Tools()
	cases := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 3 {
			continue
		}
		trusted, query := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
		if trusted == "-" {
			trusted = ""
		}
		g := procGate(t, m, strings.Split(trusted, ",")...)
		l := NewLoop(LoopOptions{Gate: g, Tools: tools, ToolSearch: SearchAlways})
		all := l.rank(query)
		for _, c := range []struct{ limit, want int }{{0, searchDefaultLimit}, {3, 3}, {100, searchMaxLimit}} {
			got := refs(RankTools(tools, query, c.limit, g), 1000)
			if want := refs(all, c.want); !slices.Equal(got, want) {
				t.Errorf("trusted %q, query %q, limit %d: RankTools %v, the loop %v", trusted, query, c.limit, got, want)
			}
		}
		cases++
	}
	if cases < 10 {
		t.Fatalf("only %d cases read from testdata/ranking.txt", cases)
	}
}
