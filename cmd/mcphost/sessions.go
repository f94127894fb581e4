package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
	f.StringVar(&g.Session.Resume, "resume", "", "continue the saved chat `ID`; without one, choose from a list")
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

// chatSession returns the log the chat is saved to and, with --continue or
// --resume, the session it continues. in and out are the terminal, for
// choosing a session from a list.
func chatSession(g *globalOptions, s *streams, model string, now func() time.Time) (*chatlog.Log, *chatlog.Session, error) {
	dir := sessionsDir(s)
	if !g.Session.set() {
		l, err := chatlog.New(dir, chatlog.Header{ID: chatlog.NewID(now()), Dir: s.WorkDir, Model: model}, now)
		return l, nil, err
	}
	prev, err := findSession(g.Session, s, dir)
	if err != nil {
		return nil, nil, err
	}
	l, err := prev.Continue(now)
	if err != nil {
		return nil, nil, err
	}
	return l, prev, nil
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

// findSession loads the session the flags name.
func findSession(f sessionFlags, s *streams, dir string) (*chatlog.Session, error) {
	var sum chatlog.Summary
	var err error
	switch {
	case f.Continue:
		sum, err = chatlog.Latest(dir, s.WorkDir)
		if errors.Is(err, chatlog.ErrNotFound) {
			err = fmt.Errorf("%w; mcphost sessions lists the saved chats, mcphost --resume ID continues one", err)
		}
	case f.Resume == pickSession:
		var list []chatlog.Summary
		if list, err = chatlog.List(dir); err == nil {
			sum, err = choose(s.In, s.Out, list, s.WorkDir)
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
	prev, err := findSession(g.Session, s, sessionsDir(s))
	if err != nil {
		return err
	}
	return usageError(fmt.Errorf("session %s: %w", prev.Header.ID, ui.ErrNotTerminal))
}

// maxChoices bounds the list --resume shows.
const maxChoices = 20

// choose lists the sessions, those of workDir first, and reads the
// person's pick: a number from the list or an id.
func choose(in io.Reader, out io.Writer, list []chatlog.Summary, workDir string) (chatlog.Summary, error) {
	var here, elsewhere []chatlog.Summary
	for _, s := range list {
		if s.Err != nil {
			continue
		}
		if s.Dir == workDir {
			here = append(here, s)
		} else {
			elsewhere = append(elsewhere, s)
		}
	}
	shown := append(here, elsewhere...)
	if len(shown) == 0 {
		return chatlog.Summary{}, fmt.Errorf("there are no saved chats to resume: %w", chatlog.ErrNotFound)
	}
	shown = shown[:min(len(shown), maxChoices)]
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for i, s := range shown {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, s.Updated.Local().Format("2006-01-02 15:04"), sanitize.Line(s.Dir), sanitize.Truncate(sanitize.Line(s.Last), 60))
	}
	tw.Flush()
	fmt.Fprintf(out, "Continue which chat? (1-%d, or an id; empty to cancel) ", len(shown))
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && line == "" {
		return chatlog.Summary{}, errors.New("no chat chosen")
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return chatlog.Summary{}, errors.New("no chat chosen")
	}
	if n, err := strconv.Atoi(line); err == nil {
		if n < 1 || n > len(shown) {
			return chatlog.Summary{}, fmt.Errorf("%d is not in the list (1-%d)", n, len(shown))
		}
		return shown[n-1], nil
	}
	for _, s := range shown {
		if s.ID == line {
			return s, nil
		}
	}
	return chatlog.Summary{}, fmt.Errorf("%q is not in the list", line)
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
the last message. mcphost --continue continues the latest chat of the
current directory; mcphost --resume ID continues any.

Chats are saved under $XDG_STATE_HOME/mcphost/sessions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSessions(o, s)
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
	Last    string    `json:"lastMessage,omitempty"`
	Error   string    `json:"error,omitempty"`
}

func runSessions(o *sessionsOptions, s *streams) error {
	list, err := chatlog.List(sessionsDir(s))
	if err != nil {
		return err
	}
	if o.JSON {
		out := make([]sessionJSON, 0, len(list))
		for _, c := range list {
			j := sessionJSON{ID: c.ID, Dir: c.Dir, Started: c.Started, Updated: c.Updated, Model: c.Model, Last: c.Last}
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
	fmt.Fprintln(tw, "ID\tSTARTED\tDIR\tMODEL\tLAST MESSAGE")
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
			sanitize.Line(c.Dir), sanitize.Line(model), sanitize.Truncate(sanitize.Line(c.Last), 60))
	}
	return tw.Flush()
}
