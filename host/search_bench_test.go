package host

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
)

// benchTools is a catalogue of n tools shaped like real ones: a name of two
// or three words, a title, a description of a few sentences and a schema
// with two described arguments; every tenth is a stuffed decoy.
func benchTools(n int) []*client.Tool {
	verbs := []string{"read", "list", "create", "update", "delete", "search", "get", "send", "move", "copy"}
	nouns := []string{"file", "issue", "task", "message", "branch", "commit", "page", "record", "user", "event", "label", "comment"}
	tools := make([]*client.Tool, n)
	for i := range tools {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		desc := fmt.Sprintf("%s one %s of the workspace by its identifier. Returns the %s as JSON, with its metadata and the time it last changed.", strings.ToUpper(v[:1])+v[1:], o, o)
		if i%10 == 9 {
			desc = strings.Repeat("read file ", 200)
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
			"id":    map[string]string{"type": "string", "description": "The " + o + "'s identifier."},
			"limit": map[string]string{"type": "integer", "description": "The most results to return."},
		}})
		tools[i] = &client.Tool{Server: fmt.Sprintf("s%d", i%7), Name: fmt.Sprintf("%s_%s_%d", v, o, i), Title: v + " " + o, Description: desc, InputSchema: schema}
	}
	return tools
}

// BenchmarkSearch measures one search of the host's tool search over
// catalogues of 100 and 1,000 tools.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			l := NewLoop(LoopOptions{Tools: benchTools(n), ToolSearch: SearchAlways})
			b.ReportAllocs()
			for b.Loop() {
				if s := l.searchText(searchArgs{Query: "read a file by its path"}); s == "" {
					b.Fatal("empty search result")
				}
			}
		})
	}
}
