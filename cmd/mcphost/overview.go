package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/ui"
	"github.com/mcphost/mcphost/ui/notify"
)

// runOverview is what mcphost does without a command: the interactive chat
// on a terminal; elsewhere a summary of the servers and tools, and where to
// go instead.
func runOverview(ctx context.Context, g *globalOptions, s *streams) error {
	if s.Terminal {
		return runTUI(ctx, g, s)
	}
	if g.Session.set() {
		return resumeWithoutTerminal(g, s) // sessions.go
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	m := st.start(ctx)
	defer m.Close()
	ready, tools := 0, len(m.Tools())
	statuses := st.statuses(m)
	for _, ss := range statuses {
		if ss.State == "ready" {
			ready++
		}
	}
	fmt.Fprintf(s.Out, "mcphost %s: %d of %s ready, %s.\n", version, ready, nounCount(len(statuses), "server"), nounCount(tools, "tool"))
	if st.demo && !g.Demo {
		fmt.Fprintln(s.Out, "No configuration found: these are the built-in demo servers (see mcphost --help for --config and --server).")
	}
	fmt.Fprintln(s.Out)
	fmt.Fprintln(s.Out, `The interactive chat needs a terminal. Without one:
  mcphost servers   connection state of every server
  mcphost tools     every tool with its hints and default decision
  mcphost call      one call through the gate, no model
  mcphost run -p    the model loop, headless`)
	if err := startFailures(st, m); err != nil {
		return err
	}
	// The same rule as --continue and --resume without a terminal: what
	// was asked for (the chat) could not start, so the exit says so.
	return usageError(errChatNeedsTerminal)
}

// errChatNeedsTerminal is the usage error of the chat started without a
// terminal; it names the commands that work without one.
var errChatNeedsTerminal = errors.New("the interactive chat needs a terminal; use mcphost run -p PROMPT for the model loop or mcphost call SERVER/TOOL for one call")

// runTUI starts the interactive interface.
func runTUI(ctx context.Context, g *globalOptions, s *streams) error {
	if g.Trace == "-" {
		return usageError(errors.New("--trace - writes to standard error, where the chat draws its screen: give a file (--trace FILE) and read it beside the chat"))
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	policy, err := st.policy(g, s)
	if err != nil {
		return err
	}
	resumed, err := resumable(ctx, g, s) // sessions.go
	if err != nil {
		return err
	}
	var saved *chatlog.Header
	if resumed != nil {
		h := resumed.Ran()
		saved = &h
	}
	model, base, err := st.modelFor(g, s, saved)
	noModel := ""
	if err != nil {
		model, noModel = nil, err.Error()
		if errors.Is(err, errNoModel) {
			noModel = "" // the TUI says how to configure one
		}
	} else {
		warmModel(ctx, model)
	}
	servers := st.serverSet()
	if resumed != nil {
		if w := serverWarning(resumed, servers); w != "" {
			fmt.Fprintf(s.Err, "mcphost: warning: %s\n", w)
			st.warnings = append(st.warnings, w)
		}
	}
	chat, err := chatLog(s, resumed, chatlog.Header{Model: modelName(model), BaseURL: savedBaseURL(base), Servers: servers}, time.Now) // sessions.go
	if err != nil {
		return err
	}
	gate := host.GateOptions{Policy: policy, Trusted: func(n string) bool { return st.trusted[n] },
		Store: st.store, Pins: st.pins, SessionID: strconv.FormatInt(time.Now().UnixNano(), 36)}
	tel := st.startTelemetry(s) // telemetry.go: flushed, bounded, when the chat ends
	defer func() { tel.warnOf(tel.flush())() }()
	gate.Observer = tel.observer()
	var warn string
	gate.Taint, gate.OnTaint, warn = resumeState(chat, resumed, st.auditPath(g)) // sessions.go
	if warn != "" {
		fmt.Fprintf(s.Err, "mcphost: warning: %s\n", warn)
		st.warnings = append(st.warnings, warn)
	}
	if l, err := st.openAuditLog(g); err != nil { // store.go: the file, or the store's chain
		fmt.Fprintf(s.Err, "mcphost: warning: %v; only read-only calls will run\n", err)
		st.warnings = append(st.warnings, err.Error()+"; only read-only calls will run")
	} else {
		defer l.Close()
		gate.Audit = l
	}
	var held []client.Status
	for _, h := range st.held {
		if h.State != stateNeedsConsent {
			held = append(held, h)
		}
	}
	project := st.projectServers()
	copts := st.clientOpts
	copts.ClientVersion = version
	// The interactive interface sets its own Elicitation and Sampling
	// handlers (a form, and a dialog asking before a server uses the
	// model), replacing the headless ones, which would print over the
	// screen.
	mode, err := notify.ParseMode(st.cfg.Notify)
	if err != nil {
		return withCode(exitUsage, err)
	}
	instr, consented := st.projectInstructions(s) // habits.go
	postHeld, closeHeld := st.chatHolds(s, &gate) // later.go
	err = ui.Run(ctx, ui.Config{Servers: st.specs, Client: copts,
		Project: project, Held: held, Gate: gate, PostHeld: postHeld, MayTrust: st.managed.MayTrust, TrustInfo: st.trustInfo(g), StatePath: filepath.Join(st.stateDir, "state.json"),
		Model: model, NoModel: noModel, SwitchModel: st.switcher(g, s, modelName(model), base), System: systemPrompt, Context: st.contextSettings(model), Sampling: st.sampling,
		Session: chat, Resumed: resumed, Warnings: st.warnings,
		In: s.In, Out: s.Out, NoColor: s.Getenv("NO_COLOR") != "",
		Notify:  notify.New(mode, notify.Detect(s.Getenv)),
		WorkDir: s.WorkDir, Instructions: instr, InstructionsConsented: consented, Models: st.pickableModels(s),
		Sessions: func() ([]chatlog.Summary, error) { return chatlog.List(sessionsDir(s)) }})
	closeHeld()
	resumeHint(s, chat)
	if sw := (*ui.SwitchChat)(nil); errors.As(err, &sw) {
		// /resume chose another saved chat: start again, continuing it.
		// The servers of this chat have stopped; the new one starts its own.
		g.Session = sessionFlags{Resume: sw.ID}
		return runTUI(ctx, g, s)
	}
	if errors.Is(err, ui.ErrUnknownOutcome) {
		return withCode(exitUnknown, err)
	}
	return err
}

// resumeHint ends the exit screen with the command that continues the
// chat, when it was saved.
func resumeHint(s *streams, chat *chatlog.Log) {
	if _, err := os.Stat(chat.Path()); err == nil {
		fmt.Fprintf(s.Out, "To continue this chat: mcphost --resume %s\n", chat.ID())
	}
}

// switcher builds the models /model names in the chat, which started with
// spec at base ("" for none). A model is built as --model builds one: the
// config entry's options, the key variables. The base URL the chat started
// with applies to the models of that provider only, so that --base-url
// never sends another provider's requests, and its key, to that endpoint;
// an openai-compatible model needs the chat to have started with one.
func (st *setup) switcher(g *globalOptions, s *streams, spec, base string) func(string) (ui.ModelChoice, error) {
	from, _, _ := strings.Cut(spec, ":")
	return func(next string) (ui.ModelChoice, error) {
		b := ""
		if p, _, _ := strings.Cut(next, ":"); spec != "" && p == from {
			b = base
		}
		ms := st.cfg.Models[next]
		m, err := llm.New(next, llm.Options{BaseURL: b, Getenv: s.Getenv,
			MaxTokens: ms.MaxTokens, Thinking: ms.Thinking, AllowPlainHTTP: g.AllowPlainHTTP})
		if err != nil {
			return ui.ModelChoice{}, err
		}
		return ui.ModelChoice{Model: m, BaseURL: savedBaseURL(b), ContextWindow: ms.ContextWindow}, nil
	}
}
