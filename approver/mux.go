package approver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// Mux is an approver's connections to every serve of the person: each
// serve has its own socket (SocketPath), and a person with two hosts
// running serve answers the calls of both from one `mcphost approve`. Next
// merges their messages, each question marked with the serve it came from
// (Question.From), and Answer sends an answer to the serve that asked.
// When a serve goes, its questions are withdrawn; when the last one goes,
// Next returns io.EOF.
type Mux struct {
	events chan muxEvent
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex
	conns map[*Conn]*Hello
	paths map[string]*Conn   // sockets being dialled or connected to (nil while dialling)
	sock  map[*Conn]string   // the socket each connection dialled, to forget when it ends
	owner map[string]*Conn   // question id → the serve that asked it
	asked map[*Conn][]string // a serve's questions still shown
	sent  map[string]*Conn   // questions answered lately, whose serve may still refuse the answer
	order []string           // sent's ids, oldest first
	live  int                // connections whose reader runs
	stay  bool               // StayOpen: the end of the last serve is not the end
}

// ServesChanged says that a serve connected or went, on a Mux that stays
// open (StayOpen): the serves connected are Serves now, possibly none.
type ServesChanged struct{}

// StayOpen makes the Mux outlive its serves, for an approver that waits
// for a serve to start and connects again when one restarts (with Watch):
// Next returns a *ServesChanged whenever a serve connects or goes, and the
// end of the last serve does not end it. Call it before Dial and Watch.
func (m *Mux) StayOpen() {
	m.mu.Lock()
	m.stay = true
	m.mu.Unlock()
}

type muxEvent struct {
	ev  any
	err error
}

// NewMux returns a Mux with no connection.
func NewMux() *Mux {
	return &Mux{events: make(chan muxEvent, 64), done: make(chan struct{}), conns: map[*Conn]*Hello{},
		paths: map[string]*Conn{}, sock: map[*Conn]string{}, owner: map[string]*Conn{}, asked: map[*Conn][]string{},
		sent: map[string]*Conn{}}
}

// Dial connects to every serve whose socket is in dir (SocketDir) and says
// hello to each. A socket no one answers on is skipped; none answering is
// ErrNoServe. An error of one serve (another version, say) is returned
// with the serves that did answer, so the caller can say it and go on.
func (m *Mux) Dial(ctx context.Context, dir string) (problems []error, err error) {
	socks, err := Sockets(dir)
	if err != nil {
		return nil, fmt.Errorf("list the approver sockets in %s: %w", dir, err)
	}
	for _, sock := range socks {
		if err := m.dialOne(ctx, sock); err != nil && !errors.Is(err, ErrNoServe) {
			problems = append(problems, err)
		}
	}
	if m.Len() == 0 {
		if len(problems) > 0 {
			return nil, problems[0]
		}
		return nil, fmt.Errorf("%w (no approver socket answers in %s)", ErrNoServe, dir)
	}
	return problems, nil
}

// dialOne connects to the serve at sock unless it is connected (or being
// connected) already. A socket that did not answer is tried again at the
// next look, and one whose serve ended is forgotten, so a serve that starts
// later under the same name (a reused pid) is reached too.
func (m *Mux) dialOne(ctx context.Context, sock string) error {
	m.mu.Lock()
	_, known := m.paths[sock]
	if !known {
		m.paths[sock] = nil
	}
	m.mu.Unlock()
	if known {
		return nil
	}
	forget := func() {
		m.mu.Lock()
		delete(m.paths, sock)
		m.mu.Unlock()
	}
	c, err := Dial(ctx, sock)
	if err != nil {
		forget()
		return err
	}
	h, err := c.Hello()
	if err != nil {
		c.Close()
		forget()
		return fmt.Errorf("connect to mcphost serve at %s: %w", sock, err)
	}
	m.mu.Lock()
	m.paths[sock], m.sock[c] = c, sock
	m.mu.Unlock()
	m.Add(c, h)
	return nil
}

// Watch connects, every interval until ctx ends or the Mux closes, to the
// serves that started in dir since. Their questions come through Next like
// the others'.
func (m *Mux) Watch(ctx context.Context, dir string, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.done:
			return
		case <-t.C:
		}
		socks, err := Sockets(dir)
		if err != nil {
			continue
		}
		for _, sock := range socks {
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_ = m.dialOne(dctx, sock) // a serve that does not answer is no one to ask
			cancel()
		}
	}
}

// Add takes c, on which hello h was said, and passes its messages to Next.
func (m *Mux) Add(c *Conn, h *Hello) {
	m.mu.Lock()
	select {
	case <-m.done:
		m.mu.Unlock()
		c.Close()
		return
	default:
	}
	m.conns[c] = h
	m.live++
	stay := m.stay
	m.mu.Unlock()
	if stay {
		m.send(muxEvent{ev: &ServesChanged{}})
	}
	go m.read(c, h)
}

// Len returns how many serves are connected.
func (m *Mux) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.conns)
}

// Serves returns the hellos of the serves connected, by pid.
func (m *Mux) Serves() []*Hello {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Hello, 0, len(m.conns))
	for _, h := range m.conns {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b *Hello) int { return a.PID - b.PID })
	return out
}

// read passes c's messages on until it ends; then the questions c asked
// are withdrawn, and after the last serve Next returns the end.
func (m *Mux) read(c *Conn, h *Hello) {
	for {
		ev, err := c.Next()
		if err != nil {
			m.gone(c, h, err)
			return
		}
		m.mu.Lock()
		switch ev := ev.(type) {
		case *Question:
			ev.From = h
			m.owner[ev.ID] = c
			m.asked[c] = append(m.asked[c], ev.ID)
		case *Withdrawn:
			m.forget(c, ev.ID)
		case *Rejected:
			// The serve took no answer: its call still waits there, and
			// may be answered again.
			if m.sent[ev.ID] == c {
				delete(m.sent, ev.ID)
				m.owner[ev.ID] = c
				m.asked[c] = append(m.asked[c], ev.ID)
			}
		}
		m.mu.Unlock()
		if !m.send(muxEvent{ev: ev}) {
			return
		}
	}
}

// forget drops question id of c. m.mu is held.
func (m *Mux) forget(c *Conn, id string) {
	delete(m.owner, id)
	m.asked[c] = slices.DeleteFunc(m.asked[c], func(x string) bool { return x == id })
}

// gone handles the end of c: its questions are withdrawn, and the end of
// the last connection ends Next with its error.
func (m *Mux) gone(c *Conn, h *Hello, err error) {
	c.Close()
	m.mu.Lock()
	ids := m.asked[c]
	for _, id := range ids {
		delete(m.owner, id)
	}
	delete(m.asked, c)
	for id, sc := range m.sent {
		if sc == c {
			delete(m.sent, id)
		}
	}
	delete(m.conns, c)
	if sock, ok := m.sock[c]; ok && m.paths[sock] == c {
		delete(m.paths, sock)
	}
	delete(m.sock, c)
	m.live--
	last, stay := m.live == 0, m.stay
	m.mu.Unlock()
	why := serveName(h) + " ended the connection"
	if !errors.Is(err, io.EOF) {
		why = serveName(h) + ": " + err.Error()
	}
	for _, id := range ids {
		if !m.send(muxEvent{ev: &Withdrawn{Type: TypeWithdrawn, ID: id, Why: why}}) {
			return
		}
	}
	switch {
	case stay:
		m.send(muxEvent{ev: &ServesChanged{}})
	case last:
		m.send(muxEvent{err: err})
	}
}

// send queues e for Next, unless the Mux is closed.
func (m *Mux) send(e muxEvent) bool {
	select {
	case m.events <- e:
		return true
	case <-m.done:
		return false
	}
}

// Next returns the next message of any serve: a *Question (its From set),
// a *Withdrawn or a *Rejected, and with StayOpen a *ServesChanged. When
// the last serve has gone it returns that serve's end (io.EOF, or its
// error), unless the Mux stays open.
func (m *Mux) Next() (any, error) {
	select {
	case e := <-m.events:
		return e.ev, e.err
	case <-m.done:
		return nil, io.EOF
	}
}

// Answer sends the answer to q to the serve that asked it.
func (m *Mux) Answer(q *Question, a host.Answer) error {
	return m.AnswerVia(q, a, "", nil)
}

// maxSent bounds the answered questions a Mux remembers, so that a
// refused answer's question can be answered again.
const maxSent = 256

// AnswerVia is Conn.AnswerVia to the serve that asked q. Should that serve
// refuse the answer (a *Rejected naming q), q may be answered again.
func (m *Mux) AnswerVia(q *Question, a host.Answer, via string, proof *Proof) error {
	m.mu.Lock()
	c := m.owner[q.ID]
	if c != nil {
		m.forget(c, q.ID)
		m.sent[q.ID] = c
		m.order = append(m.order, q.ID)
		if len(m.order) > maxSent {
			delete(m.sent, m.order[0])
			m.order = m.order[1:]
		}
	}
	m.mu.Unlock()
	if c == nil {
		return nil // its serve withdrew it or went: there is no one to tell
	}
	return c.AnswerVia(q, a, via, proof)
}

// Close ends every connection.
func (m *Mux) Close() error {
	m.once.Do(func() {
		close(m.done)
		m.mu.Lock()
		for c := range m.conns {
			c.Close()
		}
		m.mu.Unlock()
	})
	return nil
}

// serveName names a serve for the person: its label and pid, sanitized.
func serveName(h *Hello) string {
	s := "mcphost serve"
	if h == nil {
		return s
	}
	if h.Label != "" {
		s += " (" + sanitize.Line(h.Label) + ")"
	}
	if h.PID > 0 {
		s += ", pid " + strconv.Itoa(h.PID)
	}
	return s
}

// ServeName names the serve of hello h as the approver shows it:
// "mcphost serve (label), pid N".
func ServeName(h *Hello) string { return serveName(h) }
