package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// card is one tool call as the transcript shows it: from the moment the
// model (or the call form) asks for it until its outcome is known.
type card struct {
	id                      string
	callID                  string // mcphost's id for it, as compactions name it
	server, tool, modelName string
	args                    json.RawMessage
	manual                  bool // from the call form, not the model
	started                 time.Time

	done    bool
	asking  bool             // the gate is waiting for the person
	preview *decide.Decision // the expected decision while it runs
	// progress is the server's latest report while the call runs.
	progress *client.Progress
	// task is the latest step of the call's MCP task while it runs.
	task *host.TaskReport

	// Set when the gate has answered.
	verdict     string
	class       decide.Class
	tier        decide.Tier
	decidedBy   host.DecidedBy
	via         audit.Channel   // the way the decision came (host.Result.Via)
	grant       *audit.GrantRef // the grant that let it run, when via is "grant"
	reasons     []string
	status      host.Status
	message     string
	result      *mcp.CallToolResult
	attempts    []host.Attempt
	duration    time.Duration
	resultBytes int
	truncated   bool

	// held, for a call held for a person's approval elsewhere, says where
	// and under which approval id it waits (Model.heldWords).
	held string

	expanded bool
	// cancelled: the person cancelled the question about it (Ctrl-C).
	cancelled bool
	// modelArgs are the arguments the model asked for; args differ from
	// them when the person edited the call.
	modelArgs json.RawMessage
	// later says what the requests after a compaction carry in place of
	// the result: the model got it once, and then no more.
	later compacted
}

// compacted is what a compaction left of a result in the model's history.
type compacted uint8

const (
	keptWhole  compacted = iota // the result is still in every request
	markerOnly                  // replaced by a short marker that names the call
	summarised                  // gone with its turn into the model's summary
)

// edited reports whether the call ran with arguments the person edited.
func (c *card) edited() bool {
	if c.modelArgs == nil || c.args == nil {
		return false
	}
	a, errA := decide.Canonical(c.args)
	b, errB := decide.Canonical(c.modelArgs)
	return errA == nil && errB == nil && !bytes.Equal(a, b)
}

// fromEntry fills the card from the loop's account of the call.
func (c *card) fromEntry(e *host.CallEntry) {
	c.server, c.tool, c.modelName = e.Server, e.Tool, e.ModelName
	if e.CallID != "" {
		c.callID = e.CallID
	}
	if e.Args != nil {
		if c.modelArgs == nil {
			c.modelArgs = e.Args
		}
		c.args = e.Args
	}
	if e.Status == "" { // a decision alone: the card stays live until the result
		return
	}
	c.done = true
	c.asking = false
	c.verdict, c.decidedBy, c.reasons = e.Verdict, e.DecidedBy, e.Reasons
	c.via, c.grant = e.Via, e.Grant
	_ = c.class.UnmarshalText([]byte(e.Class))
	c.tier = decide.Tier(min(max(e.Tier, 0), int(decide.T3)))
	c.status, c.message, c.result, c.attempts = e.Status, e.Message, e.Result, e.Attempts
	c.duration, c.resultBytes, c.truncated = e.Duration, e.ResultBytes, e.Truncated
	if c.resultBytes == 0 && e.Result != nil {
		c.resultBytes = len(host.ResultText(e.Result))
	}
}

// fromResult fills the card from a call the call form sent.
func (c *card) fromResult(r *host.Result, took time.Duration) {
	c.done, c.asking = true, false
	c.args = r.Args
	d := r.Decision
	c.verdict, c.class, c.tier, c.decidedBy = d.Verdict.String(), d.Class, d.Tier, r.DecidedBy
	c.via, c.grant = r.Via, r.Grant
	c.reasons = nil
	for _, rs := range d.Reasons {
		c.reasons = append(c.reasons, rs.Code)
	}
	c.status, c.message, c.result, c.attempts, c.duration = r.Status, r.Message(), r.Result, r.Attempts, took
	if r.Status == host.StatusError && r.Err != nil {
		c.message = r.Server + "/" + r.Tool + ": " + r.Err.Error()
	}
	c.resultBytes = len(host.ResultText(r.Result))
}

// onProgress keeps the server's latest progress report while the call
// runs; a report that arrives after the outcome is ignored.
func (c *card) onProgress(p *client.Progress) bool {
	if c.done || p == nil {
		return false
	}
	cp := *p
	c.progress = &cp
	return true
}

// onTask keeps the latest step of the call's task while the call runs.
func (c *card) onTask(t *host.TaskReport) bool {
	if c.done || t == nil {
		return false
	}
	cp := *t
	c.task = &cp
	return true
}

// progressLine is the progress report in words: "3/5 · message", or the
// task's status: "task working · message".
func (c *card) progressLine() string {
	p := c.progress
	if p == nil && c.task != nil {
		s := "task " + cleanLine(c.task.Status)
		if m := strings.TrimSpace(cleanLine(c.task.Message)); m != "" {
			s += " · " + m
		}
		return s
	}
	if p == nil {
		return ""
	}
	s := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		s += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if m := strings.TrimSpace(cleanLine(p.Message)); m != "" {
		s += " · " + m
	}
	return s
}

// live reports whether the card changes from frame to frame.
func (c *card) live() bool { return !c.done }

func (c *card) ref() string {
	if c.server == "" {
		return c.modelName
	}
	return c.server + "/" + c.tool
}

// outcome is the card's state as a symbol and words, so that it reads the
// same without colour.
func (c *card) outcome(rc *renderCtx) (sym, words string, style lipgloss.Style) {
	st := rc.st
	if !c.done {
		words = "running " + fmtDuration(rc.now().Sub(c.started))
		if c.asking {
			words = "waiting for you"
		}
		return rc.spin(), words, st.Info
	}
	switch c.status {
	case host.StatusSuccess:
		return "✓", "ran", st.OK
	case host.StatusToolError:
		return "✗", "tool error", st.Bad
	case host.StatusDenied:
		if c.cancelled {
			return "⊘", "cancelled by you (ctrl+c): not run", st.Warn
		}
		if c.decidedBy.PersonDenied() {
			return "⊘", "denied by you", st.Bad
		}
		return "⊘", "denied by " + ruleWords(c.decidedBy), st.Bad
	case host.StatusBlocked:
		if c.held != "" {
			return "⊘", "waiting for your approval elsewhere", st.Warn
		}
		return "⊘", "blocked: needs approval", st.Warn
	case host.StatusUnknown:
		return "?", "outcome unknown", st.Warn
	case host.StatusNotSent:
		return "✗", "not sent", st.Warn
	case host.StatusRejected:
		return "✗", "rejected by the server", st.Bad
	case host.StatusThrottled:
		return "✗", "throttled", st.Warn
	default:
		return "✗", "failed", st.Bad
	}
}

// allowedBy says who let the call run, with the verdict, and the way the
// approval came, in words: "allowed: auto", "allowed: rule fs-read",
// "allowed: you, once, in the dialog", "allowed: you, session (grant given
// in mcphost approve)". A call recorded before channels were kept says no
// way at all.
func allowedBy(by host.DecidedBy, via audit.Channel, grant *audit.GrantRef) string {
	rule, byRule := by.Rule()
	switch {
	case by.Auto():
		return "allowed: auto"
	case by.PersonApproved() && via == audit.ChannelGrant && grant != nil:
		return "allowed: you, " + cleanLine(by.Scope()) + " (grant given " + grant.Via.Words() + ")"
	case by.PersonApproved() && via != "":
		return "allowed: you, " + cleanLine(by.Scope()) + ", " + via.Words()
	case by.PersonApproved():
		return "allowed: you, " + cleanLine(by.Scope())
	case byRule:
		return "allowed: rule " + cleanLine(rule)
	case by == "":
		return ""
	default:
		return "allowed: " + cleanLine(by.String())
	}
}

func ruleWords(by host.DecidedBy) string {
	if s, ok := by.Rule(); ok {
		return "rule " + cleanLine(s)
	}
	return cleanLine(by.String())
}

// render draws the card: a header, the arguments, and the outcome.
func (c *card) render(rc *renderCtx, width int, selected bool) []string {
	return c.details(rc, width, c.header(rc, width, selected))
}

// header is the card's first line (or lines, when it wraps): status, name,
// badge, who decided, time and attempts.
func (c *card) header(rc *renderCtx, width int, selected bool) []string {
	st := rc.st
	mark := "  "
	if selected {
		mark = st.Selected.Render("▶") + " "
	}
	sym, words, style := c.outcome(rc)
	head := mark + style.Render(sym) + " " + st.Bold.Render(sanitize.Name(c.ref()))
	switch {
	case c.done && c.verdict != "":
		head += " " + rc.badge(c.class, c.tier)
	case c.preview != nil:
		head += " " + rc.badge(c.preview.Class, c.preview.Tier)
	}
	head += " " + style.Render(words)
	if c.done {
		var meta []string
		if c.status != host.StatusDenied && c.status != host.StatusBlocked {
			if d := allowedBy(c.decidedBy, c.via, c.grant); d != "" {
				meta = append(meta, d)
			}
		}
		if len(c.attempts) > 0 {
			// The time the server took, without the time spent asking.
			var took time.Duration
			for _, a := range c.attempts {
				took += a.Duration
			}
			meta = append(meta, fmtDuration(took))
		}
		if n := len(c.attempts); n > 1 || (n == 1 && c.status != host.StatusSuccess && c.status != host.StatusToolError) {
			var outs []string
			for _, a := range c.attempts {
				o := string(a.Outcome)
				if a.Detail != "" {
					o += " (" + cleanLine(a.Detail) + ")"
				}
				outs = append(outs, o)
			}
			meta = append(meta, fmt.Sprintf("%d attempt%s: %s", n, plural(n), strings.Join(outs, ", ")))
		}
		if c.manual {
			meta = append(meta, "call form")
		}
		if len(meta) > 0 {
			head += st.Muted.Render(" · " + strings.Join(meta, " · "))
		}
	}
	return hang(head, width, "    ")
}

// details draws what follows the header: arguments, then the outcome.
func (c *card) details(rc *renderCtx, width int, lines []string) []string {
	st := rc.st
	pad := "    "
	inner := max(width-len(pad), 10)
	args := strings.TrimSpace(string(c.args))
	if args == "" {
		args = "{}"
	}
	argsLabel := "args"
	if c.edited() {
		argsLabel = "args edited by you"
	}
	if !c.expanded {
		line := pad + st.Muted.Render(argsLabel+" ") + cleanLine(compactJSON(args))
		lines = append(lines, trunc(line, width))
	} else {
		lines = append(lines, pad+st.Muted.Render(argsLabel))
		if c.edited() {
			lines = append(lines, trunc(pad+st.Muted.Render("  the model asked for ")+cleanLine(compactJSON(string(c.modelArgs))), width))
		}
		for _, l := range strings.Split(clean(indentJSON(args)), "\n") {
			for _, w := range wrap(l, inner-2) {
				lines = append(lines, pad+"  "+w)
			}
		}
		if c.done && c.verdict != "" {
			lines = append(lines, pad+st.Muted.Render("decision ")+cleanLine(c.verdict)+st.Muted.Render(" · decided by ")+cleanLine(c.decidedBy.String()))
		}
		if len(c.reasons) > 0 {
			reasons := make([]string, len(c.reasons))
			for i, r := range c.reasons {
				reasons[i] = cleanLine(r) // a reason can quote a tool's name
			}
			lines = append(lines, hangPad(st.Muted.Render("reasons ")+strings.Join(reasons, ", "), width, pad)...)
		}
		for _, a := range c.attempts {
			l := fmt.Sprintf("attempt %d: %s, %s", a.N, a.Outcome, fmtDuration(a.Duration))
			if a.Detail != "" {
				l += " (" + cleanLine(a.Detail) + ")"
			}
			lines = append(lines, hangPad(st.Muted.Render(l), width, pad)...)
		}
		if c.done && c.duration > 0 {
			lines = append(lines, pad+st.Muted.Render("in all  ")+fmtDuration(c.duration)+st.Muted.Render(" from the request to the outcome, asking included"))
		}
	}
	if !c.done {
		if p := c.progressLine(); p != "" && !c.asking {
			lines = append(lines, trunc(pad+st.Muted.Render("progress ")+p, width))
		}
		return lines
	}

	body := c.body()
	if !c.expanded {
		head, rest := previewLines(body, cardPreviewLines)
		size := c.sizeNote() // on the first line only: it joins the whole result
		for i, l := range head {
			mark := "  "
			if i == 0 {
				mark = "⎿ "
			}
			line := pad + st.Muted.Render(mark) + cleanLine(l)
			if i == 0 && size != "" {
				// The size stays visible however long the first line is.
				line = trunc(line, max(width-ansi.StringWidth(size)-1, len(pad)+4)) + " " + st.Muted.Render(size)
			}
			lines = append(lines, trunc(line, width))
		}
		if rest > 0 {
			lines = append(lines, pad+"  "+st.Muted.Render(fmt.Sprintf("+%d line%s", rest, plural(rest))))
		}
		return lines
	}
	lines = append(lines, pad+st.Muted.Render(c.bodyTitle()))
	const maxLines = 40
	n := 0
	all := strings.Split(clean(indentJSON(body)), "\n")
	for i, l := range all {
		for _, w := range wrap(l, inner-2) {
			if n == maxLines {
				more := fmt.Sprintf("… %d more line%s here; ", len(all)-i, plural(len(all)-i))
				lines = append(lines, hangPad(st.Muted.Render(more+c.modelGot()+" · f2, o opens all of it in the pager"), width, pad+"  ")...)
				return lines
			}
			lines = append(lines, pad+"  "+w)
			n++
		}
	}
	return lines
}

// ranResult reports whether the card has a result from the server.
func (c *card) ranResult() bool {
	return c.done && (c.status == host.StatusSuccess || c.status == host.StatusToolError) && c.result != nil
}

// sizeNote is the result's size and line count, for a result that its
// one line on the card cannot show: "(12.3 KB, 340 lines)", with what
// became of it for the model.
func (c *card) sizeNote() string { return c.size(true) }

// size is sizeNote, with what became of the result for the model only when
// forModel is set.
func (c *card) size(forModel bool) string {
	if !c.ranResult() {
		return ""
	}
	text := host.ResultText(c.result)
	n := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if n < 2 && !c.truncated && c.resultBytes <= 200 && (c.later == keptWhole || !forModel) {
		return "" // a short result says all there is on its line
	}
	s := "(" + humanBytes(c.resultBytes) + fmt.Sprintf(", %d line%s", n, plural(n))
	if c.truncated && forModel {
		s += ", cut for the model"
	}
	if c.later != keptWhole && forModel {
		s += ", out of the model's context since"
	}
	return s + ")"
}

// modelGot says what of the result went to the model; the header's title
// and this footer say the same.
func (c *card) modelGot() string {
	if c.manual {
		// A call from the tools panel is yours: its result is not added to
		// the conversation, so no request carries it.
		return "the model did not get it (you made this call)"
	}
	got := "all of it"
	if c.truncated {
		got = "only its beginning (cut to the result limit)"
	}
	switch c.later {
	case markerOnly:
		// compact in package host: the result's text is replaced in the
		// history, so every later request carries the marker instead.
		return "the model got " + got + " once; the conversation was compacted since, and later requests carry a short note in its place"
	case summarised:
		return "the model got " + got + " once; the conversation was compacted since, and later requests carry only the model's summary of that part"
	}
	return "the model got " + got
}

// humanBytes writes a size briefly: 920 B, 12.3 KB, 4.1 MB.
func humanBytes(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1_000_000)
	}
}

// hangPad wraps s to width, every line indented by pad.
func hangPad(s string, width int, pad string) []string {
	out := wrap(s, max(width-len(pad), 10))
	for i := range out {
		out[i] = pad + out[i]
	}
	return out
}

// body is what the outcome line shows: the result for a call that ran,
// otherwise the gate's message.
func (c *card) body() string {
	if (c.status == host.StatusSuccess || c.status == host.StatusToolError) && c.result != nil {
		if t := host.ResultText(c.result); t != "" {
			return t
		}
		return "(empty result)"
	}
	if c.held != "" && c.status == host.StatusBlocked {
		return c.held + "\n" + c.message
	}
	return c.message
}

func (c *card) bodyTitle() string {
	switch {
	case c.status == host.StatusSuccess || c.status == host.StatusToolError:
		s := "result"
		if size := c.size(false); size != "" {
			s += " " + size
		} else {
			s += fmt.Sprintf(" (%s)", humanBytes(c.resultBytes))
		}
		return s + ": " + c.modelGot()
	default:
		return "outcome"
	}
}

// cardPreviewLines is how many lines of its result a folded card shows.
const cardPreviewLines = 5

// previewLines returns the first n lines of s, blank lines around it
// trimmed, and how many lines follow them.
func previewLines(s string, n int) (head []string, rest int) {
	s = strings.TrimSpace(s)
	for len(head) < n {
		l, more, ok := strings.Cut(s, "\n")
		head = append(head, l)
		if !ok {
			return head, 0
		}
		s = more
	}
	return head, strings.Count(s, "\n") + 1
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

func indentJSON(s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		return s
	}
	return b.String()
}

// fmtDuration shows a duration briefly: 4ms, 1.2s, 3m05s.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

func firstLine(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i], true
	}
	return s, false
}
