package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/ui/dialog"
	"github.com/mcphost/mcphost/ui/notify"
)

// Config is everything the TUI needs. The TUI builds the client.Manager
// and the host.Gate itself, because project servers may only join the
// manager after the person consented to them, and the gate must ask the
// TUI's dialogs.
type Config struct {
	// Servers start without asking: the person's own configuration,
	// --server flags, and project servers consented to earlier.
	Servers []client.Spec
	// Client tunes the manager (client version, timeouts, limits). Its
	// Elicitation and Sampling handlers are replaced by the TUI's dialogs.
	Client client.Options
	// Project are servers from a project file that have no valid consent:
	// each is shown in the consent dialog before anything starts, and
	// starts only if the person agrees.
	Project []ProjectServer
	// Held are configured servers that will not start (disabled ones);
	// /servers lists them.
	Held []client.Status

	// Gate configures the gate in front of every call. The TUI sets
	// Catalog, Asker and Mode (interactive). Trusted is consulted after
	// the servers the person trusted in this session (/trust, consent).
	Gate host.GateOptions
	// PostHeld, when set, is given each call newly held for a later approval
	// (Gate.Later), with the gate that holds it (its AnswerLater takes the
	// answer), to show it where a person may approve it: the chat's own
	// approver socket, which `mcphost approve` and the web page reach. The
	// TUI rings the person itself. It is called on the calling goroutine
	// and must not block. Its error (the call cannot be shown there) has
	// the gate withdraw the call, as GateOptions.OnHold says.
	PostHeld func(g *host.Gate, a later.Approval, q *host.Question) error
	// MayTrust, when set, says whether the person may trust a server at
	// all (the managed policy's "trust"); a server it refuses is never
	// trusted, whatever /trust, a consent or Gate.Trusted says. Nil:
	// any.
	MayTrust func(name string) bool
	// TrustInfo says, for a configured server, what stands outside this
	// session: where its trust at the start comes from, whether the
	// person's own config says "trust": false, and the key of a project
	// server's consent. Nil: nothing is known beyond Gate.Trusted.
	TrustInfo func(name string) TrustInfo
	// StatePath is the state file (state.json) where consents and trust
	// given in the TUI are recorded. Empty: they last for this session.
	StatePath string
	// HistoryPath is the file that keeps what the person wrote, across
	// sessions. Empty: history.jsonl beside StatePath, or none without it.
	HistoryPath string
	// ContextWindow is the model's context window in tokens, when known
	// (0: unknown); the status line then says how full it is.
	ContextWindow int

	// Model is the language model; nil runs the TUI without a chat.
	Model llm.Model
	// NoModel says why there is no model, shown when the person writes a
	// message (for example the configuration error from llm.New).
	NoModel string
	// SwitchModel builds the model /model names ("provider:model") the
	// way --model builds one: the same key variables and config entry.
	// It is called on the program's goroutine, and only while no run is
	// in progress. Nil: /model only says which model the chat uses.
	SwitchModel func(spec string) (ModelChoice, error)
	// System is the system prompt; MaxSteps bounds the model turns of one
	// message (0: the loop's default).
	System   string
	MaxSteps int
	// Context configures tool search and the context budget of the loop.
	Context host.ContextSettings
	// Sampling answers servers' sampling requests (once the person
	// approves each) within each server's token budget; nil: a meter with
	// config.DefaultSamplingBudget.
	Sampling *host.SampleMeter

	// Session saves the chat as it happens; nil: it is not saved. Resumed,
	// when set, is the saved chat this one continues: its transcript is
	// shown and the model continues its conversation.
	Session *chatlog.Log
	Resumed *chatlog.Session
	// Warnings about the configuration, shown when the TUI starts (they
	// are also printed before it, where the screen hides them).
	Warnings []string

	// In and Out are the terminal. Run refuses to start unless both are
	// terminals.
	In  io.Reader
	Out io.Writer
	// Dark forces the dark (true) or light (false) palette; nil asks the
	// terminal for its background colour.
	Dark *bool
	// NoColor draws without colour (NO_COLOR); bold, reverse and symbols
	// remain.
	NoColor bool
	// Now is the clock (default time.Now); Grace is how long a dialog
	// ignores keys after it opens (0: the dialog's default).
	Now   func() time.Time
	Grace time.Duration
	// Notify calls the person when a question starts to wait (the bell, a
	// desktop notification) and names it in the window title while it
	// waits. Build it with notify.New from the person's "notify" setting
	// and notify.Detect; the zero value rings the bell alone.
	Notify notify.Notifier

	// WorkDir is the directory an @path is relative to; "" is the
	// process's.
	WorkDir string
	// Instructions is the project's instructions file (AGENTS.md), nil
	// when there is none. It is sent to the model only with the person's
	// consent: InstructionsConsented (recorded earlier), or
	// /instructions send in the chat.
	Instructions          *config.Instructions
	InstructionsConsented bool
	// Models are offered by /model without an argument, besides the one
	// in use: the configured models and the recently used ones.
	Models []string
	// Sessions lists the saved chats for /resume, newest first; nil: the
	// chats are not saved.
	Sessions func() ([]chatlog.Summary, error)
}

func (c Config) historyPath() string {
	if c.HistoryPath != "" || c.StatePath == "" {
		return c.HistoryPath
	}
	return filepath.Join(filepath.Dir(c.StatePath), "history.jsonl")
}

// ProjectServer is a server from a project-level file, waiting for consent.
type ProjectServer struct {
	Name string // its name in the file
	File string // the project file it comes from
	// Vars are the environment variables its entry uses (config.Server.Vars).
	Vars []string
	Spec client.Spec
	// CommandLine is the command and its arguments as shown for consent:
	// relative paths resolved against the server's working directory.
	// Empty for a server reached by URL.
	CommandLine []string
	// ConsentKey and ConsentHash are what the person's choice is recorded
	// under: computed by the caller exactly as its headless check computes
	// them, so that a choice made here applies there. A server without
	// them can be started for this session but its choice is not recorded.
	ConsentKey, ConsentHash string
	// Fields are the rest of the entry the consent covers, beyond what
	// Spec, File and Vars show: the dialog lists them all.
	Fields []dialog.Field
}

// ConsentRequest is what the consent dialog shows about ps: its command
// line, environment and working directory (or URL and header names), the
// file, the variables it reads, and every other field of its entry.
func (ps ProjectServer) ConsentRequest() dialog.ConsentRequest {
	sp := ps.Spec
	req := dialog.ConsentRequest{
		Server: ps.Name, Transport: sp.Transport, Command: sp.Command, Args: sp.Args, Env: sp.Env,
		Cwd: sp.Cwd, URL: sp.URL, Headers: sp.Headers, File: ps.File, Vars: ps.Vars,
		CommandLine: ps.CommandLine, Fields: ps.Fields,
	}
	if req.Transport == "" {
		req.Transport = client.TransportStdio
	}
	return req
}

// ErrNotTerminal is returned by Run when stdin or stdout is not a terminal.
var ErrNotTerminal = errors.New("the interactive interface needs a terminal on standard input and output; " +
	"use `mcphost run -p PROMPT` for a model run or `mcphost call SERVER/TOOL [ARGS]` for one call")

// ErrUnknownOutcome is returned by Run when the end of ctx (a signal)
// stopped the TUI and a call of the session ended with an unknown outcome.
var ErrUnknownOutcome = errors.New("stopped with a call whose outcome is unknown: it may or may not have taken effect; " +
	"check the server's state (mcphost audit tail shows the call) before running it again")

// outcomeWatch passes records to the audit log and notes an unknown
// outcome.
type outcomeWatch struct {
	host.AuditLog
	unknown atomic.Bool
}

func (w *outcomeWatch) Append(r *audit.Record) error {
	if r.Kind == audit.Outcome && r.Status == audit.StatusUnknown {
		w.unknown.Store(true)
	}
	return w.AuditLog.Append(r)
}

// fder is what a terminal stream is.
type fder interface{ Fd() uintptr }

// isTerminal reports whether s is a terminal.
func isTerminal(s any) bool {
	f, ok := s.(fder)
	return ok && term.IsTerminal(f.Fd())
}

// Run runs the TUI until the person quits or ctx ends; either way it
// returns nil, except ErrUnknownOutcome when ctx ended and a call's outcome
// is unknown (known only with an audit log: the outcome records tell). It
// returns ErrNotTerminal, before touching anything, unless
// cfg.In and cfg.Out are both terminals. When it returns, every server it
// started is stopped and no call is running, so the caller may close the
// audit log.
//
// Signals are the caller's: Bubble Tea's own handler (SIGINT and SIGTERM,
// not SIGHUP) is off, so that every signal ends the TUI the same way, by
// ending ctx. The end of ctx quits the program as the person's quit does
// (Bubble Tea's WithContext would kill it instead, which closes the
// terminal's reader while it still reads): the terminal is restored, then
// the running call is cancelled and recorded, then the servers stop.
func Run(ctx context.Context, cfg Config) error {
	if !isTerminal(cfg.In) || !isTerminal(cfg.Out) {
		return ErrNotTerminal
	}
	var watch *outcomeWatch
	if cfg.Gate.Audit != nil {
		watch = &outcomeWatch{AuditLog: cfg.Gate.Audit}
		cfg.Gate.Audit = watch
	}
	m := NewModel(cfg)
	defer m.Close()
	opts := []tea.ProgramOption{tea.WithInput(cfg.In), tea.WithOutput(cfg.Out), tea.WithoutSignalHandler()}
	if cfg.NoColor {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, opts...)
	stopQuit := context.AfterFunc(ctx, p.Quit)
	defer stopQuit()
	_, err := p.Run()
	m.Close()                      // the terminal is restored: cancel the running call, record it, stop the servers
	_ = m.printScrollback(cfg.Out) // best effort: the session is over either way
	if m.switchTo != "" && ctx.Err() == nil {
		return &SwitchChat{ID: m.switchTo} // habits.go
	}
	if ctx.Err() != nil {
		// The caller (a signal) ended the session: not a failure, but a
		// call that may have run must be said.
		if watch != nil && watch.unknown.Load() {
			return ErrUnknownOutcome
		}
		return nil
	}
	if err == nil || errors.Is(err, tea.ErrInterrupted) {
		return nil
	}
	return fmt.Errorf("terminal interface: %w", err)
}

// ModelChoice is a model /model switched to.
type ModelChoice struct {
	Model llm.Model
	// BaseURL is the endpoint it uses when not its provider's own, for the
	// session record (without user information); ContextWindow is the
	// config's "contextWindow" for it, 0 for mcphost's table.
	BaseURL       string
	ContextWindow int
}
