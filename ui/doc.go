// Package ui is mcphost's interactive terminal interface: a chat in which a
// language model calls MCP tools, with a confirmation dialog for every call
// the gate asks about, and panels for testing servers by hand (tools, a call
// form, servers, grants, resources, prompts).
//
// A resource read in the resources panel can be attached to the next
// message: the model receives its text after the person's, inside a marked
// block that calls it data and not instructions, cut at 100,000 bytes. A
// prompt's messages, once its arguments are filled in, become the input's
// text, sanitized, for the person to edit and send.
//
// Resource templates are listed with the resources and filled in a form;
// the prompt and template forms offer the server's argument completions.
//
// With Config.Session the chat is saved as it happens (package chatlog):
// every message of the model's conversation, a note of each call before it
// is sent, every call with its decision, outcome and the model's copy of
// its result as soon as it ends, and /clear. With Config.Resumed the transcript of a saved
// chat is shown again and the model continues its conversation; approvals
// given for the earlier session are not carried over. /export writes the
// transcript as Markdown, never over an existing file.
//
// /model switches the model (Config.SwitchModel builds it) for the next
// message, the conversation kept; package llm sends a provider's thinking
// back to that provider and endpoint only. /copy writes the last answer, or
// a card's result, to the clipboard with OSC 52, less every control
// character but newline and tab. A card whose result a compaction took out
// of the model's history says so.
//
// The UI decides nothing. Every call, from the model or from the call form,
// goes through a host.Gate that the UI builds from Config.Gate with itself as
// the gate's Asker. The model loop runs in its own goroutine; each question
// the gate asks travels to the Bubble Tea program as a message and the asking
// goroutine waits until the dialog answers or the call's context ends.
// Questions that arrive together are queued and shown one at a time.
// The dialogs on screen (a call's confirmation, a project server's consent,
// a server's elicitation or sampling request) are a stack behind one small
// interface, modal in dialogs.go: the top one takes the keys and is drawn
// over the screen, and a new kind of question is one more type, not one
// more field of the model.
//
// Everything a server sent (tool names, titles, descriptions, schemas,
// results, errors, stderr) is passed through package sanitize before it is
// drawn, and so is the model's text before it is rendered as markdown (by
// package markdown, in the transcript's colours); the markdown renderer's own
// output keeps only colour and style sequences, never hyperlinks or other
// terminal controls.
//
// Everything a server sent is escaped as sanitize does; the model's own text
// keeps one exception, a zero-width joiner inside an emoji sequence, so that
// joined emoji show as one.
//
// The input keeps a history of what the person sent (Config.HistoryPath,
// by default history.jsonl beside the state file, readable by the person
// only): ↑ and Ctrl-P on the first line recall it, Ctrl-R searches it. Tab
// completes commands and names in place and never moves the focus; F2 moves
// it to the transcript. A message written while the model works is queued
// and sent when the turn ends. Ctrl-C cancels the question on screen or what
// runs, else clears the input into the history; only twice within a second
// on an empty input does it quit.
//
// The transcript renders only the entries on screen and caches each entry's
// lines per width, so a long session costs the same per frame as a short one.
// A streamed answer is fed to a markdown.Stream, which renders each finished
// block once, as it completes. A tool result opens in a pager that scrolls, searches and saves
// it. The screen is the terminal's alternate screen; on quitting, the
// conversation is printed to the normal screen, into the terminal's
// scrollback.
//
// Run refuses to start unless both of its streams are terminals; NewModel
// builds the same model without a terminal, for tests.
package ui
