package web

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/approver/argview"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/ui/dialog"
)

// maxDescShown bounds a description, as the approver protocol bounds it.
const maxDescShown = 16 << 10

// card is one waiting call as the page shows it. Every string is
// sanitized here; the template escapes it for HTML.
type card struct {
	ID, ArgsHash  string
	Name          string // server/tool, each sanitize.Name
	Server, Tool  string
	Class, Tier   string
	Danger        bool
	Serve, Client string
	Title, Desc   string
	Poison        []string
	Untrusted     bool
	Changed       bool
	ChangedFields []string
	Ask, Favour   []reason
	Args          []argview.Arg
	ArgsNote      string
	Scopes        []scopeChoice
	Typed         string // the word to type at tier 3
}

type reason struct{ Text, Code string }

type scopeChoice struct{ Value, Label string }

var scopeLabels = map[decide.Scope]string{
	decide.ScopeOnce: "Allow once", decide.ScopeArgs: "Allow these arguments", decide.ScopeSession: "Allow this session",
}

// cardOf builds the card of q.
func cardOf(q *approver.Question) card {
	c := card{
		ID: q.ID, ArgsHash: approver.ArgsHash(q.Arguments),
		Server: sanitize.Name(q.Server), Tool: sanitize.Name(q.Tool),
		Class: q.Class.String(), Tier: q.Tier.String(), Danger: q.Tier >= decide.T2,
		Client:    sanitize.Line(q.Client),
		Title:     sanitize.Line(q.Title),
		Desc:      sanitize.Truncate(sanitize.Text(q.Description), maxDescShown),
		Poison:    decide.PoisonFlags(q.Description),
		Untrusted: !q.Trusted,
		Changed:   q.Changed,
	}
	c.Name = c.Server + "/" + c.Tool
	if q.From != nil {
		c.Serve = approver.ServeName(q.From)
	}
	for _, f := range q.ChangedFields {
		c.ChangedFields = append(c.ChangedFields, sanitize.Line(f))
	}
	d := decide.Decision{Verdict: decide.Ask, Tier: q.Tier, Class: q.Class}
	for _, r := range q.Reasons {
		d.Reasons = append(d.Reasons, decide.Reason{Code: r.Code, Text: r.Text})
	}
	ask, favour := d.Split()
	for _, r := range ask {
		c.Ask = append(c.Ask, reasonOf(r))
	}
	for _, r := range favour {
		c.Favour = append(c.Favour, reasonOf(r))
	}
	c.Args, c.ArgsNote = argview.Leaves(q.Arguments)
	for _, s := range []decide.Scope{decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession} {
		if offered(q, s) {
			c.Scopes = append(c.Scopes, scopeChoice{Value: s.String(), Label: scopeLabels[s]})
		}
	}
	if q.Tier >= decide.T3 && len(c.Scopes) > 0 {
		c.Typed = dialog.TypedWord(q.Tool)
	}
	return c
}

func reasonOf(r decide.Reason) reason {
	text := r.Text
	if text == "" {
		text = decide.ReasonText(r.Code)
	}
	return reason{Text: sanitize.Line(text), Code: sanitize.Line(r.Code)}
}

// view is what the page's template draws.
type view struct {
	CSRF    string
	Passkey bool // approvals are signed with an enrolled passkey
	Status  string
	Cards   []card
	Notes   []note
}

func (p *Page) view(s *session) view {
	v := view{CSRF: s.csrf, Passkey: p.enrolled()}
	p.mu.Lock()
	for _, q := range p.waiting {
		v.Cards = append(v.Cards, cardOf(q))
	}
	v.Notes = append(v.Notes, p.notes...)
	p.mu.Unlock()
	v.Status = p.status(len(v.Cards))
	return v
}

// status is the line above the calls: what the page is connected to and
// how many calls wait.
func (p *Page) status(n int) string {
	s := ""
	if p.o.Serves != nil {
		switch hs := p.o.Serves(); len(hs) {
		case 0:
			s = "No mcphost serve runs now; this page connects to each serve as it starts. "
		case 1:
			s = "Connected to " + approver.ServeName(hs[0]) + ". "
		default:
			s = "Connected to " + strconv.Itoa(len(hs)) + " serves. "
		}
	}
	switch n {
	case 0:
		return s + "No call is waiting for approval."
	case 1:
		return s + "1 call waits."
	}
	return s + strconv.Itoa(n) + " calls wait."
}

func (p *Page) page(w http.ResponseWriter, _ *http.Request, s *session) {
	p.render(w, "page", p.view(s))
}

func (p *Page) cards(w http.ResponseWriter, _ *http.Request, s *session) {
	p.render(w, "live", p.view(s))
}

func (p *Page) render(w http.ResponseWriter, name string, v view) {
	var b bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&b, name, v); err != nil {
		http.Error(w, "the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

var pageTmpl = template.Must(template.New("").Funcs(template.FuncMap{
	"pair": func(csrf string, c card) cardView { return cardView{CSRF: csrf, Card: c} },
}).ParseFS(static, "static/page.tmpl"))

// cardView is a card with the session's CSRF token its form carries.
type cardView struct {
	CSRF string
	Card card
}
