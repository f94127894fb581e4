package ui

import (
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/llm"
)

// modelCommand runs /model: alone it says which model the chat uses and
// how to switch; with PROVIDER:MODEL it builds that model through
// Config.SwitchModel and uses it from the next message on. The
// conversation carries over. A spec that cannot be used (an unknown
// provider, a missing key) is refused with the reason, and the current
// model stays.
func (m *Model) modelCommand(spec string) {
	current := "no model"
	if m.cfg.Model != nil {
		current = cleanLine(m.cfg.Model.Name())
	}
	usage := "/model PROVIDER:MODEL switches from the next message on (providers: " + strings.Join(llm.Providers(), ", ") + ")"
	switch {
	case spec == "":
		if m.cfg.SwitchModel == nil {
			usage = "this chat cannot switch models"
		}
		m.notice(levelInfo, "the model is "+current+"; "+usage)
		return
	case m.run != nil:
		m.flash = "the model is working: ctrl+c first, or /model when it is done"
		return
	case m.cfg.SwitchModel == nil:
		m.notice(levelWarn, "/model: this chat cannot switch models; the model is still "+current)
		return
	case strings.ContainsAny(spec, " \t"):
		m.notice(levelWarn, "usage: "+usage)
		return
	}
	ch, err := m.cfg.SwitchModel(spec)
	if err == nil && ch.Model == nil {
		err = fmt.Errorf("no model was built for %q", spec)
	}
	if err != nil {
		text := "/model: " + cleanLine(err.Error()) + "; the model is still " + current
		if hint := modelHint(spec); hint != "" { // suggest.go
			text += "; " + cleanLine(hint)
		}
		m.notice(levelWarn, text)
		return
	}
	old := m.cfg.Model
	m.setModel(ch.Model)
	m.cfg.ContextWindow, m.cfg.Context.ContextWindow = 0, ch.ContextWindow
	if m.loop != nil {
		m.loop.SetModel(m.metered(ch.Model), ch.ContextWindow)
	}
	if old == nil {
		m.input.Placeholder = newInput(m.st, true).Placeholder
	}
	m.rec.switched(ch) // session.go
	name := cleanLine(ch.Model.Name())
	text := "the model is now " + name + " from the next message on; the conversation carries over"
	if old != nil && provider(old.Name()) != provider(ch.Model.Name()) {
		text += "; what " + cleanLine(provider(old.Name())) + " sent as thinking or reasoning is not sent to " + cleanLine(provider(ch.Model.Name()))
	}
	m.notice(levelInfo, text)
}

// provider is the provider part of a "provider:model" name.
func provider(name string) string {
	p, _, _ := strings.Cut(name, ":")
	return p
}

// providerEntries complete the argument of /model: each provider, with the
// colon that the model name follows.
func providerEntries() []menuEntry {
	var out []menuEntry
	for _, p := range llm.Providers() {
		out = append(out, menuEntry{insert: p + ":", label: p + ":MODEL", help: "a model of " + p})
	}
	return out
}

// switched saves that the person switched the model, so that a resume
// uses the new one.
func (r *recorder) switched(ch ModelChoice) {
	r.append(chatlog.Record{Type: chatlog.TypeNote, Note: chatlog.NoteModel,
		Session: &chatlog.Header{Model: ch.Model.Name(), BaseURL: ch.BaseURL}})
}

// setModel makes x the chat's model: for the next turn, and for the
// servers' sampling requests, which read it from their own goroutines.
func (m *Model) setModel(x llm.Model) {
	m.cfg.Model = x
	m.sampleModel.Store(&x)
}
