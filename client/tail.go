package client

import (
	"errors"
	"io"
	"strings"
	"sync"
)

// tailBuffer keeps the last max bytes written to it: a server's stderr is
// worth showing when it fails, but a chatty server must not grow the host.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

// Write never fails and never blocks the writer for long.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		b.dropped += int64(len(b.buf) + len(p) - b.max)
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.dropped += int64(over)
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// readChunk is how much ReadFrom reads at a time. A server's stderr is
// copied into its tail for as long as the server runs; os/exec's own copy
// would hold a 32 KiB buffer per server for that whole time.
const readChunk = 1 << 10

// ReadFrom copies r into the tail until r ends. os/exec uses it, through
// io.Copy, for the server's stderr pipe.
func (b *tailBuffer) ReadFrom(r io.Reader) (int64, error) {
	var buf [readChunk]byte
	var total int64
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			_, _ = b.Write(buf[:n])
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Tail returns at most n of the last lines, unsanitized.
func (b *tailBuffer) Tail(n int) string {
	b.mu.Lock()
	s := string(b.buf)
	b.mu.Unlock()
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
