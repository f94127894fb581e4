package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sampler lets servers use the person's model once a command has one,
// each within its budget.
type sampler struct {
	meter *host.SampleMeter

	mu      sync.Mutex
	model   llm.Model
	refused map[string]bool // servers told they spent their budget
}

// firstRefusal reports whether this is the first budget refusal of
// server, which gets a line of its own as it happens.
func (smp *sampler) firstRefusal(server string) bool {
	smp.mu.Lock()
	defer smp.mu.Unlock()
	if smp.refused[server] {
		return false
	}
	if smp.refused == nil {
		smp.refused = map[string]bool{}
	}
	smp.refused[server] = true
	return true
}

// serverRequestOptions answers what servers ask of the host when no
// person is there: roots only as configured, elicitation declined unless
// --elicit defaults, sampling refused unless --allow-sampling. What it
// prints is coalesced (see requestNotes): the first request of each kind
// from a server gets a line as it comes, the rest one line per server when
// the command ends.
func serverRequestOptions(g *globalOptions, s *streams, meter *host.SampleMeter) (client.Options, *sampler, error) {
	var o client.Options
	var smp *sampler
	for _, dir := range g.Roots {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return o, nil, usageError(fmt.Errorf("--root %s: %v", dir, err))
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return o, nil, usageError(fmt.Errorf("--root %s: not a directory", dir))
		}
		u := url.URL{Scheme: "file", Path: abs}
		o.Roots = append(o.Roots, &mcp.Root{URI: u.String(), Name: filepath.Base(abs)})
	}
	notes := s.requestNotes()
	o.RateLimited = func(server, kind string) { notes.count(server, kind, "refused over its rate limit") }
	switch g.Elicit {
	case "decline", "":
		o.Elicitation = func(_ context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if notes.count(server, "elicitation", "declined") {
				fmt.Fprintf(s.Err, "mcphost: declined a question from %s (no one to ask; --elicit defaults accepts the defaults): %s\n",
					sanitize.Line(server), sanitize.Line(sanitize.Truncate(req.Params.Message, 200)))
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	case "defaults":
		o.Elicitation = func(_ context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			res := host.ElicitDefaults(req.Params)
			past := map[string]string{"accept": "accepted", "decline": "declined", "cancel": "cancelled"}[res.Action]
			if notes.count(server, "elicitation", past) {
				why := ""
				if res.Action == "decline" {
					why = " (" + elicitDeclineReason(req.Params) + "; --elicit defaults answers only a form whose every required field has a default)"
				}
				fmt.Fprintf(s.Err, "mcphost: %s a question from %s%s: %s\n", past, sanitize.Line(server), why,
					sanitize.Line(sanitize.Truncate(req.Params.Message, 200)))
			}
			return res, nil
		}
	default:
		return o, nil, usageError(fmt.Errorf("--elicit %q: want decline or defaults", g.Elicit))
	}
	if g.AllowSampling {
		smp = &sampler{meter: meter}
		o.Sampling = func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			smp.mu.Lock()
			m := smp.model
			smp.mu.Unlock()
			res, usage, err := meter.Sample(ctx, m, server, req.Params)
			if errors.Is(err, host.ErrSamplingBudget) {
				notes.count(server, "sampling", "refused over its budget")
				if smp.firstRefusal(server) {
					fmt.Fprintf(s.Err, "mcphost: refused %s the model: it has spent its sampling budget of %s (\"samplingBudget\" in your config raises it)\n",
						sanitize.Line(server), nounCount(meter.Budget(), "token"))
				}
				return nil, err
			}
			if err != nil {
				notes.count(server, "sampling", "failed")
				return nil, err
			}
			if notes.count(server, "sampling", "answered") {
				fmt.Fprintf(s.Err, "mcphost: %s used the model: %d input and %s\n", sanitize.Line(server), usage.InputTokens, nounCount(usage.OutputTokens, "output token"))
			}
			return res, nil
		}
	}
	return o, smp, nil
}

// use hands the command's model to servers that sample; a nil sampler
// (sampling not allowed) ignores it.
func (smp *sampler) use(m llm.Model) {
	if smp == nil {
		return
	}
	smp.mu.Lock()
	smp.model = m
	smp.mu.Unlock()
}

// requestNotes counts the requests servers sent a headless command, so
// that a server flooding them costs one line of output, not one a request.
type requestNotes struct {
	mu      sync.Mutex
	servers []string                             // in order of first request
	counts  map[string]map[string]map[string]int // server → kind → outcome → n
	printed map[string]map[string]bool           // server → kind → its first line was printed
}

// requestNotes returns the command's notes, made on first use; run prints
// them when the command ends.
func (s *streams) requestNotes() *requestNotes {
	if s.notes == nil {
		s.notes = &requestNotes{counts: map[string]map[string]map[string]int{}, printed: map[string]map[string]bool{}}
	}
	return s.notes
}

// count records one request of kind from server and its outcome. It
// reports whether the request should be printed: the first of its kind
// from that server that was not refused over the rate limit.
func (n *requestNotes) count(server, kind, outcome string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.counts[server] == nil {
		n.servers = append(n.servers, server)
		n.counts[server] = map[string]map[string]int{}
		n.printed[server] = map[string]bool{}
	}
	if n.counts[server][kind] == nil {
		n.counts[server][kind] = map[string]int{}
	}
	n.counts[server][kind][outcome]++
	if outcome == "refused over its rate limit" || n.printed[server][kind] {
		return false
	}
	n.printed[server][kind] = true
	return true
}

// flush prints one line per server whose requests were not all printed as
// they came: how many of each kind it sent and what became of them.
func (n *requestNotes) flush(w io.Writer) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, server := range n.servers {
		var parts []string
		unprinted := false
		for _, kind := range []string{"elicitation", "sampling", "roots"} {
			outcomes := n.counts[server][kind]
			total := 0
			var detail []string
			for _, o := range []string{"accepted", "declined", "cancelled", "answered", "failed", "refused over its budget", "refused over its rate limit"} {
				if c := outcomes[o]; c > 0 {
					total += c
					detail = append(detail, fmt.Sprintf("%d %s", c, o))
				}
			}
			if total == 0 {
				continue
			}
			if total > 1 || !n.printed[server][kind] {
				unprinted = true
			}
			parts = append(parts, fmt.Sprintf("%d %s request%s (%s)", total, kind, plural(total), strings.Join(detail, ", ")))
		}
		if unprinted {
			fmt.Fprintf(w, "mcphost: server %s sent %s\n", sanitize.Line(server), strings.Join(parts, ", "))
		}
	}
	n.servers, n.counts, n.printed = nil, map[string]map[string]map[string]int{}, map[string]map[string]bool{}
}

// elicitDeclineReason says why host.ElicitDefaults declines p, in the
// person's words.
func elicitDeclineReason(p *mcp.ElicitParams) string {
	if p == nil {
		return "the question was empty"
	}
	if p.Mode == "url" || p.URL != "" {
		return "it asks to open a web page, which needs a person"
	}
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err == nil {
		err = json.Unmarshal(raw, &schema)
	}
	if err != nil {
		return "its form could not be read"
	}
	var missing []string
	for _, r := range schema.Required {
		if prop, ok := schema.Properties[r]; !ok || len(prop.Default) == 0 {
			missing = append(missing, fmt.Sprintf("%q", sanitize.Line(sanitize.Truncate(r, 40))))
		}
	}
	switch len(missing) {
	case 0:
		return "its form has no usable defaults"
	case 1:
		return "the required field " + missing[0] + " has no default"
	}
	if len(missing) > 5 {
		missing = append(missing[:5], "…")
	}
	return "the required fields " + strings.Join(missing, ", ") + " have no default"
}
