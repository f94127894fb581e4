package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// exportCommand is /export [FILE]: the transcript as Markdown. An existing
// file is never replaced.
func (m *Model) exportCommand(arg string) {
	name := strings.TrimSpace(arg)
	if name == "" {
		id := m.now().Format("20060102-150405")
		if m.rec != nil {
			id = m.rec.log.ID()
		}
		name = "mcphost-chat-" + id + ".md"
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		m.notice(levelWarn, "/export: "+cleanLine(name)+" exists; give another name: /export FILE")
		return
	}
	if err != nil {
		m.notice(levelError, "/export: "+cleanLine(err.Error()))
		return
	}
	text := exportMarkdown(m.tr.entries)
	_, werr := f.WriteString(text)
	if err := errors.Join(werr, f.Close()); err != nil {
		m.notice(levelError, "/export: "+cleanLine(err.Error()))
		return
	}
	m.notice(levelInfo, fmt.Sprintf("wrote the conversation to %s (%d bytes)", cleanLine(name), len(text)))
}

// exportMarkdown renders entries as a Markdown document. What the person
// and the model wrote is kept as Markdown; what servers sent goes in code
// fences, so that it reads as data; control characters are escaped
// throughout (sanitize.Text). The document's own headings are levels 1 to
// 3; the model's headings are moved down three levels (to 4, at most 6) so
// that they sit inside its answer and never read as a turn of the chat.
// Notices before the first message are the start-up banner and are left
// out: they describe the terminal session, not the conversation.
func exportMarkdown(entries []*entry) string {
	var b strings.Builder
	b.WriteString("# mcphost chat\n")
	started := false
	for _, e := range entries {
		switch e.kind {
		case entryUser:
			started = true
			b.WriteString("\n## You\n\n" + sanitize.Text(e.text) + "\n")
		case entryAssistant:
			started = true
			b.WriteString("\n## Model\n\n" + shiftHeadings(sanitize.Text(e.text), 3) + "\n")
		case entryNotice:
			if started {
				b.WriteString("\n> " + strings.ReplaceAll(sanitize.Text(e.text), "\n", "\n> ") + "\n")
			}
		case entryCard:
			started = true
			exportCard(&b, e.card)
		}
	}
	return b.String()
}

// shiftHeadings moves every ATX heading of md outside code fences down by
// n levels, to 6 at most. A heading of level 6 stays 6.
func shiftHeadings(md string, n int) string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) > 3 {
			continue
		}
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		level := len(t) - len(strings.TrimLeft(t, "#"))
		if level < 1 || level > 6 || len(t) > level && t[level] != ' ' && t[level] != '\t' {
			continue
		}
		lines[i] = strings.Repeat("#", min(level+n, 6)) + t[level:]
	}
	return strings.Join(lines, "\n")
}

func exportCard(b *strings.Builder, c *card) {
	who := "the model"
	if c.manual {
		who = "you"
	}
	fmt.Fprintf(b, "\n### Tool call `%s/%s` (by %s)\n\n", sanitize.Name(c.server), sanitize.Name(c.tool), who)
	if c.verdict != "" {
		fmt.Fprintf(b, "- decision: %s, tier T%d, decided by %s\n", c.verdict, c.tier, sanitize.Line(c.decidedBy.String()))
	}
	if c.status != "" {
		fmt.Fprintf(b, "- outcome: %s\n", c.status)
	}
	if c.message != "" {
		fmt.Fprintf(b, "- message: %s\n", sanitize.Line(c.message))
	}
	if len(c.args) > 0 {
		b.WriteString("\nArguments:\n\n" + fenced("json", sanitize.Text(string(c.args))))
	}
	if c.result != nil {
		text := host.ResultText(c.result)
		b.WriteString(fmt.Sprintf("\nResult (%d bytes, the server's words):\n\n", len(text)) + fenced("text", sanitize.Text(text)))
	}
}

// fenced puts s in a code fence longer than any run of backticks in it.
func fenced(info, s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + info + "\n" + strings.TrimSuffix(s, "\n") + "\n" + fence + "\n"
}
