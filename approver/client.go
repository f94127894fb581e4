package approver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/mcphost/mcphost/host"
)

// ErrNoServe is returned by Dial when no serve listens on the socket.
var ErrNoServe = errors.New("no mcphost serve is running for this user")

// RemoteError is the serve's error line: why it refused or ended the
// connection. Message is the serve's text, unsanitized.
type RemoteError struct{ Message string }

func (e *RemoteError) Error() string { return "mcphost serve: " + e.Message }

// Conn is an approver's connection to a serve.
type Conn struct {
	nc  *net.UnixConn
	sc  *bufio.Scanner
	wmu sync.Mutex
}

// Dial connects to the serve's approver socket at path. It does not say
// hello yet: until Hello, the serve sends nothing and counts no approver.
// A missing socket, or one nobody answers on, is ErrNoServe.
func Dial(ctx context.Context, path string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (no approver socket answers at %s)", ErrNoServe, path)
		}
		return nil, fmt.Errorf("connect to the approver socket %s: %w", path, err)
	}
	uc := nc.(*net.UnixConn)
	// The socket's directory is this user's and 0700; checking the serve's
	// user as well costs nothing.
	if err := checkPeer(peerUID, uc, os.Getuid()); err != nil {
		uc.Close()
		return nil, fmt.Errorf("the process on %s: %w", path, err)
	}
	return &Conn{nc: uc, sc: newScanner(uc)}, nil
}

// Close ends the connection; the serve then stops sending questions to it.
func (c *Conn) Close() error { return c.nc.Close() }

// Hello says hello and returns the serve's. An error line from the serve
// (a refused user, a version it does not speak) is a *RemoteError.
func (c *Conn) Hello() (*Hello, error) {
	werr := c.write(Hello{Type: TypeHello, Version: Version})
	line, typ, err := c.line()
	if werr != nil {
		// A serve that refuses the connection says why, and may have
		// closed it before the hello arrived: its reason comes first.
		var re *RemoteError
		if errors.As(err, &re) {
			return nil, re
		}
		return nil, fmt.Errorf("say hello to mcphost serve: %w", werr)
	}
	if err != nil {
		return nil, err
	}
	if typ != TypeHello {
		return nil, fmt.Errorf("mcphost serve answered the hello with %q", bound(typ, 32))
	}
	var h Hello
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("mcphost serve sent a malformed hello: %w", err)
	}
	if h.Version != Version {
		return nil, fmt.Errorf("mcphost serve speaks approver protocol version %d, this approve speaks %d: use the same mcphost for both", h.Version, Version)
	}
	return &h, nil
}

// Next returns the serve's next message: a *Question, a *Withdrawn or a
// *Rejected. An error line is a *RemoteError; the end of the connection
// is io.EOF.
func (c *Conn) Next() (any, error) {
	line, typ, err := c.line()
	if err != nil {
		return nil, err
	}
	var v interface{ valid() error }
	switch typ {
	case TypeQuestion:
		v = &Question{}
	case TypeWithdrawn:
		v = &Withdrawn{}
	case TypeRejected:
		v = &Rejected{}
	default:
		return nil, fmt.Errorf("mcphost serve sent a message of unknown type %q", bound(typ, 32))
	}
	if err := json.Unmarshal(line, v); err != nil {
		return nil, fmt.Errorf("mcphost serve sent a malformed %s: %w", typ, err)
	}
	if err := v.valid(); err != nil {
		return nil, fmt.Errorf("mcphost serve sent a malformed %s: %w", typ, err)
	}
	return v, nil
}

func (q *Question) valid() error {
	if q.ID == "" {
		return errors.New("no id")
	}
	return nil
}

func (w *Withdrawn) valid() error {
	if w.ID == "" {
		return errors.New("no id")
	}
	return nil
}

func (r *Rejected) valid() error { return nil }

// Answer sends the person's answer to q, bound to its id and arguments.
func (c *Conn) Answer(q *Question, a host.Answer) error {
	return c.AnswerVia(q, a, "", nil)
}

// AnswerVia sends the person's answer to q as given through via ("" for
// this screen, ViaWeb for the approval page), with proof, the passkey
// assertion of the call, when there is one.
func (c *Conn) AnswerVia(q *Question, a host.Answer, via string, proof *Proof) error {
	return c.write(Answer{Type: TypeAnswer, ID: q.ID, ArgsHash: ArgsHash(q.Arguments),
		Approve: a.Approve, Scope: a.Scope, Reason: a.Reason, Arguments: string(a.Args), Via: via, Passkey: proof})
}

func (c *Conn) write(v any) error {
	line, err := encodeLine(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.nc.Write(line)
	return err
}

// line reads one line and its type; an error line becomes *RemoteError.
func (c *Conn) line() ([]byte, string, error) {
	if !c.sc.Scan() {
		return nil, "", scanErr(c.sc)
	}
	line := c.sc.Bytes()
	typ, err := msgType(line)
	if err != nil {
		return nil, "", fmt.Errorf("mcphost serve sent a malformed line: %w", err)
	}
	if typ == TypeError {
		var e Error
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, "", fmt.Errorf("mcphost serve sent a malformed error line: %w", err)
		}
		return nil, "", &RemoteError{Message: bound(e.Message, maxDenyReason)}
	}
	return line, typ, nil
}

// NextContext is Next, given up when ctx ends first: the connection is
// then closed (so the waiting read ends) and ctx's error returned.
func (c *Conn) NextContext(ctx context.Context) (any, error) {
	type next struct {
		v   any
		err error
	}
	ch := make(chan next, 1)
	go func() {
		v, err := c.Next()
		ch <- next{v, err}
	}()
	select {
	case n := <-ch:
		return n.v, n.err
	case <-ctx.Done():
		c.Close()
		<-ch
		return nil, ctx.Err()
	}
}
