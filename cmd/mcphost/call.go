package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

type callOptions struct {
	Ref     string // SERVER/TOOL
	RawArgs string // ARGS, a JSON object or ""
	JSON    bool
	Yes     bool
	Batch   string
	// NoCheck sends arguments the input schema rejects, for a server
	// author who wants to see the server's own answer to them.
	NoCheck bool
	// Wait is how long a call that needs a person who cannot be asked
	// here waits, held, for their approval in `mcphost approve` or on the
	// web page; 0 refuses it at once.
	Wait time.Duration
}

func newCallCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &callOptions{}
	cmd := &cobra.Command{
		Use:   "call SERVER/TOOL [ARGS]",
		Short: "Run one tool call through the gate, without a model",
		Long: `Run one call through the gate: it is decided, audited, executed and retried
only as the rules allow. Without --yes nothing can be asked, so a call that needs
approval is refused (exit 3). --yes approves such a call once; it never
overrides a deny rule.

Prints the result's content (escaped for the terminal), or with --json the
full result with the decision and every attempt. A summary line goes to stderr.

With --batch FILE, each line of FILE is a call, optionally with expectations:
  {"tool": "tasks/get_task", "args": {"id": "T-1"}, "expect": {"verdict": "allow", "isError": false}}
Expectations: verdict, status, class, tier, isError, contains (text in the
result); a line without any must end in status success. The whole file is
checked before anything runs: an unknown field or value, or a tool its server
does not list, exits 2 naming the line. The calls run in order; a line per
call and "N passed, N failed" are printed (with --json, one JSON object per
call, then a summary object), and any unmet expectation exits 1 — a test of a
server's annotations and behaviour for its CI.

A call that needs a person who cannot be asked here (without --yes, or where
askVia does not let --yes approve its tier) is held under an approval id for
--wait (by default the approval lifetime, 10 minutes, when a person is at the
terminal; 0 otherwise): the id and where to approve it go to stderr, and the
command waits until the person approves it in ` + "`mcphost approve`" + ` or on the
approval page (the call then runs once), denies it (exit 4, with their
reason), or the wait ends (exit 3). Ctrl+C withdraws it. --wait 0 refuses it
at once.

Exit codes: 0 ok, 3 needed approval, 4 denied (by a rule or a person), 5 the tool returned
an error, 6 the outcome is unknown (the call may or may not have taken effect;
it was not retried automatically), 2 a usage mistake (such as a tool the
server does not list, or a bad batch file), 1 anything else.`,
		Example: `  mcphost call tasks/list_tasks
  mcphost call --yes tasks/delete_task '{"id": "T-3"}'`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Batch != "" {
				if len(args) > 0 {
					return usageError(fmt.Errorf("call --batch takes no SERVER/TOOL"))
				}
				return runCallBatch(cmd.Context(), g, o, s)
			}
			if len(args) == 0 {
				return usageError(fmt.Errorf("call needs SERVER/TOOL (or --batch FILE)"))
			}
			o.Ref, o.RawArgs = args[0], ""
			if len(args) == 2 {
				o.RawArgs = args[1]
			}
			if !cmd.Flags().Changed("wait") && !s.Terminal {
				o.Wait = 0 // no person at this terminal: a script is not kept waiting
			}
			if o.Wait < 0 {
				return usageError(fmt.Errorf("--wait %s is negative; give a duration such as 10m, or 0 to refuse at once", o.Wait))
			}
			return runCall(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.NoCheck, "no-check", false, "send the arguments even if the tool's input schema rejects them")
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "approve this one call if it needs approval (never overrides a deny rule)")
	cmd.Flags().DurationVar(&o.Wait, "wait", later.DefaultLifetime, "hold a call that needs a person who cannot be asked here for `DURATION`, waiting for their approval in mcphost approve (0: refuse it at once; default 0 without a terminal)")
	cmd.Flags().StringVar(&o.Batch, "batch", "", "run the calls of a JSON Lines `FILE` in order, checking each line's expectations")
	return cmd
}

type callJSON struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Decision  decisionJSON    `json:"decision"`
	DecidedBy string          `json:"decidedBy"`
	// Via is the way the decision came (as in the audit record): "yes"
	// for --yes, "rule", "headless"; omitted when the tier allowed it.
	Via      string              `json:"via,omitempty"`
	Status   string              `json:"status"`
	Message  string              `json:"message"`
	Approve  *host.Approval      `json:"approve,omitempty"`
	Stale    bool                `json:"stale,omitempty"`
	Attempts []host.Attempt      `json:"attempts"`
	Task     *client.TaskInfo    `json:"task,omitempty"`
	Result   *mcp.CallToolResult `json:"result,omitempty"`
	Error    string              `json:"error,omitempty"`
	ExitCode int                 `json:"exitCode"`
}

func runCall(ctx context.Context, g *globalOptions, o *callOptions, s *streams) error {
	ref, rawArgs := o.Ref, o.RawArgs
	server, tool, err := splitRef(ref)
	if err != nil {
		return err
	}
	args, err := parseArgs(rawArgs)
	if err != nil {
		return err
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	var gate *host.Gate
	var held *heldCalls
	if o.Wait > 0 {
		// Held calls live in this process's memory: the command waits
		// for the answer, since a call of a one-shot command cannot be
		// retried later.
		if held = st.holdFor(s, "mcphost call "+ref+" in "+s.WorkDir, o.Wait, &gate); held != nil {
			defer held.close()
		}
	}
	sess, err := st.gatedOne(ctx, g, s, server, o.Yes, func(m *client.Manager) error {
		t, ok := m.Tool(server, tool)
		if !ok {
			return noSuchTool(m, server, tool)
		}
		return checkArgs(t, args, o.NoCheck)
	})
	if err != nil {
		return err
	}
	defer sess.Close()

	gate = sess.gate
	call := host.Call{Server: server, Tool: tool, Args: args, NoArgsCheck: o.NoCheck}
	r := gate.Call(ctx, call)
	if held != nil && r.HeldNote() != "" {
		r = waitHeld(ctx, s, held, gate, call, r)
	}
	code := exitFor(r)
	message := callMessage(r)
	if o.JSON {
		out := callJSON{
			Server: r.Server, Tool: r.Tool, Args: r.Args, DecidedBy: r.DecidedBy.String(), Via: r.Via.String(), Status: string(r.Status),
			Message: message, Approve: r.Approval(host.ApproveWithYes), Stale: r.Stale, Attempts: r.Attempts, Task: r.Task, Result: r.Result, ExitCode: code,
			Decision: decisionJSON{Verdict: r.Decision.Verdict.String(), Tier: int(r.Decision.Tier), Class: r.Decision.Class.String(),
				Retry: r.Decision.Retry, Reasons: reasonCodes(r.Decision), Rule: r.Decision.Rule},
		}
		if out.Attempts == nil {
			out.Attempts = []host.Attempt{}
		}
		if r.Err != nil {
			out.Error = r.Err.Error()
		}
		if err := writeJSON(s, out); err != nil {
			return err
		}
	} else if r.Result != nil {
		printResult(s, r.Result)
	}
	summary := fmt.Sprintf("%s: %s by %s → %s", sanitize.Name(ref), r.Decision.Verdict, r.DecidedBy, r.Status)
	if n := len(r.Attempts); n > 0 {
		summary += fmt.Sprintf(" after %d attempt%s", n, plural(n))
	}
	if r.Task != nil {
		summary += fmt.Sprintf(" (task %s: %s)", sanitize.Line(r.Task.ID), sanitize.Line(r.Task.Last().Status))
	}
	fmt.Fprintln(s.Err, summary)
	if r.Decision.Has(decide.CodeDefinitionChanged) && r.DecidedBy.PersonApproved() {
		fmt.Fprintln(s.Err, sanitize.Line("mcphost: approving this call accepted the new definition of "+ref+changedWhat(r.ChangedFields)))
	}
	if r.Status != host.StatusSuccess {
		msg := message
		if r.Err != nil && r.Status == host.StatusError {
			msg = r.Err.Error()
		}
		if r.Status == host.StatusBlocked || r.Status == host.StatusDenied {
			// The reasons it was held back; what speaks for the call
			// is named apart, never as a reason.
			var why, favour []string
			ask, fav := r.Decision.Split()
			for _, rs := range ask {
				why = append(why, rs.Code)
			}
			for _, rs := range fav {
				favour = append(favour, rs.Code)
			}
			msg += " (reasons: " + strings.Join(why, ", ")
			if len(favour) > 0 {
				msg += "; in its favour: " + strings.Join(favour, ", ")
			}
			msg += ")"
		}
		return withCode(code, fmt.Errorf("%s", showingName(msg, ref, true)))
	}
	return nil
}

// waitHeld waits for a person's answer to the call r says is held: once
// they have answered, the same call is made again — approved, it runs once;
// denied, it is refused with their reason. When the approval's lifetime
// ends or ctx is cancelled first, the call stays refused as r says (a
// cancel withdraws it from the approvers).
func waitHeld(ctx context.Context, s *streams, held *heldCalls, gate *host.Gate, call host.Call, r *host.Result) *host.Result {
	ap := *r.Held
	ref := call.Server + "/" + call.Tool
	ways := host.HeldWays(held.may, r.Decision.Tier)
	fmt.Fprintln(s.Err, showingName(fmt.Sprintf("mcphost: %s waits for a person's approval under approval id %s until %s: approve or deny it %s (Ctrl+C withdraws it)",
		ref, ap.ID, ap.Expires.Local().Format("15:04:05"), strings.Join(ways, " or ")), ref, false))
	timer := time.NewTimer(time.Until(ap.Expires))
	defer timer.Stop()
	select {
	case <-held.store.Answered(ap.ID):
		return gate.Call(ctx, call)
	case <-ctx.Done():
		err := gate.WithdrawLater(ap.ID)
		switch {
		case errors.Is(err, later.ErrAnswered):
			fmt.Fprintln(s.Err, "mcphost: interrupted: the call was answered just as it was withdrawn; it was not made again, so nothing ran")
			return r
		case err != nil && !errors.Is(err, later.ErrUnknown):
			fmt.Fprintf(s.Err, "mcphost: warning: the withdrawal's audit record could not be written: %v\n", err)
		}
		fmt.Fprintln(s.Err, "mcphost: interrupted: the call was withdrawn before anyone answered; nothing ran")
	case <-timer.C:
		fmt.Fprintln(s.Err, "mcphost: no one answered before approval id "+ap.ID+" expired; nothing ran")
	}
	return r
}

// callMessage is how a call from the command line ended, in one sentence:
// a blocked call names --yes, which approves it here (host.ApproveWithYes),
// unless --yes was the answer askVia refused.
func callMessage(r *host.Result) string {
	if r.Status == host.StatusBlocked && r.Refused == "" {
		return r.BlockedMessage(host.ApproveWithYes)
	}
	return r.Message()
}

// showingName escapes text for the terminal (sanitize.Text with layout,
// else sanitize.Line) with each occurrence of the call's raw "server/tool"
// shown as sanitize.Name shows it, so that a look-alike letter in a
// server's tool name is visible in a refusal too.
func showingName(text, ref string, layout bool) string {
	if shown := sanitize.Name(ref); shown != ref {
		text = strings.ReplaceAll(text, ref, shown)
	}
	if layout {
		return sanitize.Text(text)
	}
	return sanitize.Line(text)
}

// changedWhat names the changed parts of a definition, when known.
func changedWhat(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return " (what changed: " + strings.Join(fields, ", ") + ")"
}

// noSuchTool is the usage error for a tool the server does not list: the
// near names first ("did you mean"), then what the server has.
func noSuchTool(m *client.Manager, server, tool string) error {
	var have []string
	for _, t := range m.Tools() {
		if t.Server == server {
			have = append(have, t.Name)
		}
	}
	shown := make([]string, 0, min(len(have), 12)+1)
	for i, name := range have {
		if i == 12 {
			shown = append(shown, "…")
			break
		}
		shown = append(shown, sanitize.Name(name))
	}
	msg := fmt.Sprintf("server \"%s\" has no tool \"%s\"; it has: %s", sanitize.Name(server), sanitize.Name(tool), strings.Join(shown, ", "))
	if near := nearNames(tool, have); len(near) > 0 {
		msg += "\ndid you mean " + orList(quoteAll(prefixAll(server+"/", near))) + "?"
	}
	return usageError(errors.New(msg))
}

// prefixAll puts p before each of ss, shown as sanitize.Name shows names.
func prefixAll(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = sanitize.Name(p + s)
	}
	return out
}

// nounCount is n with the noun in the number n needs: "1 tool", "2 tools".
func nounCount(n int, noun string) string {
	return fmt.Sprintf("%d %s%s", n, noun, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// printResult writes a tool result's content for a person, escaped.
func printResult(s *streams, res *mcp.CallToolResult) {
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(s.Out, sanitize.Text(c.Text))
		case *mcp.ImageContent:
			fmt.Fprintf(s.Out, "[image %s, %s]\n", sanitize.Line(c.MIMEType), nounCount(len(c.Data), "byte"))
		case *mcp.AudioContent:
			fmt.Fprintf(s.Out, "[audio %s, %s]\n", sanitize.Line(c.MIMEType), nounCount(len(c.Data), "byte"))
		case *mcp.ResourceLink:
			fmt.Fprintf(s.Out, "[resource link %s]\n", sanitize.Line(c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				if c.Resource.Text != "" {
					fmt.Fprintf(s.Out, "[resource %s]\n%s\n", sanitize.Line(c.Resource.URI), sanitize.Text(c.Resource.Text))
				} else {
					fmt.Fprintf(s.Out, "[resource %s, %s]\n", sanitize.Line(c.Resource.URI), nounCount(base64.StdEncoding.EncodedLen(len(c.Resource.Blob)), "byte"))
				}
			}
		default:
			b, _ := json.Marshal(c)
			fmt.Fprintln(s.Out, sanitize.Text(string(b)))
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		b, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
		fmt.Fprintln(s.Out, sanitize.Text(string(b)))
	}
}

func runCallBatch(ctx context.Context, g *globalOptions, o *callOptions, s *streams) error {
	calls, err := openBatch(o.Batch)
	if err != nil {
		return err
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	mode, asker := cliAsker(o.Yes)
	sess, err := st.openSession(ctx, g, s, mode, asker)
	if err != nil {
		return err
	}
	defer sess.Close()
	if err := checkTools(st, sess.m, o.Batch, calls, o.NoCheck); err != nil {
		return err
	}
	return runBatch(ctx, sess, o, s, calls)
}

// cliAsker is who answers when a command line call needs approval: nobody
// (headless), or with --yes an approval of that one call.
func cliAsker(yes bool) (decide.Mode, host.Asker) {
	if yes {
		return decide.Interactive, managedAsksUnanswered{host.YesAsker{}} // managed.go
	}
	return decide.Headless, host.HeadlessAsker{}
}

// checkArgs refuses arguments the tool's input schema rejects, before
// anything is decided or sent: exit 2, naming the field (the schema's words
// are the server's, so they are escaped).
func checkArgs(t *client.Tool, args json.RawMessage, noCheck bool) error {
	if noCheck {
		return nil
	}
	if err := client.NewArgsChecker(t.InputSchema).Check(args); err != nil {
		why := strings.TrimPrefix(err.Error(), "does not match the input schema: ")
		why = strings.TrimPrefix(why, "validating root: ")
		return usageError(fmt.Errorf("%s: the input schema rejects the arguments: %s (its inputSchema is in mcphost tools --json; --no-check sends them anyway)",
			sanitize.Name(t.Ref()), sanitize.Line(why)))
	}
	return nil
}
