package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/approver/argview"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/sanitize"
)

// A team's serve --http cannot ask its people on a loopback page or over
// a per-user socket: each person logs in to serve's own team approval
// page (TeamPage) with the issuer that signs their access tokens, and
// sees there the held calls that are theirs to answer — their own, or
// those the managed policy routes to a group they belong to.

// Route is where the managed policy sends a call for approval: to the
// members of Group (a value of the approver's "groups" claim), and with
// FourEyes never to the person whose call it is.
type Route struct {
	Group    string
	FourEyes bool
}

// Who says who must approve a call routed by r, for the caller to read.
func (r *Route) Who() string {
	w := "a member of " + sanitize.Name(r.Group)
	if r.FourEyes {
		w += " (not you)"
	}
	return w
}

// ErrRouted refuses an answer to a routed call that did not come from
// the team page through a member of its group.
var ErrRouted = errors.New("the managed policy routes this call to an approver group: only a member of it may answer, on serve's team approval page")

// errRoutedAsk is why a routed call is not asked of the caller's form or
// approver: the gate holds it for the group.
var errRoutedAsk = fmt.Errorf("%w: the managed policy routes this call to an approver group", host.ErrNoPerson)

// teamCall is what serve keeps of a held call for the team page: whose it
// is, where it is routed, and what to show.
type teamCall struct {
	caller                    *Caller // nil: a caller without a token
	route                     *Route  // nil: the caller answers it
	server, tool, tier, class string
	text                      string // the question as the form would say it (escaped)
	// args are the call's arguments as held, for the page to list every
	// value with the whole of each one click away; "" when they cannot be
	// shown so (larger than maxViewArgs or not UTF-8): the text has them cut.
	args string
	// notShown says why the approvers were not shown the call (it waits
	// for the team page only); "" when they were, or were not asked to.
	notShown string
}

// teamHeld keeps the held calls' teamCall by approval id. Its mutex is a
// leaf.
type teamHeld struct {
	mu sync.Mutex
	m  map[string]*teamCall
}

// routeOf is the route of a call of tool on server at tier, nil when
// none (Options.Route unset, or it routes nowhere).
func (s *Server) routeOf(server, tool string, tier decide.Tier) *Route {
	if s.o.Route == nil {
		return nil
	}
	return s.o.Route(server, tool, tier)
}

// questionRoute is the route of the call q asks about.
func (s *Server) questionRoute(q *host.Question) *Route {
	if q == nil || q.Tool == nil {
		return nil
	}
	return s.routeOf(q.Server, q.Tool.Name, q.Decision.Tier)
}

// keepTeam records a newly held call's caller, route and text (those no
// longer held are forgotten by pruneHeld).
func (s *Server) keepTeam(ap later.Approval, q *host.Question, c *Caller) {
	tc := &teamCall{caller: c, route: s.questionRoute(q), server: q.Server, tool: q.Tool.Name,
		tier: q.Decision.Tier.String(), class: q.Decision.Class.String(), text: message(q)}
	if len(q.Args) <= maxViewArgs && utf8.Valid(q.Args) {
		tc.args = string(q.Args)
	}
	s.team.mu.Lock()
	if s.team.m == nil {
		s.team.m = map[string]*teamCall{}
	}
	s.team.m[ap.ID] = tc
	s.team.mu.Unlock()
	if d, ok := s.o.Later.(describer); ok {
		// Every replica's team page then shows the call as this one does;
		// one the store cannot keep is shown elsewhere by its name only.
		// Arguments too large for the store are left out there: the
		// other replicas show the text, which has every value cut.
		v := teamView{Class: tc.class, Text: sanitize.Truncate(tc.text, maxViewText), Args: tc.args}
		if b, err := encodeView(v); err == nil && d.Describe(ap.ID, b) != nil && v.Args != "" {
			v.Args = ""
			if b, err := encodeView(v); err == nil {
				_ = d.Describe(ap.ID, b)
			}
		}
	}
}

// describer is a Later that keeps, for every replica, what a person is
// shown of a held call (pgstore.Later.Describe).
type describer interface {
	Describe(id string, shown []byte) error
}

// teamView is what a replica keeps in the store of a held call for the
// team pages of the others (later.Approval.Shown).
type teamView struct {
	Class string `json:"class"`
	Text  string `json:"text"`
	Args  string `json:"args,omitempty"` // the arguments as held (teamCall.args)
}

// encodeView is v as the store keeps it, with <, > and & as they are: the
// page escapes what it shows, and escaping them here could make the
// arguments six times longer.
func encodeView(v teamView) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// maxViewText bounds the question's text kept in the store, within
// pgstore.MaxShown with room for the rest; maxViewArgs bounds the
// arguments a page lists (those an approver is shown,
// approver.MaxArguments), kept in the store too when they fit.
const (
	maxViewText = 48 << 10
	maxViewArgs = 2 << 20
)

// teamCallOf returns what serve kept of the held call id, nil if none.
// A call another replica holds on the store they share is rebuilt from
// what the store keeps of it (storedTeamCall).
func (s *Server) teamCallOf(id string) *teamCall {
	tc := s.localTeamCall(id)
	if tc == nil && s.o.Later != nil {
		if ap, ok := s.o.Later.Get(id); ok {
			tc = s.storedTeamCall(ap)
		}
	}
	return tc
}

// localTeamCall is what this serve kept of the held call id, nil if none.
func (s *Server) localTeamCall(id string) *teamCall {
	s.team.mu.Lock()
	defer s.team.mu.Unlock()
	return s.team.m[id]
}

// storedTeamCall is the team page's view of a call held by another
// replica: its caller from the person its approval is bound to (a call
// of no person's is no one's here: nil), its route by the managed policy,
// which every replica reads alike, and what the replica that held it
// described (teamView), bounded and sanitized again since it comes from
// the store, or else its name only.
func (s *Server) storedTeamCall(ap later.Approval) *teamCall {
	c := ap.Call
	key, clientID, ok := host.LaterCaller(c.Client)
	if !ok {
		return nil
	}
	issuer, subject, ok := strings.Cut(key, "\n")
	if !ok {
		return nil
	}
	var tier decide.Tier
	if tier.UnmarshalText([]byte(c.Tier)) != nil {
		return nil
	}
	caller := &Caller{Person: audit.Person{Issuer: bound(issuer, maxSubject), Subject: bound(subject, maxSubject)},
		ClientID: bound(clientID, maxClientID), id: key}
	tc := &teamCall{caller: caller, route: s.routeOf(c.Server, c.Tool, tier), server: c.Server, tool: c.Tool,
		tier: c.Tier, text: fmt.Sprintf("%s/%s, held by another replica of mcphost serve", sanitize.Name(c.Server), sanitize.Name(c.Tool))}
	var v teamView
	if len(ap.Shown) > 0 && json.Unmarshal(ap.Shown, &v) == nil && v.Text != "" {
		tc.class = bound(v.Class, maxName)
		tc.text = sanitize.Truncate(sanitize.Text(v.Text), maxViewText) + "\n(held by another replica of mcphost serve)"
		// The arguments are shown only as the ones the approval binds:
		// any others the store holds are not what would run. (Decoded
		// from JSON, they are valid UTF-8.)
		if len(v.Args) <= maxViewArgs && decide.ArgsHash(json.RawMessage(v.Args)) == c.ArgsHash {
			tc.args = v.Args
		}
	}
	return tc
}

// routedHeld reports whether the held call id is routed to a group.
func (s *Server) routedHeld(id string) bool {
	if tc := s.teamCallOf(id); tc != nil {
		return tc.route != nil
	}
	if s.o.Later == nil {
		return false
	}
	ap, ok := s.o.Later.Get(id)
	return ok && s.routedCall(ap.Call)
}

// teamApprover is a person logged in to the team page.
type teamApprover struct {
	person audit.Person // for the record: escaped and bounded
	id     string       // issuer and subject as the ID token has them
	groups []string
}

// mayAnswer says whether a may see and answer tc, and if not, why.
func (a *teamApprover) mayAnswer(tc *teamCall) (bool, string) {
	isCaller := tc.caller != nil && tc.caller.key() == a.id
	if tc.route == nil {
		if isCaller {
			return true, ""
		}
		return false, "this call is not yours: only the person who made it may answer it"
	}
	if !slices.Contains(a.groups, tc.route.Group) {
		return false, "the managed policy routes this call to " + sanitize.Name(tc.route.Group) + ", and you are not a member"
	}
	if tc.route.FourEyes && isCaller {
		return false, "the managed policy asks for four eyes: another member of " + sanitize.Name(tc.route.Group) + " must approve your own call"
	}
	return true, ""
}

// answerTeam records a's answer to the held call id: only when a may
// answer it, through the gate that holds it, on the web channel, naming a
// as the approver. An approval of a tier-3 call needs confirm to be the
// raw tool name, as everywhere a person approves one.
func (s *Server) answerTeam(id string, a *teamApprover, approve bool, confirm, reason string) error {
	tc := s.teamCallOf(id)
	if tc == nil {
		return later.ErrUnknown
	}
	if ok, why := a.mayAnswer(tc); !ok {
		return fmt.Errorf("%w: %s", errNotYours, why)
	}
	if approve && tc.tier == decide.T3.String() && confirm != tc.tool {
		return errConfirm
	}
	g := s.answerGate(id)
	if g == nil {
		return later.ErrUnknown
	}
	p := a.person
	ans := host.Answer{Approve: approve, Scope: decide.ScopeOnce, Via: audit.ChannelWeb, By: &p}
	if !approve {
		ans.Reason = "denied by " + personName(p) + " on the team approval page"
		if reason != "" {
			ans.Reason += ": " + reason
		}
	}
	return g.AnswerLater(id, ans)
}

// errNotYours refuses an answer from a person who may not give it.
var errNotYours = errors.New("you may not answer this call")

// errConfirm refuses an approval of a tier-3 call without its raw tool
// name typed.
var errConfirm = errors.New("to approve an elevated (tier-3) call, type the tool's raw name exactly; nothing was approved")

func personName(p audit.Person) string {
	switch {
	case p.Name != "":
		return p.Name
	case p.Email != "":
		return p.Email
	}
	return p.Subject
}

// TeamOptions configure the team approval page.
type TeamOptions struct {
	// Issuer is the OpenID provider people log in with: the issuer of
	// serve's access tokens (AuthOptions.Issuer), so that a login and a
	// token name the same person alike.
	Issuer string
	// ClientID (and, for a confidential client, ClientSecret) is the page's
	// own client at the issuer, registered with the redirect URI
	// BaseURL + "/approve/callback".
	ClientID, ClientSecret string
	// BaseURL is serve's origin as browsers reach it ("https://mcp.example.com").
	BaseURL string
	// Secure marks the cookies Secure: serve runs TLS (or sits behind a
	// proxy that does).
	Secure bool
	// HTTPClient reaches the issuer (nil: a client with a 10s timeout).
	HTTPClient *http.Client
	// Store keeps the logins under way and the sessions (nil: this
	// process's memory). Replicas on one store give it the store's
	// (pgstore.TeamPage), so a browser may reach any of them.
	Store TeamStore
}

// TeamPath is where the team page is served.
const TeamPath = "/approve/"

// Bounds of the team page's state: logins under way and sessions.
const (
	maxTeamLogins   = 256
	maxTeamSessions = 1024
	teamLoginTTL    = 10 * time.Minute
	teamSessionTTL  = 8 * time.Hour
	maxGroups       = 256
	maxGroupName    = 128 // as config's "approvers" allow
	maxReason       = 500
)

// Cookie names: the browser's login under way, and its session.
const (
	loginCookie   = "mcphost-login"
	sessionCookie = "mcphost-approve"
)

// TeamPage is serve's team approval page. Make it with NewTeamPage.
type TeamPage struct {
	s        *Server
	o        TeamOptions
	conf     *oauth2.Config
	verifier *oidc.IDTokenVerifier
	provider *oidc.Provider
	hc       *http.Client
	origin   string

	store TeamStore // logins under way (by state) and sessions (by cookie)
}

// teamSession is a logged-in person's session on the page.
type teamSession struct {
	who     *teamApprover
	csrf    string
	expires time.Time
}

// CheckTeamOptions reports the first thing wrong with o.
func CheckTeamOptions(o TeamOptions) error {
	if o.ClientID == "" {
		return errors.New(`the team approval page needs its own client at the issuer: set "approveClientId" in "serve"."auth" (registered with the redirect URI <serve's URL>/approve/callback)`)
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("the team approval page's base URL %q is not an origin like https://mcp.example.com", o.BaseURL)
	}
	return nil
}

// NewTeamPage discovers the issuer and returns the page of s. ctx bounds
// discovery only.
func (s *Server) NewTeamPage(ctx context.Context, o TeamOptions) (*TeamPage, error) {
	if err := CheckTeamOptions(o); err != nil {
		return nil, err
	}
	if s.o.Later == nil {
		return nil, errors.New("the team approval page shows held calls, and this serve holds none (Options.Later)")
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	dctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, hc), 30*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, o.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the issuer %s for the team approval page: %w", o.Issuer, err)
	}
	base := strings.TrimSuffix(o.BaseURL, "/")
	t := &TeamPage{s: s, o: o, provider: p, hc: hc, origin: base,
		conf: &oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Endpoint: p.Endpoint(),
			RedirectURL: base + TeamPath + "callback", Scopes: []string{oidc.ScopeOpenID, "profile", "email"}},
		verifier: p.Verifier(&oidc.Config{ClientID: o.ClientID}),
		store:    o.Store}
	if t.store == nil {
		t.store = newMemTeamStore()
	}
	s.teamPage.Store(true) // a caller's held call may wait for this page alone
	return t, nil
}

// Link is the page's address of the held call id.
func (t *TeamPage) Link(id string) string { return t.origin + TeamPath + "#call-" + id }

// Handler serves the page under TeamPath.
func (t *TeamPage) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+TeamPath+"{$}", t.list)
	mux.HandleFunc("GET "+TeamPath+"login", t.login)
	mux.HandleFunc("GET "+TeamPath+"callback", t.callback)
	mux.HandleFunc("POST "+TeamPath+"answer", t.answer)
	mux.HandleFunc("POST "+TeamPath+"logout", t.logout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with the page's own forms, which sameOrigin refuses.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		mux.ServeHTTP(w, r)
	})
}

func (t *TeamPage) cookie(name, value string, ttl time.Duration) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: TeamPath, MaxAge: int(ttl / time.Second), HttpOnly: true,
		Secure: t.o.Secure, SameSite: http.SameSiteLaxMode}
}

// login starts the authorization code flow with PKCE: the state names
// the login, a cookie binds it to this browser, and the nonce binds the
// ID token to it.
func (t *TeamPage) login(w http.ResponseWriter, r *http.Request) {
	state, binding, nonce, verifier := rand.Text(), rand.Text(), rand.Text(), oauth2.GenerateVerifier()
	now := time.Now()
	// The oldest login under way goes when there are too many: refusing
	// new ones would let anyone who opens the page often enough keep
	// everyone out.
	rec := teamLoginRec{Binding: binding, Nonce: nonce, Verifier: verifier, Expires: now.Add(teamLoginTTL)}
	if err := t.store.Put(teamKindLogin, state, marshal(rec), rec.Expires, maxTeamLogins); err != nil {
		http.Error(w, "Service Unavailable: the login could not be kept; try again", http.StatusServiceUnavailable)
		return
	}
	http.SetCookie(w, t.cookie(loginCookie, binding, teamLoginTTL))
	http.Redirect(w, r, t.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)), http.StatusFound)
}

// idClaims are what the page reads of an ID token (or userinfo).
type idClaims struct {
	Subject   string   `json:"sub"`
	Nonce     string   `json:"nonce"`
	Name      string   `json:"name"`
	Preferred string   `json:"preferred_username"`
	Email     string   `json:"email"`
	Groups    []string `json:"groups"`
}

// callback finishes a login: the state must name a login this browser
// started (its cookie), not used before and not expired; the code is
// redeemed with its PKCE verifier; the ID token must verify against the
// issuer's keys for this client and carry the login's nonce.
func (t *TeamPage) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	var l *teamLoginRec
	if b, ok, err := t.store.Take(teamKindLogin, state, time.Now()); err == nil && ok { // one use, whatever comes of it
		var rec teamLoginRec
		if json.Unmarshal(b, &rec) == nil {
			l = &rec
		}
	}
	c, err := r.Cookie(loginCookie)
	switch {
	case l == nil || time.Now().After(l.Expires):
		http.Error(w, "Forbidden: this login was not started here, was used already, or took too long; open "+TeamPath+" to log in again", http.StatusForbidden)
		return
	case err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(l.Binding)) != 1:
		http.Error(w, "Forbidden: this login was started in another browser; open "+TeamPath+" to log in here", http.StatusForbidden)
		return
	case q.Get("error") != "":
		http.Error(w, "Forbidden: the issuer refused the login: "+bound(q.Get("error"), 100), http.StatusForbidden)
		return
	}
	ctx := oidc.ClientContext(r.Context(), t.hc)
	tok, err := t.conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(l.Verifier))
	if err != nil {
		http.Error(w, "Forbidden: the login's code could not be redeemed at the issuer", http.StatusForbidden)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := t.verifier.Verify(ctx, raw)
	if err != nil {
		http.Error(w, "Forbidden: the issuer's ID token does not check out", http.StatusForbidden)
		return
	}
	var cl idClaims
	if err := idt.Claims(&cl); err != nil || cl.Subject == "" ||
		subtle.ConstantTimeCompare([]byte(cl.Nonce), []byte(l.Nonce)) != 1 {
		http.Error(w, "Forbidden: the ID token was not issued for this login", http.StatusForbidden)
		return
	}
	if cl.Groups == nil || cl.Name == "" && cl.Preferred == "" && cl.Email == "" {
		// Some issuers keep groups (or the profile) out of the ID token:
		// ask userinfo, about the same subject.
		if ui, err := t.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil && ui.Subject == cl.Subject {
			var more idClaims
			if ui.Claims(&more) == nil {
				if cl.Groups == nil {
					cl.Groups = more.Groups
				}
				if cl.Name == "" && cl.Preferred == "" && cl.Email == "" {
					cl.Name, cl.Preferred, cl.Email = more.Name, more.Preferred, more.Email
				}
			}
		}
	}
	// Kept bounded: a group name longer than any route can name is
	// dropped, never cut (cut, it could become a group it is not).
	cl.Groups = slices.DeleteFunc(cl.Groups, func(g string) bool { return g == "" || len(g) > maxGroupName })
	if len(cl.Groups) > maxGroups {
		cl.Groups = cl.Groups[:maxGroups]
	}
	name := cl.Name
	if name == "" {
		name = cl.Preferred
	}
	who := &teamApprover{id: t.o.Issuer + "\n" + cl.Subject, groups: cl.Groups,
		person: audit.Person{Issuer: t.o.Issuer, Subject: bound(cl.Subject, maxSubject), Name: bound(name, maxName), Email: bound(cl.Email, maxEmail)}}
	sid := rand.Text() + rand.Text()
	now := time.Now()
	sess := &teamSession{who: who, csrf: rand.Text(), expires: now.Add(teamSessionTTL)}
	if err := t.store.Put(teamKindSession, sid, marshal(sessionRec(sess)), sess.expires, maxTeamSessions); err != nil {
		http.Error(w, "Service Unavailable: the session could not be kept; log in again", http.StatusServiceUnavailable)
		return
	}
	http.SetCookie(w, t.cookie(loginCookie, "", -time.Second))
	http.SetCookie(w, t.cookie(sessionCookie, sid, teamSessionTTL))
	http.Redirect(w, r, TeamPath, http.StatusSeeOther)
}

// session returns the logged-in session of r, nil if none.
func (t *TeamPage) session(r *http.Request) *teamSession {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	b, ok, err := t.store.Get(teamKindSession, c.Value, time.Now())
	if err != nil || !ok {
		return nil
	}
	var rec teamSessionRec
	if json.Unmarshal(b, &rec) != nil {
		return nil
	}
	return rec.session()
}

// shownCall is one card of the page.
type shownCall struct {
	ID, Server, Tool, Tier, Class, Caller, Route, Expires, Text string
	Elevated                                                    bool // tier 3: the tool's name must be typed to approve
	Args                                                        []argview.Arg
	ArgsNote                                                    string
}

// visible lists the held calls who may answer, oldest first (as Waiting
// lists them).
func (t *TeamPage) visible(who *teamApprover) []shownCall {
	var out []shownCall
	for _, ap := range t.s.o.Later.Waiting() {
		tc := t.s.localTeamCall(ap.ID)
		if tc == nil {
			tc = t.s.storedTeamCall(ap) // held by another replica: no second look at the store
		}
		if tc == nil {
			continue
		}
		if ok, _ := who.mayAnswer(tc); !ok {
			continue
		}
		sc := shownCall{ID: ap.ID, Server: sanitize.Name(tc.server), Tool: sanitize.Name(tc.tool), Tier: tc.tier, Class: tc.class,
			Expires: ap.Expires.UTC().Format("15:04:05 UTC"), Text: tc.text, Caller: "no login", Elevated: tc.tier == decide.T3.String()}
		if tc.args != "" {
			sc.Args, sc.ArgsNote = argview.Leaves(tc.args)
		}
		if tc.caller != nil {
			sc.Caller = personName(tc.caller.Person) + " <" + tc.caller.Person.Email + "> through " + tc.caller.ClientID
		}
		if tc.route != nil {
			sc.Route = "routed to " + sanitize.Name(tc.route.Group)
			if tc.route.FourEyes {
				sc.Route += " (four eyes)"
			}
		}
		out = append(out, sc)
	}
	return out
}

var teamTmpl = htmltemplate.Must(htmltemplate.New("team").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mcphost: calls waiting for approval</title></head>
<body>
<h1>Calls waiting for your approval</h1>
<p>Logged in as {{.Who}}.{{if .Note}} <strong id="note">{{.Note}}</strong>{{end}}</p>
<form method="post" action="logout"><input type="hidden" name="csrf" value="{{.CSRF}}"><button type="submit">Log out</button></form>
{{range .Calls}}<section class="call" id="call-{{.ID}}" data-id="{{.ID}}">
<h2>{{.Tool}} on {{.Server}}</h2>
<p>Tier {{.Tier}}, class {{.Class}}. Called by {{.Caller}}. {{.Route}} Waits until {{.Expires}}.</p>
<pre>{{.Text}}</pre>
{{if .Args}}<h3>Every argument{{if .ArgsNote}} ({{.ArgsNote}}){{end}}</h3>
<table class="args">{{range .Args}}<tr><th>{{if .Path}}<code>{{.Path}}</code>{{end}}</th><td>{{if .Full}}<details><summary><code class="short">{{.Short}}</code> show all {{.Size}} bytes</summary><pre class="full">{{.Full}}</pre></details>{{else}}<code class="value">{{.Short}}</code>{{end}}</td></tr>{{end}}</table>
{{end}}<form method="post" action="answer">
<input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}">
{{if .Elevated}}<label>To approve this elevated call, type the tool's name ({{.Tool}}) <input name="confirm" autocomplete="off" spellcheck="false"></label>
{{end}}<label>Reason (for a denial) <input name="reason" maxlength="500"></label>
<button type="submit" name="decision" value="approve">Approve once</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form></section>
{{else}}<p id="none">No call waits for you.</p>{{end}}
</body></html>
`))

// list shows the logged-in person the held calls they may answer; a
// browser without a session is sent to log in.
func (t *TeamPage) list(w http.ResponseWriter, r *http.Request) {
	s := t.session(r)
	if s == nil {
		http.Redirect(w, r, TeamPath+"login", http.StatusFound)
		return
	}
	// The note is one of the page's own, named by code: a link cannot
	// make the page say anything else.
	t.render(w, s, teamNotes[r.URL.Query().Get("done")])
}

// teamNotes are what the page says after an answer.
var teamNotes = map[string]string{
	"approved": "Approved: the call runs once when its client makes it again.",
	"denied":   "Denied: its client is told so when it makes the call again.",
}

func (t *TeamPage) render(w http.ResponseWriter, s *teamSession, note string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	who := personName(s.who.person)
	if len(s.who.groups) > 0 {
		gs := make([]string, len(s.who.groups))
		for i, g := range s.who.groups {
			gs[i] = sanitize.Name(g)
		}
		who += " (groups: " + strings.Join(gs, ", ") + ")"
	}
	_ = teamTmpl.Execute(w, map[string]any{"Who": who, "CSRF": s.csrf, "Calls": t.visible(s.who), "Note": note})
}

// sameOrigin reports whether a POST comes from the page's own origin: a
// browser names it in Origin (or, failing that, Referer is checked when
// sent); a request with neither is judged by its CSRF token alone.
func (t *TeamPage) sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		return o == t.origin
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		return strings.HasPrefix(ref, t.origin+"/")
	}
	return true
}

// checkPost checks a POST of the page: a logged-in session, from the
// page's origin, with the session's CSRF token. It answers the request
// and returns nil when any is missing.
func (t *TeamPage) checkPost(w http.ResponseWriter, r *http.Request) *teamSession {
	s := t.session(r)
	if s == nil {
		http.Error(w, "Forbidden: log in on "+TeamPath+" first", http.StatusForbidden)
		return nil
	}
	if !t.sameOrigin(r) {
		http.Error(w, "Forbidden: the answer came from another site", http.StatusForbidden)
		return nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "Bad Request: the form could not be read", http.StatusBadRequest)
		return nil
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		http.Error(w, "Forbidden: the form's token is missing or wrong; reload the page and answer again", http.StatusForbidden)
		return nil
	}
	return s
}

// logout ends the browser's session.
func (t *TeamPage) logout(w http.ResponseWriter, r *http.Request) {
	if t.checkPost(w, r) == nil {
		return
	}
	c, _ := r.Cookie(sessionCookie)
	_ = t.store.Drop(teamKindSession, c.Value) // a store out of reach: the cookie goes, the session lapses
	http.SetCookie(w, t.cookie(sessionCookie, "", -time.Second))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "Logged out of mcphost's team approval page. Open "+TeamPath+" to log in again.\n")
}

// answer takes an answer to a held call: only with the session's cookie,
// its CSRF token and from the page's origin, and only from a person who
// may answer that call.
func (t *TeamPage) answer(w http.ResponseWriter, r *http.Request) {
	s := t.checkPost(w, r)
	if s == nil {
		return
	}
	var approve bool
	switch r.PostForm.Get("decision") {
	case "approve":
		approve = true
	case "deny":
	default:
		http.Error(w, "Bad Request: decision must be approve or deny", http.StatusBadRequest)
		return
	}
	id := r.PostForm.Get("id")
	err := t.s.answerTeam(id, s.who, approve, r.PostForm.Get("confirm"), bound(r.PostForm.Get("reason"), maxReason))
	switch {
	case errors.Is(err, errConfirm):
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	case errors.Is(err, errNotYours):
		http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
		return
	case errors.Is(err, later.ErrUnknown), errors.Is(err, later.ErrExpired), errors.Is(err, later.ErrAnswered):
		http.Error(w, "Conflict: "+err.Error(), http.StatusConflict)
		return
	case err != nil:
		http.Error(w, "Forbidden: "+bound(err.Error(), 300), http.StatusForbidden)
		return
	}
	done := "denied"
	if approve {
		done = "approved"
	}
	http.Redirect(w, r, TeamPath+"?done="+done, http.StatusSeeOther)
}

// makeRoom drops the entries of m that expired by now and, when m still
// holds max, the one closest to its end, so that one more fits.
func makeRoom[V any](m map[string]V, expires func(V) time.Time, now time.Time, max int) {
	for k, v := range m {
		if now.After(expires(v)) {
			delete(m, k)
		}
	}
	if len(m) < max {
		return
	}
	var oldest string
	for k, v := range m {
		if oldest == "" || expires(v).Before(expires(m[oldest])) {
			oldest = k
		}
	}
	delete(m, oldest)
}
