package host

import "github.com/mcphost/mcphost/llm"

// Rewind takes back the person's last message and everything after it
// (the model's answers, its calls and their results), so that the message
// can be sent again, edited, in its place. is picks the person's message
// among the user messages, by its text: the loop also writes user messages
// of its own (a note on a cut-off answer) and tool results, which are
// never taken for it. Rewind reports false, changing nothing, when no
// message matches (it was summarised away by compaction); else it
// returns the message taken back.
//
// The calls of the turns taken back have run: their effects stay. Calls
// with an unknown outcome stay known to the loop, which names them again
// after a summary. Like Run, Rewind must not be called while a Run is in
// progress. OnMessage does not see the removal: the caller saves it.
func (l *Loop) Rewind(is func(text string) bool) (taken llm.Message, ok bool) {
	i := LastPersonMessage(l.messages, is)
	if i < 0 {
		return llm.Message{}, false
	}
	taken = l.messages[i]
	l.messages = l.messages[:i:i]
	for j := len(l.Transcript) - 1; j >= 0; j-- {
		if e := l.Transcript[j]; e.Role == "user" && is(e.Text) {
			l.Transcript = l.Transcript[:j:j]
			break
		}
	}
	return taken, true
}

// LastPersonMessage returns the index of the last of msgs that the person
// may have sent and is picks by its text, or -1: a user message carrying no
// tool results. A resumed session takes back a rewound message with it, as
// Rewind does.
func LastPersonMessage(msgs []llm.Message, is func(text string) bool) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == llm.RoleUser && len(m.ToolResults) == 0 && is(m.Text) {
			return i
		}
	}
	return -1
}

// Messages returns the conversation as the model is sent it, without the
// system prompt. The slice is the loop's; the caller must not change it.
func (l *Loop) Messages() []llm.Message { return l.messages }
