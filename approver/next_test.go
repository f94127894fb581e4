package approver

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestNextContextGivesUp: with nothing to read, NextContext returns when
// its context ends, with the context's error, instead of waiting on.
func TestNextContextGivesUp(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if v, err := c.NextContext(ctx); !errors.Is(err, context.DeadlineExceeded) || v != nil {
		t.Fatalf("NextContext with nothing asked = %v, %v; want the context's deadline", v, err)
	}
}
