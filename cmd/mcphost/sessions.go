package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/ui"
	"github.com/spf13/cobra"
)

// sessionFlags are --continue and --resume, which start the interactive
// chat on a saved session.
type sessionFlags struct {
	Continue bool
	// Resume is a session id, or pickSession for --resume without one.
	Resume string
}

// pickSession is --resume without an id: the person picks from a list.
// Session ids start with a date, so none is "pick".
const pickSession = "pick"

func (f sessionFlags) set() bool { return f.Continue || f.Resume != "" }

// sessionsDir is where chats are saved.
func sessionsDir(s *streams) string {
	return filepath.Join(config.StateDir(s.Getenv("XDG_STATE_HOME")), "sessions")
}

// addSessionFlags adds --continue and --resume [ID] to the root command.
// "--resume ID" with a space leaves the id as an argument (the flag's value
// is optional), so the root takes one argument after a bare --resume.
func addSessionFlags(root *cobra.Command, g *globalOptions) {
	f := root.Flags()
	f.BoolVar(&g.Session.Continue, "continue", false, "continue the latest chat started in this directory")
	f.StringVar(&g.Session.Resume, "resume", "", "continue the saved chat `ID`; without one, pick it from a list")
	f.Lookup("resume").NoOptDefVal = pickSession
	args, runE := root.Args, root.RunE
	root.Args = func(cmd *cobra.Command, a []string) error {
		if g.Session.Resume == pickSession && len(a) == 1 {
			return nil
		}
		return args(cmd, a)
	}
	root.RunE = func(cmd *cobra.Command, a []string) error {
		if len(a) == 1 {
			g.Session.Resume = a[0]
		}
		if g.Session.Continue && g.Session.Resume != "" {
			return usageError(errors.New("--continue and --resume cannot be used together"))
		}
		return runE(cmd, a)
	}
}

// resumable returns the saved session that --continue or --resume names,
// nil without them, for the chat on a terminal (--resume alone opens the
// picker on it).
func resumable(ctx context.Context, g *globalOptions, s *streams) (*chatlog.Session, error) {
	if !g.Session.set() {
		return nil, nil
	}
	return findSession(g.Session, s, sessionsDir(s), func(list []chatlog.Summary) (chatlog.Summary, error) {
		return ui.PickSession(ctx, s.In, s.Out, list, s.WorkDir, time.Now(), s.Getenv("NO_COLOR") != "")
	})
}

// chatLog returns the log a chat is saved to: a new one with header ran
// (its Model, BaseURL and Servers) or, when prev is set, prev's file,
// continued. A continuation that runs with another model, base URL or
// servers than prev last did says so in a NoteResumed note, so that the
// next resume starts from what this one ran with.
func chatLog(s *streams, prev *chatlog.Session, ran chatlog.Header, now func() time.Time) (*chatlog.Log, error) {
	if prev == nil {
		ran.ID, ran.Dir = chatlog.NewID(now()), s.WorkDir
		return chatlog.New(sessionsDir(s), ran, now)
	}
	l, err := prev.Continue(now)
	if err != nil {
		return nil, err
	}
	was := prev.Ran()
	if ran.Model == "" { // no model could be made: the chat's own is kept for the next resume
		ran.Model, ran.BaseURL = was.Model, was.BaseURL
	}
	if was.Model != ran.Model || was.BaseURL != ran.BaseURL || !slices.Equal(was.Servers, ran.Servers) {
		h := prev.Header
		h.Model, h.BaseURL, h.Servers = ran.Model, ran.BaseURL, ran.Servers
		if err := l.Append(chatlog.Record{Type: chatlog.TypeNote, Note: chatlog.NoteResumed, Session: &h}); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// serverSet is the servers st starts, as a session records them.
func (st *setup) serverSet() []chatlog.Server {
	out := make([]chatlog.Server, 0, len(st.specs))
	for i := range st.specs {
		out = append(out, chatlog.Server{Name: st.specs[i].Name, Identity: st.specs[i].Identity()})
	}
	slices.SortFunc(out, func(a, b chatlog.Server) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// serverWarning says how the servers a chat resumes with differ from the
// ones it last ran with, "" when they do not (or the file predates the
// record of them). It is said before the first turn: the history may
// name tools that are gone, or another server may answer to a name.
func serverWarning(prev *chatlog.Session, now []chatlog.Server) string {
	c := chatlog.CompareServers(prev.Ran().Servers, now)
	if !c.Any() {
		return ""
	}
	var parts []string
	names := func(ns []string) string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = sanitize.Line(n)
		}
		return strings.Join(out, ", ")
	}
	if len(c.Missing) > 0 {
		parts = append(parts, "missing now: "+names(c.Missing))
	}
	if len(c.Added) > 0 {
		parts = append(parts, "new: "+names(c.Added))
	}
	if len(c.Changed) > 0 {
		parts = append(parts, "another command or URL: "+names(c.Changed))
	}
	return fmt.Sprintf("the chat %s ran with other servers (%s); its history may name tools that are not offered now",
		sanitize.Line(prev.Header.ID), strings.Join(parts, "; "))
}

// resumeState settles the calls a resumed session left open from the audit
// log at auditPath, and returns the gate's options for it: the taint the
// session had taken in, and every later growth of it recorded in the
// session, so that a resume never starts clean. Grants "for the session"
// are not restored: they end with the process. warning, when set, says why
// the audit log could not be read (the open calls are then unknown).
func resumeState(chat *chatlog.Log, resumed *chatlog.Session, auditPath string) (taint host.Taint, onTaint func(host.Taint), warning string) {
	if resumed != nil {
		if err := resumed.Settle(auditPath); err != nil {
			warning = err.Error() + "; the calls the chat left open are taken as unknown outcomes"
		}
		taint = resumed.Taint()
	}
	if chat == nil {
		return taint, nil, warning
	}
	onTaint = func(t host.Taint) {
		// Best effort once the chat has closed its log; while it runs, the
		// recorder reports a log that cannot be written.
		_ = chat.Append(chatlog.Record{Type: chatlog.TypeNote, Note: chatlog.NoteTaint, Taint: &t})
	}
	return taint, onTaint, warning
}

// modelName is the model's spec, "" without a model.
func modelName(m llm.Model) string {
	if m == nil {
		return ""
	}
	return m.Name()
}

// findSession loads the session the flags name; pick chooses one from the
// list for --resume without an id.
func findSession(f sessionFlags, s *streams, dir string, pick func([]chatlog.Summary) (chatlog.Summary, error)) (*chatlog.Session, error) {
	var sum chatlog.Summary
	var err error
	switch {
	case f.Continue:
		sum, err = chatlog.Latest(dir, s.WorkDir)
		if errors.Is(err, chatlog.ErrNotFound) {
			err = fmt.Errorf("%w; mcphost sessions lists the saved chats, mcphost --resume ID continues one", err)
		}
	case f.Resume == pickSession && pick == nil:
		err = errors.New("--resume without an id asks you to choose, which needs a terminal; mcphost sessions lists the ids")
	case f.Resume == pickSession:
		var list []chatlog.Summary
		if list, err = chatlog.List(dir); err == nil {
			sum, err = pick(list)
		}
	default:
		sum, err = chatlog.Find(dir, f.Resume)
	}
	if err != nil {
		return nil, usageError(err)
	}
	if sum.Err != nil {
		return nil, usageError(sum.Err)
	}
	prev, err := chatlog.Load(dir, sum.ID)
	var ce *chatlog.CorruptError
	if errors.As(err, &ce) {
		return nil, usageError(fmt.Errorf("%w; start without --continue for a new chat, or --resume another (mcphost sessions lists them)", err))
	}
	if err != nil {
		return nil, usageError(err)
	}
	return prev, nil
}

// resumeWithoutTerminal reports what --continue or --resume would have
// continued, and that the chat needs a terminal.
func resumeWithoutTerminal(g *globalOptions, s *streams) error {
	if g.Session.Resume == pickSession {
		return usageError(fmt.Errorf("--resume without an id asks you to choose, which needs a terminal; mcphost sessions lists the ids"))
	}
	prev, err := findSession(g.Session, s, sessionsDir(s), nil)
	if err != nil {
		return err
	}
	return usageError(fmt.Errorf("session %s: %w", prev.Header.ID, ui.ErrNotTerminal))
}

type sessionsOptions struct {
	JSON bool
}

func newSessionsCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &sessionsOptions{}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List the saved chats, newest first",
		Long: `List the chats saved by the interactive interface, the most recently used
first: id, the directory it was started in, when it started, the model, and
the first prompt (--json gives the last message too). mcphost --continue
continues the latest chat of the current directory; mcphost --resume ID
continues any, and mcphost --resume alone lets you pick one.

Chats are saved under $XDG_STATE_HOME/mcphost/sessions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSessions(cmd.Context(), o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// sessionJSON is the stable --json shape of one saved chat.
type sessionJSON struct {
	ID      string    `json:"id"`
	Dir     string    `json:"dir,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Updated time.Time `json:"updated"`
	Model   string    `json:"model,omitempty"`
	First   string    `json:"firstPrompt,omitempty"`
	Last    string    `json:"lastMessage,omitempty"`
	Error   string    `json:"error,omitempty"`
}

func runSessions(_ context.Context, o *sessionsOptions, s *streams) error {
	list, err := chatlog.List(sessionsDir(s))
	if err != nil {
		return err
	}
	if o.JSON {
		out := make([]sessionJSON, 0, len(list))
		for _, c := range list {
			j := sessionJSON{ID: c.ID, Dir: c.Dir, Started: c.Started, Updated: c.Updated, Model: c.Model, First: c.First, Last: c.Last}
			if c.Err != nil {
				j.Error = c.Err.Error()
			}
			out = append(out, j)
		}
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(list) == 0 {
		fmt.Fprintln(s.Err, "no saved chats yet: the interactive chat saves each one as it happens")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tDIR\tMODEL\tFIRST PROMPT")
	for _, c := range list {
		if c.Err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tunreadable: %s\n", c.ID, sanitize.Line(c.Err.Error()))
			continue
		}
		model := c.Model
		if model == "" {
			model = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Started.Local().Format("2006-01-02 15:04"),
			sanitize.Line(c.Dir), sanitize.Line(model), firstPromptCell(c.First))
	}
	return tw.Flush()
}

// firstPromptCell is a chat's first prompt as the list shows it: one line,
// sanitized, cut to 60 cells with an ellipsis.
func firstPromptCell(p string) string {
	if p == "" {
		return "-"
	}
	return ansi.Truncate(sanitize.Line(p), 60, "…")
}

// runChat is the saved chat that `run --continue` or `run --resume`
// continues: what the loop starts from, and the recording of what it adds,
// as the chat on a terminal records it. Its zero value (a run that
// continues nothing) starts empty and records nothing.
type runChat struct {
	log     *chatlog.Log
	errOut  io.Writer
	history []llm.Message
	past    []*host.CallEntry
	taint   host.Taint
	onTaint func(host.Taint)

	mu     sync.Mutex
	failed bool
}

// continueRun opens prev (nil: no saved chat) for run: it names the servers
// that changed, settles the calls it left open from the audit log, and
// appends to its file from then on.
func continueRun(st *setup, g *globalOptions, s *streams, prev *chatlog.Session, model llm.Model, base string) (*runChat, error) {
	if prev == nil {
		return &runChat{}, nil
	}
	servers := st.serverSet()
	if w := serverWarning(prev, servers); w != "" {
		fmt.Fprintf(s.Err, "mcphost: warning: %s\n", w)
	}
	chat, err := chatLog(s, prev, chatlog.Header{Model: modelName(model), BaseURL: savedBaseURL(base), Servers: servers}, time.Now)
	if err != nil {
		return nil, err
	}
	c := &runChat{log: chat, errOut: s.Err}
	var warn string
	c.taint, c.onTaint, warn = resumeState(chat, prev, st.auditPath(g))
	if warn != "" {
		fmt.Fprintf(s.Err, "mcphost: warning: %s\n", warn)
	}
	c.history, c.past = prev.History(), prev.Calls()
	fmt.Fprintf(s.Err, "mcphost: continuing the chat %s of %s (%s) with %s; the model has its history\n",
		prev.Header.ID, prev.Header.Started.Local().Format(time.DateTime), sanitize.Line(prev.Header.Dir), sanitize.Line(modelName(model)))
	return c, nil
}

func (c *runChat) append(r chatlog.Record) {
	if c.log == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		return
	}
	if err := c.log.Append(r); err != nil {
		c.failed = true
		fmt.Fprintf(c.errOut, "mcphost: warning: the chat is no longer saved: %v\n", err)
	}
}

// message saves a message of the conversation (LoopOptions.OnMessage).
func (c *runChat) message(m llm.Message) {
	c.append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(m)})
}

// event saves that a call was decided and is about to be sent, so that a
// run killed in the middle of it leaves a chat that knows it may have run.
func (c *runChat) event(e host.LoopEvent) {
	if e.Kind == host.EvDecision && e.Call != nil && e.Call.CallID != "" {
		c.append(chatlog.Record{Type: chatlog.TypeNote, Note: chatlog.NoteStarted, Started: chatlog.NewStarted(e.Call)})
	}
}

// result saves a call as it ends, with what the model is given for it
// (LoopOptions.OnResult).
func (c *runChat) result(e *host.CallEntry, res llm.ToolResult) {
	if c.log == nil {
		return
	}
	rec := chatlog.NewCall(e, host.ResultText(e.Result))
	rec.Content = chatlog.T(res.Content)
	c.append(chatlog.Record{Type: chatlog.TypeCall, Call: rec})
}

func (c *runChat) close() {
	if c.log != nil {
		_ = c.log.Close()
	}
}
