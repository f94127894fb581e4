package approver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcphost/mcphost/approver/passkey"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
)

// ErrNoApprover is the error of Ask when no approver is connected, or when
// the last one disconnected while the call waited. It wraps
// host.ErrNoPerson, so the gate records the call as blocked (it needed
// approval and no one could be asked), not as denied by a person.
var ErrNoApprover = fmt.Errorf("%w: no `mcphost approve` is connected", host.ErrNoPerson)

// Broker is the gate's Asker for serve.
var _ host.Asker = (*Broker)(nil)

// ErrBusy is returned by Listen when another process holds the approver
// socket of the directory.
var ErrBusy = errors.New("another mcphost serve already listens for approvers")

// Options configure a Broker.
type Options struct {
	// Label says which serve this is, in the approver's status line (for
	// example the client it serves). Bounded and sanitized by the approver.
	Label string
	// PeerUID returns the user id of the process at the other end of a
	// connection. Nil: the operating system's peer credentials
	// (SO_PEERCRED, LOCAL_PEERCRED); where there are none, every
	// connection is refused. Tests inject it.
	PeerUID func(c *net.UnixConn) (int, error)
	// UID is the user whose approvers are accepted. Negative or zero with
	// PeerUID nil: this process's user (os.Getuid()).
	UID int
	// HelloTimeout bounds how long a new connection may take to say hello
	// (default 10s); OutQueue bounds the lines queued for one slow approver
	// before it is dropped (default 256).
	HelloTimeout time.Duration
	OutQueue     int
	// MaxWaiting bounds the bytes of the questions waiting at once, asked
	// and held (default DefaultMaxWaiting): a question that would pass it
	// is not shown, as one whose arguments are too large is not, so a
	// client cannot grow serve's memory without end through calls it
	// leaves waiting.
	MaxWaiting int
	// Passkeys checks the passkey assertion an approval carries
	// (Answer.Passkey) against the question's own nonce. Nil: an approval
	// that carries one approves nothing, since it cannot be checked.
	Passkeys PasskeyVerifier
}

// PasskeyVerifier checks a passkey assertion of the call b, signed over
// the challenge made of b, nonce and expires (*passkey.Verifier).
type PasskeyVerifier interface {
	Verify(b passkey.Binding, nonce []byte, expires time.Time, response []byte) error
}

// Broker is serve's side of the approver socket. It implements host.Asker
// for the gate: Ask sends the question to every connected approver and
// returns the first answer bound to it.
//
// Disconnects: a question is sent to every approver connected when it is
// asked and to every one that connects while it waits, so when one approver
// disconnects, the questions it held still wait for the others; when the
// last one disconnects, every waiting question is denied at once with
// ErrNoApprover (nothing waits for an approver that may never come back).
type Broker struct {
	path    string
	o       Options
	ln      *net.UnixListener
	unlock  func()
	prefix  string
	done    chan struct{}
	wg      sync.WaitGroup
	closeMu sync.Once

	mu      sync.Mutex
	seq     uint64
	conns   map[*conn]struct{}
	pending map[string]*pending
	order   []string // pending ids, oldest first
	waiting int      // the bytes of the pending questions' lines
}

// DefaultMaxWaiting is Options.MaxWaiting's default, 64 MiB: thousands of
// questions of a few kilobytes, or a dozen with the largest arguments an
// approver is shown.
const DefaultMaxWaiting = 64 << 20

// pending is one question waiting for its answer.
type pending struct {
	id     string
	q      *host.Question
	line   []byte
	hash   string
	msg    *Question        // as sent: what a passkey approval is bound to
	nonce  []byte           // the question's own, for a passkey approval
	answer chan host.Answer // buffered; receives at most one value
	fail   chan error       // buffered; receives at most one value
	// later, for a call held for later approval (Post), takes the answer
	// instead of answer; its error is what the approver is told.
	later func(host.Answer) error
}

// SocketDir is the directory of the approver sockets of a state
// directory: 0700, this user's, one socket in it for every serve running.
func SocketDir(stateDir string) string {
	return filepath.Join(stateDir, "approver")
}

// socketGlob matches the sockets of SocketDir.
const socketGlob = "serve-*.sock"

// SocketPath is where this process's approver socket lives, in SocketDir:
// each serve has its own, so a second serve of the person is reached by
// approvers as the first is.
func SocketPath(stateDir string) string {
	return filepath.Join(SocketDir(stateDir), "serve-"+strconv.Itoa(os.Getpid())+".sock")
}

// Sockets lists the approver sockets in dir (SocketDir), one for each
// serve that runs or that died without removing its own.
func Sockets(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, socketGlob))
}

// Listen opens the approver socket at path (see SocketPath): it creates
// the socket's directory with mode 0700 (or tightens it), takes the
// directory's lock so that one serve owns it, replaces a socket file left
// by a serve that died, and creates the socket with mode 0600. A socket
// held by a live serve is never taken over: Listen returns an error
// wrapping ErrBusy.
func Listen(path string, o Options) (*Broker, error) {
	if o.PeerUID == nil {
		o.PeerUID = peerUID
		if o.UID <= 0 {
			o.UID = os.Getuid()
		}
	}
	if o.HelloTimeout <= 0 {
		o.HelloTimeout = 10 * time.Second
	}
	if o.OutQueue <= 0 {
		o.OutQueue = 256
	}
	ln, unlock, err := listen(path)
	if err != nil {
		return nil, err
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	b := &Broker{
		path: path, o: o, ln: ln, unlock: unlock, prefix: hex.EncodeToString(r[:]),
		done: make(chan struct{}), conns: map[*conn]struct{}{}, pending: map[string]*pending{},
	}
	b.wg.Go(b.accept)
	return b, nil
}

// Path returns the socket's path.
func (b *Broker) Path() string { return b.path }

// Waiting reports whether at least one approver is connected (has said
// hello), so that a question asked now would reach a person.
func (b *Broker) Waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.anyReady()
}

// Close stops listening, disconnects every approver, denies every waiting
// question, and releases the socket (its file is removed).
func (b *Broker) Close() error {
	var err error
	b.closeMu.Do(func() {
		close(b.done)
		err = b.ln.Close()
		b.mu.Lock()
		for c := range b.conns {
			c.close()
		}
		b.mu.Unlock()
		b.wg.Wait()
		b.mu.Lock()
		for _, p := range b.pending {
			p.fail <- errors.New("mcphost serve stopped before the call was answered")
		}
		b.pending, b.order, b.waiting = map[string]*pending{}, nil, 0
		b.mu.Unlock()
		b.unlock()
	})
	return err
}

// Ask sends q to every connected approver and waits for the first answer
// bound to it, or for ctx. With no approver connected it returns
// ErrNoApprover at once. The answer's scope is one of q.Scopes: a scope
// not offered becomes ScopeOnce, and with no scope offered at all the
// answer is a denial.
func (b *Broker) Ask(ctx context.Context, q *host.Question) (host.Answer, error) {
	if err := showable(q.Args); err != nil {
		return host.Answer{}, fmt.Errorf("%w: %w", host.ErrNoPerson, err)
	}
	b.mu.Lock()
	select {
	case <-b.done:
		b.mu.Unlock()
		return host.Answer{}, errors.New("mcphost serve is stopping")
	default:
	}
	if !b.anyReady() {
		b.mu.Unlock()
		return host.Answer{}, ErrNoApprover
	}
	b.seq++
	id := b.prefix + "-" + strconv.FormatUint(b.seq, 10)
	msg, nonce := questionFor(id, q)
	line, err := encodeLine(msg)
	if err != nil {
		b.mu.Unlock()
		return host.Answer{}, fmt.Errorf("%w: the question cannot be sent to an approver: %v", host.ErrNoPerson, err)
	}
	if err := b.room(len(line)); err != nil {
		b.mu.Unlock()
		return host.Answer{}, fmt.Errorf("%w: %w", host.ErrNoPerson, err)
	}
	p := &pending{id: id, q: q, line: line, hash: ArgsHash(msg.Arguments), msg: msg, nonce: nonce,
		answer: make(chan host.Answer, 1), fail: make(chan error, 1)}
	b.add(p)
	for c := range b.conns {
		if c.ready {
			c.send(line)
		}
	}
	b.mu.Unlock()

	select {
	case a := <-p.answer:
		return a, nil // its Via set by answer, for an asker that passes it on (serve's)
	case err := <-p.fail:
		return host.Answer{}, err
	case <-ctx.Done():
		b.mu.Lock()
		if b.remove(id) {
			b.withdraw(id, "the call was cancelled", nil)
		}
		b.mu.Unlock()
		// An answer may have won the race; a cancelled call is denied
		// either way, as the Asker contract says.
		return host.Answer{}, ctx.Err()
	}
}

// ErrStopping is Post's error once the broker is closing: nothing posted
// then would be shown.
var ErrStopping = errors.New("the approver socket is closing (mcphost is stopping)")

// notShown is Post's error: why the approvers cannot be shown a held call.
func notShown(err error) error {
	return fmt.Errorf("`mcphost approve` and the approval page cannot be shown it: %w", err)
}

// Post shows q to every approver, those connected now and those that
// connect later, as a call held for a person's later approval under id
// (host.GateOptions.Later) until expires. No one waits for its answer: the
// first answer bound to it goes to answer (the gate's AnswerLater, with
// the channel audit.ChannelApprove), and when answer refuses it the approver
// hears why. It stays when the approvers disconnect, and is withdrawn
// when it expires or is answered. Posting an id that is shown already
// changes nothing.
//
// Its error says that no approver will ever see the call, and why:
// arguments an approver cannot be shown as they are (as Ask refuses them),
// questions waiting already that leave no room for it (Options.MaxWaiting),
// or ErrStopping.
func (b *Broker) Post(id string, q *host.Question, expires time.Time, answer func(host.Answer) error) error {
	if err := showable(q.Args); err != nil {
		return notShown(err)
	}
	msg, nonce := questionFor(id, q)
	msg.Later, msg.Expires = true, expires.UTC().Format(time.RFC3339)
	line, err := encodeLine(msg)
	if err != nil {
		return notShown(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.done:
		return notShown(ErrStopping)
	default:
	}
	if _, dup := b.pending[id]; dup {
		return nil
	}
	if err := b.room(len(line)); err != nil {
		return notShown(err)
	}
	b.add(&pending{id: id, q: q, line: line, hash: ArgsHash(msg.Arguments), msg: msg, nonce: nonce,
		answer: make(chan host.Answer, 1), fail: make(chan error, 1), later: answer})
	for c := range b.conns {
		if !c.ready {
			continue // it gets every waiting question when it says hello
		}
		c.send(line)
	}
	time.AfterFunc(time.Until(expires), func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.remove(id) {
			b.withdraw(id, "its approval expired", nil)
		}
	})
	return nil
}

// showable says why arguments cannot be put to an approver as they are,
// or returns nil.
func showable(args json.RawMessage) error {
	if len(args) > MaxArguments {
		return fmt.Errorf("the arguments (%d bytes) are larger than an approver shows (%d bytes)", len(args), MaxArguments)
	}
	if !utf8.Valid(args) {
		// JSON would carry them with replacement characters: the person
		// would approve a text that is not what runs.
		return errors.New("the arguments are not valid UTF-8, so an approver cannot be shown them as they are")
	}
	return nil
}

// questionFor is q as the protocol sends it, every server string bounded,
// with a nonce of its own for a passkey approval.
func questionFor(id string, q *host.Question) (*Question, []byte) {
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	m := &Question{Type: TypeQuestion, ID: id, Server: bound(q.Server, maxName), Trusted: q.Trusted,
		Nonce: hex.EncodeToString(nonce),
		Tier:  q.Decision.Tier, Class: q.Decision.Class, Arguments: string(q.Args),
		Scopes: append([]decide.Scope{}, q.Scopes...), Changed: q.Changed}
	if t := q.Tool; t != nil {
		m.Tool, m.Title, m.Description = bound(t.Name, maxName), bound(t.Title, maxTitle), bound(t.Description, maxDescription)
		m.Definition = bound(t.Hash, maxName)
		if host.OwnWords(t) {
			// A read's or a prompt's stand-in: its words are mcphost's,
			// and the protocol's title and description are the server's.
			m.Title, m.Description = "", ""
		}
	}
	for i, r := range q.Decision.Reasons {
		if i == maxReasons {
			break
		}
		m.Reasons = append(m.Reasons, Reason{Code: bound(r.Code, maxName), Text: bound(r.Text, maxReasonText)})
	}
	for i, f := range q.ChangedFields {
		if i == maxFields {
			break
		}
		m.ChangedFields = append(m.ChangedFields, bound(f, maxFieldLen))
	}
	if c := q.Client; c != nil && c.Name != "" {
		m.Client = bound(strings.TrimSpace(c.Name+" "+c.Version), maxName)
	}
	return m, nonce
}

// anyReady reports whether an approver has said hello. b.mu is held.
func (b *Broker) anyReady() bool {
	for c := range b.conns {
		if c.ready {
			return true
		}
	}
	return false
}

// room says why a question of n bytes cannot wait beside those waiting
// already, or returns nil. b.mu is held.
func (b *Broker) room(n int) error {
	limit := cmp.Or(b.o.MaxWaiting, DefaultMaxWaiting)
	if b.waiting+n > limit {
		return fmt.Errorf("the calls waiting for a person already take %d of the %d bytes an approver is shown at once: answer or let some expire first", b.waiting, limit)
	}
	return nil
}

// add puts p on the queue. b.mu is held.
func (b *Broker) add(p *pending) {
	b.pending[p.id] = p
	b.order = append(b.order, p.id)
	b.waiting += len(p.line)
}

// remove takes a question off the queue and reports whether it was there.
// b.mu is held.
func (b *Broker) remove(id string) bool {
	p, ok := b.pending[id]
	if !ok {
		return false
	}
	b.waiting -= len(p.line)
	delete(b.pending, id)
	b.order = slices.DeleteFunc(b.order, func(x string) bool { return x == id })
	return true
}

// withdraw tells every approver but except that the question is gone.
// b.mu is held.
func (b *Broker) withdraw(id, why string, except *conn) {
	line, err := encodeLine(Withdrawn{Type: TypeWithdrawn, ID: id, Why: why})
	if err != nil {
		return
	}
	for c := range b.conns {
		if c != except && c.ready {
			c.send(line)
		}
	}
}

// answer applies an approver's answer. It returns why the answer approved
// nothing, or "" when it was taken.
func (b *Broker) answer(from *conn, a *Answer) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pending[a.ID]
	if !ok {
		return fmt.Sprintf("no call with id %q is waiting: it was answered elsewhere, withdrawn, or never asked", a.ID)
	}
	if a.ArgsHash != p.hash {
		return fmt.Sprintf("the answer's argsHash does not match the arguments of call %q: it approves nothing", a.ID)
	}
	ans, problem := hostAnswer(a, p.q.Scopes)
	if problem != "" {
		return problem
	}
	if ans.Via, problem = b.channel(p, a); problem != "" {
		return problem
	}
	if p.later != nil {
		if ans.Args != nil {
			return "a call held for later approval cannot be edited: approve or deny it as it is"
		}
		// The gate writes the answer to the audit log: not under b.mu. An
		// answer it refuses (a channel that may not approve the tier, say)
		// leaves the call held and shown, for an answer that may; one it
		// took, or a call that waits no more, takes it off.
		b.mu.Unlock()
		err := p.later(ans)
		b.mu.Lock()
		if err == nil || settled(err) {
			if b.pending[a.ID] == p {
				b.remove(a.ID)
				b.withdraw(a.ID, "answered in another approver", from)
			}
		}
		switch {
		case err == nil:
			return ""
		case errors.Is(err, host.ErrUnrecorded):
			return err.Error()
		}
		return "the answer approved nothing: " + err.Error()
	}
	b.remove(a.ID)
	b.withdraw(a.ID, "answered in another approver", from)
	p.answer <- ans
	return ""
}

// settled reports whether a held call's answer error says that the call
// waits no more (host.Gate.AnswerLater): answered elsewhere, expired,
// forgotten, or answered without its audit record.
func settled(err error) bool {
	return errors.Is(err, later.ErrAnswered) || errors.Is(err, later.ErrExpired) ||
		errors.Is(err, later.ErrUnknown) || errors.Is(err, host.ErrUnrecorded)
}

// channel is the channel an answer to p came through: the approval page
// with a passkey only when its assertion verifies here, against p's own
// nonce; otherwise the approver's word, `mcphost approve` or the page,
// which no one checks (both are the person's own programs on the socket).
// A proof that does not verify is why the answer approves nothing.
func (b *Broker) channel(p *pending, a *Answer) (audit.Channel, string) {
	via := audit.ChannelApprove
	switch a.Via {
	case "":
	case ViaWeb:
		via = audit.ChannelWeb
	default:
		return "", fmt.Sprintf("the answer says it came through %q, which is no approver's channel", bound(a.Via, maxName))
	}
	if a.Passkey == nil || !a.Approve {
		return via, ""
	}
	if b.o.Passkeys == nil {
		return "", "this mcphost serve cannot check passkeys: the answer approves nothing"
	}
	expires, err := time.Parse(time.RFC3339Nano, a.Passkey.Expires)
	if err != nil {
		return "", "the passkey approval has no valid expiry: it approves nothing"
	}
	if err := b.o.Passkeys.Verify(p.msg.Binding(), p.nonce, expires, a.Passkey.Response); err != nil {
		return "", "the passkey approval was refused (" + err.Error() + "): the call still waits"
	}
	return audit.ChannelWebPasskey, ""
}

// hostAnswer turns a bound answer into the gate's, with the scope clamped
// to the scopes the question offered.
func hostAnswer(a *Answer, scopes []decide.Scope) (host.Answer, string) {
	if !a.Approve {
		return host.Answer{Reason: bound(strings.TrimSpace(a.Reason), maxDenyReason)}, ""
	}
	if a.Arguments != "" {
		if len(a.Arguments) > MaxArguments {
			return host.Answer{}, fmt.Sprintf("the edited arguments are larger than %d bytes", MaxArguments)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(a.Arguments), &obj); err != nil || obj == nil {
			return host.Answer{}, "the edited arguments are not one JSON object"
		}
		// An edit approves nothing: the gate decides the new call again.
		return host.Answer{Approve: true, Scope: decide.ScopeOnce, Args: json.RawMessage(a.Arguments)}, ""
	}
	if len(scopes) == 0 {
		return host.Answer{Reason: "the call could only be denied"}, ""
	}
	scope := a.Scope
	if !slices.Contains(scopes, scope) { // not offered: clamp it
		scope = decide.ScopeOnce
		if !slices.Contains(scopes, scope) {
			scope = scopes[0]
		}
	}
	return host.Answer{Approve: true, Scope: scope}, ""
}

// accept takes connections until the listener closes.
func (b *Broker) accept() {
	for {
		nc, err := b.ln.AcceptUnix()
		if err != nil {
			select {
			case <-b.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// Out of file descriptors and the like: wait, then go on.
			select {
			case <-b.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		c := &conn{b: b, nc: nc, out: make(chan []byte, b.o.OutQueue), gone: make(chan struct{})}
		if err := checkPeer(b.o.PeerUID, nc, b.o.UID); err != nil {
			c.refuse(err.Error())
			continue
		}
		b.mu.Lock()
		select {
		case <-b.done:
			b.mu.Unlock()
			nc.Close()
			return
		default:
		}
		b.conns[c] = struct{}{}
		b.mu.Unlock()
		b.wg.Go(c.write)
		b.wg.Go(c.read)
	}
}

// checkPeer refuses a connection from another user than uid, or one whose
// user cannot be told.
func checkPeer(peer func(*net.UnixConn) (int, error), c *net.UnixConn, uid int) error {
	got, err := peer(c)
	if err != nil {
		return fmt.Errorf("refused: the connecting user cannot be verified (%v)", err)
	}
	if got != uid {
		return fmt.Errorf("refused: the approver runs as uid %d, this serve only accepts uid %d", got, uid)
	}
	return nil
}

// drop forgets a connection. With no approver left, every waiting
// question is denied.
func (b *Broker) drop(c *conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.conns[c]; !ok {
		return
	}
	delete(b.conns, c)
	if b.anyReady() {
		return
	}
	// A held call (Post) waits for the next approver; a question someone
	// waits on is denied now.
	for _, id := range slices.Clone(b.order) {
		if p := b.pending[id]; p.later == nil {
			p.fail <- fmt.Errorf("%w (the approver disconnected before answering)", ErrNoApprover)
			b.remove(id)
		}
	}
}

// conn is one approver's connection.
type conn struct {
	b    *Broker
	nc   *net.UnixConn
	out  chan []byte
	gone chan struct{}
	once sync.Once

	ready bool // said hello; guarded by b.mu
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.gone)
		c.nc.Close()
	})
}

// refuse writes one error line and closes the connection.
func (c *conn) refuse(msg string) {
	if line, err := encodeLine(Error{Type: TypeError, Message: msg}); err == nil {
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.nc.Write(line)
	}
	c.close()
}

// send queues a line for the approver; one that cannot keep up is
// dropped rather than allowed to hold the serve back. b.mu is held.
func (c *conn) send(line []byte) {
	select {
	case c.out <- line:
	default:
		go c.close()
	}
}

func (c *conn) write() {
	for {
		select {
		case line := <-c.out:
			_ = c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.nc.Write(line); err != nil {
				c.close()
				return
			}
		case <-c.gone:
			return
		}
	}
}

// read handles the approver's lines: its hello first, then answers. A
// malformed line ends the connection with an error line saying what was
// wrong.
func (c *conn) read() {
	defer func() {
		c.close()
		c.b.drop(c)
	}()
	_ = c.nc.SetReadDeadline(time.Now().Add(c.b.o.HelloTimeout))
	sc := newScanner(c.nc)
	hello := false
	for sc.Scan() {
		line := sc.Bytes()
		typ, err := msgType(line)
		if err != nil {
			c.fail(fmt.Sprintf("malformed line: %v", err))
			return
		}
		if !hello {
			if typ != TypeHello {
				c.fail(fmt.Sprintf("the first line must be a hello, not %q", bound(typ, 32)))
				return
			}
			var h Hello
			if err := decodeStrict(line, &h); err != nil {
				c.fail(fmt.Sprintf("malformed hello: %v", err))
				return
			}
			if h.Version != Version {
				c.fail(fmt.Sprintf("protocol version %d is not supported: this serve speaks version %d (use the same mcphost for serve and approve)", h.Version, Version))
				return
			}
			if !c.greet() {
				return
			}
			hello = true
			_ = c.nc.SetReadDeadline(time.Time{})
			continue
		}
		if typ != TypeAnswer {
			c.fail(fmt.Sprintf("unexpected message type %q (an approver sends answers)", bound(typ, 32)))
			return
		}
		var a Answer
		if err := decodeStrict(line, &a); err != nil {
			c.fail(fmt.Sprintf("malformed answer: %v", err))
			return
		}
		if why := c.b.answer(c, &a); why != "" {
			if line, err := encodeLine(Rejected{Type: TypeRejected, ID: bound(a.ID, maxName), Message: why}); err == nil {
				c.b.mu.Lock()
				c.send(line)
				c.b.mu.Unlock()
			}
		}
	}
	var ne net.Error
	switch err := scanErr(sc); {
	case errors.Is(err, ErrLineTooLong):
		c.fail(err.Error())
	case !hello && errors.As(err, &ne) && ne.Timeout():
		c.fail(fmt.Sprintf("no hello within %s", c.b.o.HelloTimeout))
	}
}

// greet answers the hello and sends every waiting question, oldest first,
// in one step with becoming ready, so no question is missed or sent twice.
func (c *conn) greet() bool {
	line, err := encodeLine(Hello{Type: TypeHello, Version: Version, Label: bound(c.b.o.Label, maxLabel), PID: os.Getpid()})
	if err != nil {
		return false
	}
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	c.send(line)
	for _, id := range b.order {
		c.send(b.pending[id].line)
	}
	c.ready = true
	return true
}

// fail ends the connection with an error line saying what was wrong.
// Lines still queued for the approver are dropped: the connection is over.
func (c *conn) fail(msg string) { c.refuse(msg) }
