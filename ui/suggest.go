package ui

import (
	"strings"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/llm"
)

// peerCommands are the slash commands of other chat tools that people type
// by habit, with the command that does the same here.
var peerCommands = map[string]string{
	"/mcp":         "/servers",
	"/permissions": "/grants",
	"/new":         "/clear",
	"/reset":       "/clear",
}

// commandNames are the slash commands the chat knows, as typed.
func commandNames() []string {
	names := []string{"/exit", "/?"}
	for _, c := range commandHelp {
		name, _, _ := strings.Cut(c[0], " ")
		names = append(names, name)
	}
	return names
}

// suggestCommand returns the command a mistyped or a peer's slash command
// probably meant, "" when none is near: a peer's name maps to ours, and a
// misspelling to the nearest name within two edits.
func suggestCommand(name string) string {
	name = strings.ToLower(name)
	if s, ok := peerCommands[name]; ok {
		return s
	}
	best, bestD := "", 3
	for _, c := range commandNames() {
		if d := config.EditDistance(name, c); d < bestD && d < len(c)-1 {
			best, bestD = c, d
		}
	}
	return best
}

// unknownCommand says that name is not a command, suggesting the nearest.
func unknownCommand(name string) string {
	msg := "unknown command " + cleanLine(name)
	if s := suggestCommand(name); s != "" {
		msg += ": did you mean " + s + "? /help lists the commands"
	} else {
		msg += ": /help lists the commands"
	}
	return msg + " (start a message with // to send a slash)"
}

// modelFamilies guess the provider of a model named without one.
var modelFamilies = []struct{ prefix, provider string }{
	{"gpt", "openai"}, {"chatgpt", "openai"}, {"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"},
	{"claude", "anthropic"},
}

// modelHint says which /model command spec was probably meant as, when
// spec is not in the PROVIDER:MODEL form or names an unknown provider;
// "" when the form is right (the error then says what else is wrong).
func modelHint(spec string) string {
	providers := llm.Providers()
	provider, model, ok := strings.Cut(spec, ":")
	if !ok {
		for _, f := range modelFamilies {
			if strings.HasPrefix(strings.ToLower(spec), f.prefix) {
				return "did you mean /model " + f.provider + ":" + spec + "?"
			}
		}
		return "write it as /model PROVIDER:" + spec + ", the provider one of " + strings.Join(providers, ", ")
	}
	for _, p := range providers {
		if p == provider {
			return ""
		}
	}
	best, bestD := "", 3
	for _, p := range providers {
		if d := config.EditDistance(strings.ToLower(provider), p); d < bestD {
			best, bestD = p, d
		}
	}
	if best == "" || model == "" {
		return ""
	}
	return "did you mean /model " + best + ":" + model + "?"
}
