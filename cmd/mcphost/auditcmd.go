package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/state"
	"github.com/spf13/cobra"
)

func newAuditCmd(g *globalOptions, s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read and check the audit log",
		Long: `mcphost writes an intent record before every tool call runs and an outcome
record after it, each chained to the one before by its hash. The log lives at
$XDG_STATE_HOME/mcphost/audit.jsonl unless --audit names another file, or in
the PostgreSQL store that --store or the config's "store" names.`,
	}
	var n int
	var asJSON bool
	var storeFlag string
	tail := &cobra.Command{
		Use:   "tail",
		Short: "Show the last records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, recs, err := readAuditRecords(cmd.Context(), g, s, storeFlag,
				func(db *pgstore.Store) ([]audit.Record, error) { return db.Tail(cmd.Context(), n) },
				func(path string) ([]audit.Record, error) { return audit.Tail(path, n) })
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if asJSON {
				return writeJSON(s, append([]audit.Record{}, recs...))
			}
			if len(recs) == 0 {
				// Not an error: nothing has been called through the gate yet.
				fmt.Fprintf(s.Err, "mcphost: no audit records yet in %s; the first tool call writes them\n", path)
				return nil
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tKIND\tCALL\tTOOL\tCLASS\tTIER\tVERDICT\tBY\tVIA\tSTATUS")
			for _, r := range recs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Time.Local().Format(time.DateTime), r.Kind, sanitize.Line(r.CallID),
					sanitize.Line(r.Server+"/"+r.Tool), dash(r.Class), dash(r.Tier), dash(r.Verdict), dash(sanitize.Line(r.DecidedBy.String())),
					dash(viaColumn(r)), dash(string(r.Status)))
			}
			return tw.Flush()
		},
	}
	tail.Flags().IntVarP(&n, "lines", "n", 20, "how many records")
	tail.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var showJSON bool
	show := &cobra.Command{
		Use:   "show CALL",
		Short: "Show every record of one call, and who approved it through what",
		Long: `Print the records of the call with id CALL (as audit tail and mcphost's JSON
name it), or of the held call with approval id CALL (as a refusal names it):
its intent and outcome, the approval records of a call held for later
approval (held, approved or denied and by whom, used), the decision, who or
what decided it (BY) and
the way the decision came (VIA): the chat's dialog, mcphost approve, the web
page (with or without a passkey), the client's form (elicitation), a rule, a
grant (with the way the grant was given and the call it was given for), --yes,
or headless. Records written before the channel was kept have no VIA.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			path, recs, err := readAuditRecords(ctx, g, s, storeFlag,
				func(db *pgstore.Store) ([]audit.Record, error) {
					return withApprovals(args[0], func(id string) ([]audit.Record, error) { return db.CallRecords(ctx, id) },
						func(id string) ([]audit.Record, error) { return db.ApprovalRecords(ctx, id) })
				},
				func(path string) ([]audit.Record, error) {
					return withApprovals(args[0], func(id string) ([]audit.Record, error) { return audit.CallRecords(path, id) },
						func(id string) ([]audit.Record, error) { return audit.ApprovalRecords(path, id) })
				})
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return fmt.Errorf("no records of call or approval %q in %s; audit tail lists the recent calls' ids", sanitize.Line(args[0]), path)
			}
			if showJSON {
				return writeJSON(s, recs)
			}
			for i, r := range recs {
				if i > 0 {
					fmt.Fprintln(s.Out)
				}
				showRecord(s, &r)
			}
			return nil
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the records as JSON")

	var expect string
	verify := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check that no record was edited, removed or reordered",
		Long: `Check every record of the audit log: that it parses, that its hash is right, and
that it follows the record before it. Exits 1 and names the first line at fault
when the log was tampered with. An intent with no outcome (mcphost stopped while
a call ran) is reported but is not an error.

The chain alone cannot show records removed from the end of the log. mcphost
records the log's head (its last seq and hash) in its state file whenever it
closes the log, and verify checks that the log still holds that record: a log
that ends before it, or holds another record at its seq, does not verify.
verify prints the head it found; keep that hash somewhere else and pass it
with --expect HASH to check against your own copy. After starting a new log
on purpose, "mcphost audit head --reset" records the new head.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := auditFile(g, s)
			if len(args) == 1 {
				path = args[0]
			}
			if expect != "" && !isHexHash(expect) {
				return usageError(fmt.Errorf("--expect %q: want the 64 hex digits of a record's hash, as verify prints after \"head:\"", expect))
			}
			if len(args) == 0 {
				db, err := auditStore(cmd.Context(), g, s, storeFlag)
				if err != nil {
					return err
				}
				if db != nil {
					defer db.Close()
					return verifyStore(cmd.Context(), s, db, expect)
				}
			}
			return verifyLog(s, path, expect)
		},
	}
	verify.Flags().StringVar(&expect, "expect", "", "a head hash kept elsewhere that the log must still hold")

	var reset bool
	head := &cobra.Command{
		Use:   "head [FILE]",
		Short: "Show the log's head and the one recorded in the state file",
		Long: `Print the seq and hash of the log's last record, and the head mcphost recorded
for the log when it last closed it. With --reset, record the log's current end
as its head: for a log you started anew on purpose, or after checking the
records that verify reported as missing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := auditFile(g, s)
			if len(args) == 1 {
				path = args[0]
			} else if db, err := auditStore(cmd.Context(), g, s, storeFlag); err != nil {
				return err
			} else if db != nil {
				// The store records its head with every append, in the
				// same transaction; verify compares the chain with it.
				defer db.Close()
				if reset {
					return usageError(fmt.Errorf("--reset is for a log file: the store %s moves its head with every append", db))
				}
				h, err := db.Head(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "head: %s\nrecorded head: %s (the store's)\n", h, h)
				return nil
			}
			heads := stateHeads{path: stateFile(s)}
			if reset {
				h, err := audit.ResetHead(heads, path)
				if err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "recorded head: %s\n", h)
				return nil
			}
			h, err := audit.ReadHead(path)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				fmt.Fprintln(s.Out, "head: none")
				fmt.Fprintf(s.Err, "mcphost: no audit log yet at %s; the first tool call writes it\n", path)
			case err != nil:
				return err
			default:
				fmt.Fprintf(s.Out, "head: %s\n", h)
			}
			if rec, ok, err := heads.recorded(path); err != nil {
				return err
			} else if ok {
				fmt.Fprintf(s.Out, "recorded head: %s (%s)\n", audit.Head{Seq: rec.Seq, Hash: rec.Hash}, rec.RecordedAt.Local().Format(time.DateTime))
			} else {
				fmt.Fprintln(s.Out, "recorded head: none")
			}
			return nil
		},
	}
	head.Flags().BoolVar(&reset, "reset", false, "record the log's current end as its head")
	export := &cobra.Command{
		Use:   "export",
		Short: "Write every record of the log to standard output, as the lines of an audit file",
		Long: `Write the whole audit log, oldest record first, to standard output in the
format of the audit file: from the store when one is set (--store, or "store" in
the config), else from the file. "mcphost audit verify FILE" checks what it
wrote anywhere, without the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := auditStore(cmd.Context(), g, s, storeFlag)
			if err != nil {
				return err
			}
			if db != nil {
				defer db.Close()
				return db.Export(cmd.Context(), s.Out)
			}
			f, err := os.Open(auditFile(g, s))
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(s.Err, "mcphost: no audit log yet at %s; the first tool call writes it\n", auditFile(g, s))
				return nil
			}
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(s.Out, f)
			return err
		},
	}
	cmd.PersistentFlags().StringVar(&storeFlag, "store", "", "read the audit chain from the PostgreSQL store at `URL` (default: the config's \"store\", else the audit file)")
	cmd.AddCommand(tail, show, verify, head, export)
	return cmd
}

// auditStore opens the store the audit commands read: flag, else the
// user config's "store"; nil when the log is a file. A config that cannot
// be read is said, and the file is read.
func auditStore(ctx context.Context, g *globalOptions, s *streams, flag string) (*pgstore.Store, error) {
	url := flag
	if url == "" && g.Audit == "" {
		cfg, _, err := config.Load(loadOptions(g, s))
		if err != nil {
			fmt.Fprintf(s.Err, "mcphost: warning: %v; reading the audit file\n", err)
			return nil, nil
		}
		managed, _, _ := config.LoadManaged(managedPath)
		url = storeURL("", cfg, managed, s)
	}
	if url == "" {
		return nil, nil
	}
	if err := pgstore.CheckURL(url); err != nil {
		return nil, usageError(fmt.Errorf("--store: %w", err))
	}
	return openStore(ctx, url)
}

// verifyStore checks the chain in the store, and that it holds expect (a
// hash, or empty), as verifyLog checks a file.
func verifyStore(ctx context.Context, s *streams, db *pgstore.Store, expect string) error {
	rep, err := db.Verify(ctx)
	if err != nil {
		return err
	}
	if expect != "" {
		if ok, err := db.Holds(ctx, expect); err != nil {
			return err
		} else if !ok {
			rep.Problems = append(rep.Problems, audit.Problem{Kind: audit.ProblemMissing,
				Msg: fmt.Sprintf("the chain does not hold the record %s given with --expect: records were removed, or it is another chain", expect)})
		}
	}
	where := db.String()
	return printVerified(s, rep, where+": ", "the audit chain in "+where)
}

// verifyLog checks the whole log at path, and its end against the head
// recorded in the state file and against expect (a hash, or empty).
func verifyLog(s *streams, path, expect string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if rec, ok, _ := (stateHeads{path: stateFile(s)}).recorded(path); ok {
			return fmt.Errorf("%s does not verify: the log is gone, but mcphost recorded its head, seq %d hash %s: it was removed or moved", path, rec.Seq, rec.Hash)
		}
		if expect != "" {
			return withCode(exitError, fmt.Errorf("%s does not verify: there is no log, but --expect names a head it should hold", path))
		}
		// No log and no head recorded for it: nothing was ever called
		// through the gate with this log, which is not tampering.
		fmt.Fprintf(s.Err, "mcphost: no audit log yet at %s; the first tool call writes it\n", path)
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var anchors []audit.Head
	if rec, ok, err := (stateHeads{path: stateFile(s)}).recorded(path); err != nil {
		return err
	} else if ok {
		anchors = append(anchors, audit.Head{Seq: rec.Seq, Hash: rec.Hash})
	}
	if expect != "" {
		anchors = append(anchors, audit.Head{Hash: expect})
	}
	tail := false
	for _, want := range anchors {
		// Verify read only up to what it saw; CheckHead reads the same
		// bytes from their end.
		_, p, err := audit.CheckHead(f, fi.Size(), want)
		if err != nil {
			return err
		}
		if p != nil {
			rep.Problems = append(rep.Problems, *p)
			tail = true
		}
	}
	if tail {
		defer fmt.Fprintln(s.Err, `mcphost: hint: if you moved the log or started a new one on purpose, "mcphost audit head --reset" records its current end as its head`)
	}
	return printVerified(s, rep, path+":", path)
}

// printVerified writes what verify found in rep: each open intent as a
// note, each problem after at, the chain's head and the counts. With a
// problem it is an error naming the first, of what.
func printVerified(s *streams, rep *audit.Report, at, what string) error {
	for _, oi := range rep.OpenIntents {
		fmt.Fprintf(s.Out, "note: %s\n", sanitize.Line(fmt.Sprint(oi)))
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(s.Out, "%s%s\n", at, sanitize.Line(fmt.Sprint(p)))
	}
	fmt.Fprintf(s.Out, "head: %s\n", audit.Head{Seq: rep.LastSeq, Hash: rep.LastHash})
	fmt.Fprintf(s.Out, "%s (%s, %s), %s, %s\n",
		nounCount(rep.Records, "record"), nounCount(rep.Intents, "intent"), nounCount(rep.Outcomes, "outcome"),
		nounCount(len(rep.OpenIntents), "open intent"), nounCount(len(rep.Problems), "problem"))
	if len(rep.Problems) > 0 {
		return withCode(exitError, fmt.Errorf("%s does not verify: %s", what, sanitize.Line(strings.TrimSpace(fmt.Sprint(rep.Problems[0])))))
	}
	return nil
}

func isHexHash(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// stateFile is the state file, where audit heads are kept.
func stateFile(s *streams) string {
	return filepath.Join(config.StateDir(s.Getenv("XDG_STATE_HOME")), "state.json")
}

// stateHeads keeps audit heads in the state file, under its lock.
type stateHeads struct{ path string }

func (h stateHeads) UpdateHead(key string, fn func(audit.Head, bool) (audit.Head, bool)) error {
	return state.Update(h.path, nil, func(st *state.State) error {
		old, ok := st.AuditHead(key)
		if next, change := fn(audit.Head{Seq: old.Seq, Hash: old.Hash}, ok); change {
			st.SetAuditHead(key, next.Seq, next.Hash)
		}
		return nil
	})
}

// recorded returns the head recorded for the log at path.
func (h stateHeads) recorded(path string) (state.AuditHead, bool, error) {
	key, err := audit.HeadKey(path)
	if err != nil {
		return state.AuditHead{}, false, err
	}
	st, err := state.Load(h.path)
	if err != nil {
		return state.AuditHead{}, false, err
	}
	rec, ok := st.AuditHead(key)
	return rec, ok, nil
}

// auditOptions are the options of the audit log a session writes: its
// head is recorded in the state file when it closes.
func (st *setup) auditOptions() audit.Options {
	return audit.Options{Heads: stateHeads{path: filepath.Join(st.stateDir, "state.json")}}
}

func auditFile(g *globalOptions, s *streams) string {
	if g.Audit != "" {
		return g.Audit
	}
	if m, _, err := config.LoadManaged(managedPath); err == nil && m != nil && m.Audit != "" {
		return m.Audit // where the managed policy has every session write it
	}
	return config.StateDir(s.Getenv("XDG_STATE_HOME")) + string(os.PathSeparator) + "audit.jsonl"
}

// viaColumn is a record's channel for audit tail: "approve", "rule",
// "grant:session<approve" (a session grant given in mcphost approve).
func viaColumn(r audit.Record) string {
	via := sanitize.Line(r.Via.String())
	if g := r.Grant; g != nil {
		via += ":" + sanitize.Line(g.Scope) + "<" + sanitize.Line(g.Via.String())
	}
	return via
}

// angle is an email address as a mail header shows it, "" for none.
func angle(email string) string {
	if email == "" {
		return ""
	}
	return "<" + email + ">"
}

// showRecord writes one record for audit show, a field to a line.
func showRecord(s *streams, r *audit.Record) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(s.Out, "  %-10s %s\n", k+":", sanitize.Line(v))
		}
	}
	fmt.Fprintf(s.Out, "record %d (%s) at %s\n", r.Seq, r.Kind, r.Time.Time.Local().Format(time.DateTime))
	line("call", r.CallID)
	line("session", r.SessionID)
	if c := r.Client; c != nil {
		client := strings.TrimSpace(c.Name + " " + c.Version)
		if c.ID != "" {
			client = strings.TrimSpace(client + " (OAuth client " + c.ID + ")")
		}
		line("client", client)
		if p := c.Person; p != nil {
			line("person", personWords(p))
		}
	}
	line("tool", r.Server+"/"+r.Tool)
	line("class", r.Class)
	line("tier", r.Tier)
	line("verdict", r.Verdict)
	line("by", r.DecidedBy.String())
	if r.Via != "" {
		via := r.Via.String() + " (" + r.Via.Words() + ")"
		if g := r.Grant; g != nil {
			via += ": the " + g.Scope + " grant given " + g.Via.Words()
			if g.CallID != "" {
				via += " for call " + g.CallID
			}
		}
		line("via", via)
	}
	if r.ApprovalID != "" {
		line("approval", strings.TrimSpace(r.ApprovalID+" "+r.ApprovalState))
	}
	if p := r.Approver; p != nil {
		line("approver", personWords(p))
	}
	line("reasons", strings.Join(r.Reasons, ", "))
	line("status", string(r.Status))
	line("argsHash", r.ArgsHash)
}

// personWords names a person as a record does: subject and issuer, after
// the name and email they go by.
func personWords(p *audit.Person) string {
	who := p.Subject + " of " + p.Issuer
	if d := strings.TrimSpace(p.Name + " " + angle(p.Email)); d != "" {
		who = d + ": " + who
	}
	return who
}

// withApprovals returns the records of the call with id id (byCall) and,
// for each held call they ran under, that approval's records (byApproval):
// its holding, who answered it and through what, its use. An id no call
// has is taken as an approval id. Records are in the chain's order, each
// once.
func withApprovals(id string, byCall, byApproval func(string) ([]audit.Record, error)) ([]audit.Record, error) {
	recs, err := byCall(id)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range recs {
		if r.ApprovalID != "" && !slices.Contains(ids, r.ApprovalID) {
			ids = append(ids, r.ApprovalID)
		}
	}
	if len(recs) == 0 {
		ids = []string{id}
	}
	for _, ap := range ids {
		more, err := byApproval(ap)
		if err != nil {
			return nil, err
		}
		for _, r := range more {
			if !slices.ContainsFunc(recs, func(x audit.Record) bool { return x.Seq == r.Seq }) {
				recs = append(recs, r)
			}
		}
	}
	slices.SortStableFunc(recs, func(a, b audit.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return recs, nil
}

// readAuditRecords reads records from the store --store or the config names,
// with fromStore, or else from the audit file, with fromFile. It returns
// where it read, for the messages that name it.
func readAuditRecords(ctx context.Context, g *globalOptions, s *streams, storeFlag string,
	fromStore func(*pgstore.Store) ([]audit.Record, error), fromFile func(path string) ([]audit.Record, error)) (string, []audit.Record, error) {
	db, err := auditStore(ctx, g, s, storeFlag)
	if err != nil {
		return "", nil, err
	}
	if db == nil {
		path := auditFile(g, s)
		recs, err := fromFile(path)
		return path, recs, err
	}
	defer db.Close()
	recs, err := fromStore(db)
	return db.String(), recs, err
}
