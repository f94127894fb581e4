package client

import (
	"io"
	"os"
	"strings"
	"testing"
)

// A pipe copied as os/exec copies a server's stderr goes through ReadFrom
// and keeps only the last max bytes, whole lines included.
func TestTailFromPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := newTailBuffer(64)
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(b, r) // *os.File's WriteTo falls back to b.ReadFrom
		done <- err
	}()
	var sent strings.Builder
	for i := range 200 {
		line := strings.Repeat("x", i%7) + "line\n"
		sent.WriteString(line)
		if _, err := io.WriteString(w, line); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	all := sent.String()
	if got, want := string(b.buf), all[len(all)-64:]; got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
	if b.dropped != int64(len(all)-64) {
		t.Errorf("dropped %d, want %d", b.dropped, len(all)-64)
	}
	if got := b.Tail(2); strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "line") {
		t.Errorf("Tail(2) = %q, want the last two lines", got)
	}
}

// ReadFrom keeps what it read before an error and returns the error.
func TestTailReadFromError(t *testing.T) {
	b := newTailBuffer(16)
	n, err := b.ReadFrom(io.MultiReader(strings.NewReader("abc"), errReader{}))
	if n != 3 || err != io.ErrUnexpectedEOF || string(b.buf) != "abc" {
		t.Errorf("ReadFrom = %d, %v, tail %q; want 3, ErrUnexpectedEOF, abc", n, err, b.buf)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
