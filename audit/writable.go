package audit

import "fmt"

// Writable reports whether Append can still write: nil, or why not (the
// log was closed, or a failed sync or vanished records made it refuse
// every later record; see Append). It does not write, so it cannot tell a
// disk that is full before the next Append finds it. serve's readiness
// asks it, so that a replica whose log refuses records takes no calls.
func (l *Log) Writable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case l.failed != nil:
		return fmt.Errorf("audit: %s: %w", l.path, l.failed)
	}
	return nil
}
