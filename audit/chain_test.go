package audit

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// memChain is a Chain in memory that can make next run twice, as a store
// starting over does.
type memChain struct {
	mu    sync.Mutex
	links []Link
	retry bool
}

func (c *memChain) Append(ctx context.Context, next func(Head) (Link, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	head := Head{Hash: Genesis}
	if n := len(c.links); n > 0 {
		head = Head{Seq: c.links[n-1].Seq, Hash: c.links[n-1].Hash}
	}
	if c.retry {
		if _, err := next(Head{Seq: head.Seq + 7, Hash: strings.Repeat("ab", 32)}); err != nil {
			return err
		}
	}
	l, err := next(head)
	if err != nil {
		return err
	}
	c.links = append(c.links, l)
	return nil
}

func (c *memChain) file() *bytes.Buffer {
	var b bytes.Buffer
	for _, l := range c.links {
		b.Write(l.Line)
		b.WriteByte('\n')
	}
	return &b
}

// A ChainLog's links are the lines a file log writes: they verify as a
// file, with the secrets hidden, also when the store ran next twice.
func TestChainLogLinksVerifyAsAFile(t *testing.T) {
	c := &memChain{retry: true}
	l := OpenChain(c, Options{Secrets: []string{"sekret-value"}, RecordData: true})
	r := &Record{Kind: Intent, SessionID: "s", CallID: "c1", Args: []byte(`{"k":"sekret-value"}`), Reasons: []string{"x sekret-value"}}
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(&Record{Kind: Outcome, SessionID: "s", CallID: "c1", Status: StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	if r.Seq != 1 || r.Prev != Genesis || r.Hash != c.links[0].Hash || c.links[0].CallID != "c1" {
		t.Fatalf("the record is seq %d prev %.8s hash %.8s, link %+v; want seq 1 from the genesis, as stored", r.Seq, r.Prev, r.Hash, c.links[0])
	}
	f := c.file()
	if strings.Contains(f.String(), "sekret-value") {
		t.Fatalf("a secret reached the chain:\n%s", f)
	}
	rep, err := Verify(f)
	if err != nil || !rep.OK() || rep.Records != 2 || len(rep.OpenIntents) != 0 {
		t.Fatalf("the chain verifies as %+v, %v; want 2 records and no problem", rep, err)
	}
	rec, intact, err := ParseRecord(c.links[1].Line)
	if err != nil || !intact || rec.Kind != Outcome || rec.Prev != r.Hash {
		t.Fatalf("ParseRecord = %+v, %v, %v; want the intact outcome after the intent", rec, intact, err)
	}
	if _, intact, _ := ParseRecord(bytes.Replace(c.links[1].Line, []byte("success"), []byte("tool-error"), 1)); intact {
		t.Fatal("an edited line parses as intact")
	}
}

func TestChainLogRefusesWhatLogRefuses(t *testing.T) {
	c := &memChain{}
	l := OpenChain(c, Options{})
	if err := l.Append(&Record{Kind: "note"}); err == nil {
		t.Fatal("a record of no known kind was appended")
	}
	big := &Record{Kind: Intent, Reasons: []string{strings.Repeat("x", MaxLine)}}
	if err := l.Append(big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a record too large: %v, want ErrTooLarge", err)
	}
	if len(c.links) != 0 {
		t.Fatalf("%d links stored, want none", len(c.links))
	}
}
