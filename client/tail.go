package client

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/sanitize"
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

// Tail returns at most n of the last lines, unsanitized, as a person
// reads them: each line as a terminal shows it (foldLauncherNoise), runs
// of a package launcher's notices folded into one line, and each line cut
// to maxTailLine bytes.
func (b *tailBuffer) Tail(n int) string {
	b.mu.Lock()
	s := string(b.buf)
	b.mu.Unlock()
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := foldLauncherNoise(strings.Split(s, "\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// maxTailLine bounds one line of a stderr tail: a minified stack trace
// can be one line of many kilobytes.
const maxTailLine = 400

// foldLauncherNoise makes a server's stderr lines readable for a person
// who wants to know why it stopped: a line is what a terminal would show
// of it (the text after its last carriage return, as a progress line
// redraws itself), lines a package launcher writes while it works (npm's
// "npm notice", "npm warn", "npm http", "npm timing" and "npm info"
// lines, spinner frames) are folded, each run of them into one line that
// counts them, and every line is cut to maxTailLine bytes. npm's errors
// ("npm error", "npm ERR!") and everything the server itself wrote stay.
// The lines are not sanitized.
func foldLauncherNoise(lines []string) []string {
	out := make([]string, 0, len(lines))
	folded := 0
	flush := func() {
		if folded > 0 {
			out = append(out, fmt.Sprintf("[%d package-launcher line%s folded: npm notices, warnings, progress]", folded, plural(folded)))
			folded = 0
		}
	}
	for _, l := range lines {
		if i := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); i >= 0 {
			l = l[i+1:]
		}
		l = strings.TrimRight(l, "\r")
		if launcherNoise(l) {
			folded++
			continue
		}
		flush()
		out = append(out, sanitize.Truncate(l, maxTailLine))
	}
	flush()
	return out
}

// launcherNoisePrefixes start the lines npm and npx write about their own
// work, never about the server's.
var launcherNoisePrefixes = []string{"npm notice", "npm warn", "npm WARN", "npm http", "npm timing", "npm info", "npm verb", "npm sill"}

// launcherNoise reports whether a stderr line is a package launcher's
// report on its own work: an npm notice, warning or log line, or a
// progress line that is only spinner frames.
func launcherNoise(l string) bool {
	t := strings.TrimSpace(l)
	for _, p := range launcherNoisePrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	switch t {
	case "":
		return false
	case "|", "/", "-", `\`:
		return true // a frame of the ASCII spinner
	}
	for _, r := range t {
		// Frames of the braille spinner (⠋⠙⠹…), alone or in a row.
		if !(r >= 0x2800 && r <= 0x28FF) && r != ' ' {
			return false
		}
	}
	return true
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
