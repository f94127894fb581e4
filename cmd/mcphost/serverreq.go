package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sampler lets servers use the person's model once a command has one.
type sampler struct {
	mu    sync.Mutex
	model llm.Model
}

// serverRequestOptions answers what servers ask of the host when no
// person is there: roots only as configured, elicitation declined unless
// --elicit defaults, sampling refused unless --allow-sampling.
func serverRequestOptions(g *globalOptions, s *streams) (client.Options, *sampler, error) {
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
	switch g.Elicit {
	case "decline", "":
		o.Elicitation = func(_ context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Fprintf(s.Err, "mcphost: declined a question from %s (no one to ask; --elicit defaults accepts the defaults): %s\n",
				sanitize.Line(server), sanitize.Line(sanitize.Truncate(req.Params.Message, 200)))
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	case "defaults":
		o.Elicitation = func(_ context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			res := host.ElicitDefaults(req.Params)
			past := map[string]string{"accept": "accepted", "decline": "declined", "cancel": "cancelled"}[res.Action]
			fmt.Fprintf(s.Err, "mcphost: %s a question from %s: %s\n", past, sanitize.Line(server),
				sanitize.Line(sanitize.Truncate(req.Params.Message, 200)))
			return res, nil
		}
	default:
		return o, nil, usageError(fmt.Errorf("--elicit %q: want decline or defaults", g.Elicit))
	}
	if g.AllowSampling {
		smp = &sampler{}
		o.Sampling = func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			smp.mu.Lock()
			m := smp.model
			smp.mu.Unlock()
			res, usage, err := host.Sample(ctx, m, req.Params)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(s.Err, "mcphost: %s used the model: %d input and %d output tokens\n", sanitize.Line(server), usage.InputTokens, usage.OutputTokens)
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
