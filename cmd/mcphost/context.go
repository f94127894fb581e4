package main

import (
	"slices"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// contextSettings are the config's tool search mode, the servers'
// "alwaysLoad" lists and the model's "contextWindow", for the loop.
func (st *setup) contextSettings(m llm.Model) host.ContextSettings {
	cs := host.ContextSettings{ToolSearch: st.cfg.ToolSearch}
	if m != nil {
		cs.ContextWindow = st.cfg.Models[m.Name()].ContextWindow
	}
	always := map[string][]string{}
	for _, s := range st.cfg.Servers {
		if len(s.AlwaysLoad) > 0 {
			always[s.Name] = s.AlwaysLoad
		}
	}
	if len(always) > 0 {
		cs.AlwaysLoad = func(t *client.Tool) bool { return slices.Contains(always[t.Server], t.Name) }
	}
	return cs
}
