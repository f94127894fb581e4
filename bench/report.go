//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// report is everything one invocation measured; its JSON form is the
// output of -json.
type report struct {
	Runs         int          `json:"runs"`
	Machine      machine      `json:"machine"`
	BinaryBytes  int64        `json:"mcphostBinaryBytes"`
	RSSTargetMiB float64      `json:"rssTargetMiB"`
	Sets         []*setResult `json:"sets"`
}

// pair is one floor run and the mcphost run after it.
type pair struct {
	Floor sample `json:"floor"`
	Host  sample `json:"mcphost"`
}

// setResult holds the runs of one server set and their medians.
type setResult struct {
	Name        string  `json:"name"`
	Server      string  `json:"server"`
	Servers     int     `json:"servers"`
	Tools       int     `json:"tools"`
	Failure     string  `json:"failure,omitempty"`
	RatioTarget float64 `json:"ratioTarget,omitempty"`
	Floor       *stats  `json:"floor,omitempty"`
	Host        *stats  `json:"mcphost,omitempty"`
	// Ratio is the median of the per-pair ratios of wall time
	// mcphost/floor; RatioMin and RatioMax show their spread.
	Ratio    float64 `json:"ratio,omitempty"`
	RatioMin float64 `json:"ratioMin,omitempty"`
	RatioMax float64 `json:"ratioMax,omitempty"`
	Pairs    []pair  `json:"pairs"`
}

// stats are the medians of one side's samples, plus the largest peak RSS.
type stats struct {
	Wall       time.Duration `json:"wallNs"`
	OwnCPU     time.Duration `json:"ownCpuNs"`
	TotalCPU   time.Duration `json:"totalCpuNs"`
	PeakRSS    int64         `json:"peakRssBytes"`
	MaxPeakRSS int64         `json:"maxPeakRssBytes"`
}

func (r *setResult) summarize() {
	if len(r.Pairs) == 0 {
		return
	}
	side := func(get func(pair) sample) *stats {
		var wall, own, total, rss []float64
		for _, p := range r.Pairs {
			s := get(p)
			wall = append(wall, float64(s.Wall))
			own = append(own, float64(s.OwnCPU))
			total = append(total, float64(s.TotalCPU))
			rss = append(rss, float64(s.PeakRSS))
		}
		return &stats{
			Wall: time.Duration(median(wall)), OwnCPU: time.Duration(median(own)),
			TotalCPU: time.Duration(median(total)), PeakRSS: int64(median(rss)),
			MaxPeakRSS: int64(slices.Max(rss)),
		}
	}
	r.Floor = side(func(p pair) sample { return p.Floor })
	r.Host = side(func(p pair) sample { return p.Host })
	var ratios []float64
	for _, p := range r.Pairs {
		ratios = append(ratios, ratio(p.Host.Wall, p.Floor.Wall))
	}
	r.Ratio, r.RatioMin, r.RatioMax = median(ratios), slices.Min(ratios), slices.Max(ratios)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func mib(b int64) string {
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// against prints a figure beside its target; benchmarks do not fail on
// time, so a missed target is only marked.
func against(figure string, value, target float64, targetText string) string {
	if target == 0 {
		return figure
	}
	mark := "met"
	if value > target {
		mark = "missed"
	}
	return fmt.Sprintf("%s (≤ %s, %s)", figure, targetText, mark)
}

func (rep *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func (rep *report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| servers | tools | floor | mcphost | mcphost / floor | mcphost peak RSS | floor peak RSS | mcphost CPU | CPU with servers: floor → mcphost |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rep.Sets {
		name := fmt.Sprintf("%d × %s", r.Servers, r.Server)
		if r.Failure != "" || r.Host == nil {
			fmt.Fprintf(&b, "| %s | %d | failed: %s | | | | | | |\n", name, r.Tools, firstLine(r.Failure))
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s → %s |\n",
			name, r.Tools, ms(r.Floor.Wall), ms(r.Host.Wall),
			against(fmt.Sprintf("%.2f", r.Ratio), r.Ratio, r.RatioTarget, fmt.Sprintf("%.2f", r.RatioTarget)),
			against(mib(r.Host.PeakRSS), float64(r.Host.PeakRSS)/(1<<20), rep.RSSTargetMiB, fmt.Sprintf("%g MiB", rep.RSSTargetMiB)),
			mib(r.Floor.PeakRSS), ms(r.Host.OwnCPU), ms(r.Floor.TotalCPU), ms(r.Host.TotalCPU))
	}
	m := rep.Machine
	fmt.Fprintf(&b, "\nMedians of %d run(s) per side, floor and mcphost alternating after one warm-up pair; "+
		"the ratio is the median of per-pair ratios of wall time. Peak RSS and \"mcphost CPU\" are the mcphost process alone, medians of per-run values "+
		"(CPU truncated to 10 ms clock ticks); \"CPU with servers\" adds every server it ran. Targets: ratio ≤ 1.10 with 1 server, ≤ 1.05 with 10; "+
		"mcphost's own peak RSS ≤ %g MiB.\n\n", rep.Runs, rep.RSSTargetMiB)
	fmt.Fprintf(&b, "Machine: %d CPUs, %s, %s, %s", m.CPUs, orUnknown(m.CPUModel), m.OS, m.GoVersion)
	if m.NodeVersion != "" {
		fmt.Fprintf(&b, ", Node.js %s", m.NodeVersion)
	}
	fmt.Fprintf(&b, ". mcphost binary: %s.\n", mib(rep.BinaryBytes))
	_, err := io.WriteString(w, b.String())
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.ReplaceAll(line, "|", `\|`)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown CPU"
	}
	return s
}
