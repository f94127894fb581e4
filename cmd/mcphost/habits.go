package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/state"
)

// projectInstructions finds the project's instructions file (AGENTS.md)
// and whether the person consented to sending it, as recorded in the state
// file: it is the project's text, consented to like a project server.
func (st *setup) projectInstructions(s *streams) (*config.Instructions, bool) {
	in, err := config.FindInstructions(s.WorkDir)
	if err != nil {
		fmt.Fprintf(s.Err, "mcphost: warning: %v; it is not sent to the model\n", err)
		st.warnings = append(st.warnings, err.Error()+"; it is not sent to the model")
		return nil, false
	}
	if in == nil {
		return nil, false
	}
	c, ok := st.store.State().Consent(in.Key, in.Hash)
	return in, ok && c.Choice != state.ChoiceSkipped
}

// briefing is what a headless run tells the model beside mcphost's system
// prompt: the servers' instructions, and the project's instructions file
// when consented to (else a note on stderr says how to consent).
func (st *setup) briefing(s *streams, m *client.Manager) func() host.Briefing {
	in, consented := st.projectInstructions(s)
	if in != nil && !consented {
		fmt.Fprintf(s.Err, "mcphost: note: the project's %s is not sent to the model: it is the project's text and needs your consent; run mcphost in this directory and type /instructions send\n", filepath.Base(in.File))
	}
	return func() host.Briefing {
		var b host.Briefing
		if consented {
			b.Project, b.ProjectFile = in.Text, in.File
		}
		for _, ss := range m.Servers() {
			if ss.State != client.StateReady {
				continue
			}
			if t := m.Instructions(ss.Name); t != "" {
				b.Servers = append(b.Servers, host.ServerInstructions{Server: ss.Name, Text: t})
			}
		}
		slices.SortFunc(b.Servers, func(x, y host.ServerInstructions) int { return strings.Compare(x.Server, y.Server) })
		return b
	}
}

// maxRecentModels bounds the recently used models /model offers.
const maxRecentModels = 8

// pickableModels are the models /model offers without an argument: those
// the config has settings for, then those the saved chats used most
// recently.
func (st *setup) pickableModels(s *streams) []string {
	var out []string
	seen := map[string]bool{}
	for _, name := range sortedModelKeys(st.cfg.Models) {
		seen[name] = true
		out = append(out, name)
	}
	list, _ := chatlog.List(sessionsDir(s))
	recent := 0
	for _, sum := range list {
		if sum.Err != nil || sum.Model == "" || seen[sum.Model] {
			continue
		}
		seen[sum.Model] = true
		out = append(out, sum.Model)
		if recent++; recent == maxRecentModels {
			break
		}
	}
	return out
}

func sortedModelKeys(m map[string]config.ModelSettings) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
