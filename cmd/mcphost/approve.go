package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/approver/passkey"
	"github.com/mcphost/mcphost/approver/tui"
	"github.com/mcphost/mcphost/approver/web"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sanitize"
)

// approveOptions are approve's flags.
type approveOptions struct {
	// Web serves the approval page instead of the terminal screen.
	Web bool
	// NoOpen prints the page's link without opening a browser.
	NoOpen bool
	// Addr is where the page listens (127.0.0.1 only).
	Addr string
	// Enroll serves the page's enrollment of a passkey, and ends once one
	// is enrolled.
	Enroll bool
}

func newApproveCmd(_ *globalOptions, s *streams) *cobra.Command {
	o := &approveOptions{}
	cmd := &cobra.Command{
		Use:   "approve",
		Short: "Answer the calls the running mcphost serves ask a person about",
		Long: `approve connects to every mcphost serve running for this user (each has a
Unix socket in the state directory) and shows the confirmation dialog of the
chat for every call that needs a person and that the serve's client cannot
ask about: one at a time, in the order they were asked, with the same tiers,
grace period and typed confirmation for tier 3. The status line names the
client whose call is shown (as it named itself to serve) and, with several
serves, the serve that asked.

It stays open: when no serve runs it waits for one to start, it connects to
each serve that starts later, and again to a serve that restarts, so it can
be left open in a terminal of its own.

--web shows the same calls on a web page instead, on 127.0.0.1 only: approve
prints the page's link (it carries a secret made for this start) and opens it
in the browser when there is a desktop, unless --no-open. Only a browser that
opened the link can see or answer the calls.

--enroll registers a passkey or security key on that page (WebAuthn, with
a PIN or biometric): from then on every approval on the page is signed by
it over the exact call, and the serve that holds the call checks the
signature before it runs anything, so the approval shows a person was
there. A managed policy can require it for tier 3 ("askVia": {"T3":
["passkey"]}). With a passkey enrolled, adding another needs its approval.

Several approvers may run; the first answer counts. When the last one quits,
calls that wait are refused.`,
		Example: `  mcphost approve
  mcphost approve --web
  mcphost approve --web --no-open --addr 127.0.0.1:8766
  mcphost approve --enroll`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Enroll {
				o.Web = true
			}
			if (o.NoOpen || cmd.Flags().Changed("addr")) && !o.Web {
				return usageError(errors.New("--no-open and --addr are for --web: add --web to serve the approval page"))
			}
			return runApprove(cmd.Context(), o, s)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Web, "web", false, "show the calls on a web page on 127.0.0.1 instead of in the terminal")
	f.BoolVar(&o.NoOpen, "no-open", false, "with --web, print the page's link without opening a browser")
	f.StringVar(&o.Addr, "addr", web.DefaultAddr, "with --web, listen on `ADDR` (127.0.0.1 and a port, 0 for a free one)")
	f.BoolVar(&o.Enroll, "enroll", false, "enroll a passkey or security key on the approval page, then quit")
	return cmd
}

// watchEvery is how often approve looks for a serve that started since.
const watchEvery = time.Second

// runApprove shows the approver's screen, or with --web serves the
// approval page, until the person quits: it connects to the serves that
// run, waits for one when none does, and connects to each serve that
// starts (or restarts) while it is open.
func runApprove(ctx context.Context, o *approveOptions, s *streams) error {
	if !o.Web && !s.Terminal {
		return usageError(errors.New("mcphost approve shows a dialog and needs a terminal on standard input and output: run it in a terminal window (not through a pipe or a script), or use mcphost approve --web"))
	}
	mux, stop := watchServes(ctx, s)
	defer stop()
	if o.Web {
		ctx, enrolled := context.WithCancel(ctx)
		defer enrolled()
		wo := web.Options{Addr: o.Addr, Serves: mux.Serves, PasskeyStore: passkeyStore(s)}
		if o.Enroll {
			wo.OnEnroll = func(label string) {
				fmt.Fprintf(s.Out, "Enrolled the passkey %q: approvals on the approval page are signed with it from now on.\n", sanitize.Line(label))
				enrolled()
			}
		}
		page, err := web.Listen(wo)
		if err != nil {
			return usageError(fmt.Errorf("--addr: %w", err))
		}
		defer page.Close()
		link := page.Link()
		if o.Enroll {
			link = page.EnrollLink()
			fmt.Fprintf(s.Out, "Enroll a passkey: %s\n", link)
		} else {
			fmt.Fprintf(s.Out, "Approval page: %s\n", link)
		}
		fmt.Fprintln(s.Out, "Only a browser that opened this link sees the calls; keep it to yourself. Ctrl+C stops the page.")
		if !o.NoOpen {
			if err := openBrowser(s, link); err != nil {
				fmt.Fprintf(s.Err, "mcphost: %v; open the link above yourself\n", err)
			}
		}
		return page.Run(ctx, mux)
	}
	err := tui.Run(ctx, tui.Streams{In: s.In, Out: s.Out}, mux, tui.Config{Serves: mux.Serves, NoColor: !s.Color})
	if err != nil {
		return fmt.Errorf("%w; calls still waiting are refused unless another approver runs", err)
	}
	return nil
}

// watchServes connects a Mux that stays open to the serves that run and
// to each that starts later, naming on s.Err a serve it cannot speak to.
// stop closes it.
func watchServes(ctx context.Context, s *streams) (mux *approver.Mux, stop func()) {
	dir := approver.SocketDir(config.StateDir(s.Getenv("XDG_STATE_HOME")))
	mux = approver.NewMux()
	mux.StayOpen()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	problems, err := mux.Dial(dctx, dir)
	cancel()
	if err != nil && !errors.Is(err, approver.ErrNoServe) {
		// A serve that cannot be spoken to (another version, say) is
		// named; the approver waits for the others.
		problems = append(problems, err)
	}
	for _, p := range problems {
		fmt.Fprintf(s.Err, "mcphost: warning: %v\n", p)
	}
	wctx, cancelWatch := context.WithCancel(ctx)
	go mux.Watch(wctx, dir, watchEvery)
	return mux, func() {
		cancelWatch()
		mux.Close()
	}
}

// startWebPage serves the approval page for serve --web, on a Mux of its
// own that reaches this serve and every other serve of the person. It
// prints the link on s.Err (standard output may be the MCP stream). stop
// ends the page.
func startWebPage(ctx context.Context, s *streams, addr string) (stop func(), err error) {
	mux, stopMux := watchServes(ctx, s)
	page, err := web.Listen(web.Options{Addr: addr, Serves: mux.Serves, PasskeyStore: passkeyStore(s)})
	if err != nil {
		stopMux()
		return nil, fmt.Errorf("--web-addr: %w", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := page.Run(pctx, mux); err != nil {
			fmt.Fprintf(s.Err, "mcphost: the approval page stopped: %v\n", err)
		}
	}()
	fmt.Fprintf(s.Err, "mcphost: approval page: %s\n", page.Link())
	return func() {
		cancel()
		<-done
		stopMux()
		page.Close()
	}, nil
}

// openBrowser opens link in the person's browser when there is a desktop
// to open it on: xdg-open under X11 or Wayland, open on macOS. Without one
// it does nothing; the link is printed either way.
var openBrowser = func(s *streams, link string) error {
	var name string
	switch {
	case runtime.GOOS == "darwin":
		name = "open"
	case s.Getenv("DISPLAY") != "" || s.Getenv("WAYLAND_DISPLAY") != "":
		name = "xdg-open"
	default:
		return nil
	}
	cmd := exec.Command(name, link)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open the browser with %s: %w", name, err)
	}
	go func() { _ = cmd.Wait() }() // the opener's own end is not ours to judge
	return nil
}

// passkeyStore is the file of the person's enrolled passkeys, in the
// state directory.
func passkeyStore(s *streams) string {
	return filepath.Join(config.StateDir(s.Getenv("XDG_STATE_HOME")), "passkeys.json")
}

// passkeyVerifier checks the passkey approvals that reach this process's
// approver socket, against the person's enrolled passkeys.
func passkeyVerifier(s *streams) approver.PasskeyVerifier {
	v, err := passkey.NewVerifier(passkey.VerifierOptions{RPID: web.RPID, StorePath: passkeyStore(s)})
	if err != nil {
		return nil // a fixed RP ID and a path: cannot fail; without it no proof is taken
	}
	return v
}
