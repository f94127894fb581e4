package host

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/pgstore"
)

// sharedSession returns a gate world whose session state is the session
// key in the store at url, through a pool of its own.
func sharedSession(t *testing.T, url, key string, o worldOpts) (*world, *pgstore.Store) {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	o.state = s.Sessions(pgstore.SessionOptions{}).For(key)
	return newWorld(t, o), s
}

// allowReads let the open-world read search_context run unasked, as an
// allow rule does until the session is tainted, and the private read
// list_tasks.
var allowReads = []decide.RuleSpec{
	{Effect: decide.Allow, Source: "test", Raw: []byte(`"f/search_context"`)},
	{Effect: decide.Allow, Source: "test", Index: 1, Raw: []byte(`"f/list_tasks"`)},
}

// answersAsker gives its answers in order, then refuses every question;
// it counts the questions.
type answersAsker struct {
	mu      sync.Mutex
	answers []Answer
	asked   int
}

func (a *answersAsker) Ask(context.Context, *Question) (Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	if len(a.answers) == 0 {
		return Answer{}, nil
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans, nil
}

func (a *answersAsker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

// Two gates with one SessionState are one session: a grant "for this
// session" given through one lets the call run unasked through the other,
// a revoke through either ends it for both, and taint taken in through
// each is in force in both. A gate of another session shares none of it.
func TestGatesWithOneSessionStateAreOneSession(t *testing.T) {
	url := pgtest.DB(t)
	asker := &answersAsker{answers: []Answer{{Approve: true, Scope: decide.ScopeSession}}}
	o := worldOpts{fixture: "tasks", trusted: true, auto: "none", rules: allowReads}
	o.asker = asker
	a, _ := sharedSession(t, url, "alice", o)
	o.asker = HeadlessAsker{}
	b, _ := sharedSession(t, url, "alice", o)
	other, _ := sharedSession(t, url, "bob", o)
	const args = `{"title":"t"}`
	if r := a.call("create_task", args); r.Status != StatusSuccess {
		t.Fatalf("through A: %s, want run on the person's approval", r.Status)
	}
	if r := b.call("create_task", args); r.Status != StatusSuccess || r.DecidedBy != "user:session" {
		t.Fatalf("through B: %s by %s, want run on the session grant given through A", r.Status, r.DecidedBy)
	}
	if r := other.call("create_task", args); r.Status == StatusSuccess {
		t.Fatal("another session's gate ran the call on alice's grant")
	}
	grants := b.gate.Grants()
	if len(grants) != 1 || grants[0].Scope != decide.ScopeSession {
		t.Fatalf("B's grants: %+v, want the one session grant", grants)
	}
	if n := b.gate.Revoke(grants[0]); n != 1 {
		t.Fatalf("revoking through B removed %d grants, want 1", n)
	}
	if r := a.call("create_task", args); r.Status == StatusSuccess || asker.count() != 2 {
		t.Fatalf("through A after B revoked the grant: %s, %d questions; want it asked again (and refused)", r.Status, asker.count())
	}

	// Taint: a private read through A, an open-world read through B; the
	// next open-world read asks through either.
	if r := a.call("list_tasks", `{}`); r.Status != StatusSuccess {
		t.Fatalf("the private read through A: %s", r.Status)
	}
	if _, priv := b.gate.Taint(); !priv {
		t.Fatal("after a private read through A, B has not seen it")
	}
	if r := b.call("search_context", `{"query":"q"}`); r.Status != StatusSuccess {
		t.Fatalf("the first open-world read, through B: %s, want it run on the rule", r.Status)
	}
	for name, w := range map[string]*world{"A": a, "B": b} {
		before := asker.count()
		if r := w.call("search_context", `{"query":"q"}`); r.Status == StatusSuccess || name == "A" && asker.count() != before+1 {
			t.Fatalf("an open-world read through %s in the tainted session: %s, want it asked (and refused)", name, r.Status)
		}
		if open, priv := w.gate.Taint(); !open || !priv {
			t.Fatalf("%s's taint: open %v private %v, want both", name, open, priv)
		}
	}
	if r := other.call("search_context", `{"query":"q"}`); r.Status != StatusSuccess {
		t.Fatalf("another session's open-world read: %s, want it run: that session is not tainted", r.Status)
	}
}

// A session state that cannot be read makes the gate ask more, never less:
// its taint is assumed (an open-world read an allow rule lets through in
// a clean session asks), and a grant that could not be written still
// holds in the gate that was given it.
func TestASessionStateThatFailsFailsClosed(t *testing.T) {
	url := pgtest.DB(t)
	asker := &answersAsker{answers: []Answer{{}, {Approve: true, Scope: decide.ScopeSession}}}
	w, s := sharedSession(t, url, "alice", worldOpts{fixture: "tasks", trusted: true, auto: "none", rules: allowReads, asker: asker})
	if r := w.call("search_context", `{"query":"q"}`); r.Status != StatusSuccess {
		t.Fatalf("an open-world read in a clean session: %s, want it run on the rule", r.Status)
	}
	s.Close()
	if r := w.call("search_context", `{"query":"q"}`); r.Status == StatusSuccess {
		t.Fatal("with the session state unreadable, an open-world read ran on the rule: its taint was taken as none")
	}
	if asker.count() != 1 {
		t.Fatalf("%d questions, want the open-world read asked", asker.count())
	}
	const args = `{"title":"t"}`
	for i := range 2 {
		if r := w.call("create_task", args); r.Status != StatusSuccess {
			t.Fatalf("call %d with the session state unwritable: %s, want run (asked once, then on the grant kept in memory)", i, r.Status)
		}
	}
	if asker.count() != 2 {
		t.Fatalf("%d questions, want the read and one about create_task", asker.count())
	}
}

// failingTaint is a SessionState whose first AddTaint fails, as a write to
// a database that is briefly out of reach does.
type failingTaint struct {
	SessionState
	failed bool
}

func (f *failingTaint) AddTaint(open, priv bool) error {
	if !f.failed {
		f.failed = true
		return errors.New("the database is out of reach")
	}
	return f.SessionState.AddTaint(open, priv)
}

// Taint a gate could not write is written at its next decision: the
// other gates of the session see it then.
func TestTaintThatCouldNotBeWrittenIsWrittenAgain(t *testing.T) {
	url := pgtest.DB(t)
	s, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	a := newWorld(t, worldOpts{fixture: "tasks", trusted: true, auto: "none", rules: allowReads,
		state: &failingTaint{SessionState: s.Sessions(pgstore.SessionOptions{}).For("alice")}})
	b, _ := sharedSession(t, url, "alice", worldOpts{fixture: "tasks", trusted: true, auto: "none", rules: allowReads})
	if r := a.call("list_tasks", `{}`); r.Status != StatusSuccess {
		t.Fatalf("the private read through A: %s", r.Status)
	}
	if _, priv := b.gate.Taint(); priv {
		t.Fatal("B sees a taint A could not write")
	}
	if r := a.call("list_tasks", `{}`); r.Status != StatusSuccess {
		t.Fatalf("A's next read: %s", r.Status)
	}
	if _, priv := b.gate.Taint(); !priv {
		t.Fatal("after A's next decision, B has still not seen A's private read")
	}
}

// A grant in the session's store that is not a grant "for this session" —
// here the session grant a person gave, rewritten in the database as an
// "always" one, or with a field this mcphost does not know — never
// reaches the decision: the call it would cover asks again.
func TestAStoredGrantThatIsNotASessionGrantIsNotInForce(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	asker := &answersAsker{answers: []Answer{{Approve: true, Scope: decide.ScopeSession}}}
	o := worldOpts{fixture: "tasks", trusted: true, auto: "none", rules: allowReads, asker: asker}
	a, _ := sharedSession(t, url, "alice", o)
	o.asker = HeadlessAsker{}
	b, _ := sharedSession(t, url, "alice", o)
	const args = `{"title":"t"}`
	if r := a.call("create_task", args); r.Status != StatusSuccess {
		t.Fatalf("through A: %s, want run on the person's approval", r.Status)
	}
	if r := b.call("create_task", args); r.Status != StatusSuccess {
		t.Fatalf("through B: %s, want run on the session grant given through A", r.Status)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	for _, edit := range []string{
		`replace(convert_from(grant_json, 'UTF8'), '"scope":"session"', '"scope":"always"')`,
		`replace(convert_from(grant_json, 'UTF8'), '"scope":"always"', '"scope":"session","onlyIf":"title=t"')`,
	} {
		if _, err := conn.Exec(ctx, `UPDATE mcphost_session_grants SET grant_json = convert_to(`+edit+`, 'UTF8')`); err != nil {
			t.Fatal(err)
		}
		if r := b.call("create_task", args); r.Status == StatusSuccess {
			t.Fatalf("after %s: through B the call ran by %s, want it asked (and refused)", edit, r.DecidedBy)
		}
		if g := b.gate.Grants(); len(g) != 0 {
			t.Fatalf("after %s: B's grants %+v, want none", edit, g)
		}
	}
}
