package client

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcphost/mcphost/fixtures"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartStdio measures Manager.Start, from the call to every tool
// listed, for n tasks fixtures run as processes over stdio. New and Close
// are outside the timed region.
func BenchmarkStartStdio(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			specs := make([]Spec, n)
			for i := range specs {
				specs[i] = fixtureSpec(b, fmt.Sprintf("tasks%02d", i), "tasks")
			}
			var total time.Duration
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				m := New(specs, Options{})
				b.StartTimer()
				start := time.Now()
				m.Start(context.Background())
				total += time.Since(start)
				b.StopTimer()
				tools := len(m.Tools())
				m.Close()
				if tools != 26*n {
					b.Fatalf("%d tools listed, want %d: %+v", tools, 26*n, m.Servers())
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
}

// BenchmarkStartInProcess is BenchmarkStartStdio without processes: the
// host's own share of starting servers (connect, initialize, list, hash,
// in parallel), with the servers' start-up cost taken out.
func BenchmarkStartInProcess(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			specs := make([]Spec, n)
			for i := range specs {
				// Built once: a server process would have done this before
				// the host ever spoke to it.
				f, err := fixtures.New("tasks", fixtures.Options{})
				if err != nil {
					b.Fatal(err)
				}
				specs[i] = Spec{Name: fmt.Sprintf("tasks%02d", i), Dial: f.InMemory}
			}
			for b.Loop() {
				m := New(specs, Options{})
				m.Start(context.Background())
				b.StopTimer()
				tools := len(m.Tools())
				m.Close()
				if tools != 26*n {
					b.Fatalf("%d tools listed, want %d", tools, 26*n)
				}
				b.StartTimer()
			}
		})
	}
}

// catalogPages is a realistic catalog: servers × tools entries of about
// 600 bytes each — title, description, a schema of three properties, all
// four hints — served in pages of 100. About one name in twenty is not
// provider-safe, so naming also takes its hashing path.
func catalogPages(servers, tools int) [][]string {
	out := make([][]string, servers)
	for s := range servers {
		var pages []string
		var page []string
		for i := range tools {
			name := fmt.Sprintf("tool_%04d_%s", i, []string{"list", "get", "create", "update", "delete"}[i%5])
			if i%20 == 0 {
				name = strings.Replace(name, "_", ".", 1)
			}
			page = append(page, fmt.Sprintf(`{"name":%q,"title":"Tool %d of server %d",`+
				`"description":"Does operation %d on the records of the connected workspace; returns the affected records as JSON, `+
				`at most one hundred per call, and a cursor for the next ones.",`+
				`"inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"record id, such as R-%d"},`+
				`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"how many records to return"},`+
				`"cursor":{"type":"string","description":"from the previous call"}},"required":["id"],"additionalProperties":false},`+
				`"annotations":{"readOnlyHint":%t,"destructiveHint":%t,"idempotentHint":%t,"openWorldHint":%t}}`,
				name, i, s, i, i, i%5 < 2, i%5 == 4, i%5 != 2, i%7 == 0))
			if len(page) == 100 || i == tools-1 {
				pages = append(pages, `{"tools":[`+strings.Join(page, ",")+`]`)
				page = nil
			}
		}
		for p := range pages {
			if p < len(pages)-1 {
				pages[p] += fmt.Sprintf(`,"nextCursor":"c%d"}`, p+1)
			} else {
				pages[p] += `}`
			}
		}
		out[s] = pages
	}
	return out
}

// BenchmarkCatalog10k measures building the catalog of 10 servers × 1,000
// tools: reading the raw pages, bounding and hashing every entry, and naming
// every tool for the model.
func BenchmarkCatalog10k(b *testing.B) {
	const servers, perServer = 10, 1000
	all := catalogPages(servers, perServer)
	callers := make([]pages, servers)
	var size int
	for s, ps := range all {
		callers[s] = func(cursor string) string {
			n := 0
			if cursor != "" {
				fmt.Sscanf(cursor, "c%d", &n)
			}
			return ps[n]
		}
		for _, p := range ps {
			size += len(p)
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	ctx := context.Background()
	for b.Loop() {
		var tools []*Tool
		for s, rc := range callers {
			lst, err := listTools(ctx, rc, fmt.Sprintf("srv%d", s), Limits{})
			if err != nil {
				b.Fatal(err)
			}
			if len(lst.tools) != perServer || len(lst.findings) > perServer/20+1 {
				b.Fatalf("server %d: %d tools, %d findings", s, len(lst.tools), len(lst.findings))
			}
			tools = append(tools, lst.tools...)
		}
		sortTools(tools)
		if n := BuildNames(tools); n.Model(tools[0]) == "" {
			b.Fatal("no model name")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(servers*perServer), "ns/tool")
}

// catalogEntry is one entry of catalogPages.
func catalogEntry(tb testing.TB) json.RawMessage {
	var res struct{ Tools []json.RawMessage }
	if err := json.Unmarshal([]byte(catalogPages(1, 1)[0][0]), &res); err != nil {
		tb.Fatal(err)
	}
	return res.Tools[0]
}

// BenchmarkReadEntry measures reading one catalog entry — checking,
// bounding and hashing it — with a scanner whose buffers have grown.
func BenchmarkReadEntry(b *testing.B) {
	entry := catalogEntry(b)
	lim := Limits{}.withDefaults()
	var s scanner
	b.ReportAllocs()
	b.SetBytes(int64(len(entry)))
	for b.Loop() {
		if t, _, _ := readEntryRaw(&s, "srv", entry, lim); t == nil {
			b.Fatal("entry dropped")
		}
	}
}
