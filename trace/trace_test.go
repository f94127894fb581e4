package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
)

func records(t *testing.T, b *bytes.Buffer) []Record {
	t.Helper()
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := New(&b, nil, func() time.Time { return time.Unix(0, 0) })
	w.Trace("a", client.Sent, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"apiKey":"k-123"}}}`))
	w.Trace("b", client.Received, []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)) // another server's id 7
	w.Trace("a", client.Received, []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`))
	w.Trace("a", client.Received, []byte(`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`)) // the server asks
	w.Trace("a", client.Sent, []byte(`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`))
	w.Trace("a", client.Received, nil)
	w.Trace("a", client.Received, []byte("not json\x1b[31m"))
	big := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", MaxMessage) + `"}}`
	w.Trace("a", client.Received, []byte(big))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rs := records(t, &b)
	if len(rs) != 8 {
		t.Fatalf("%d records, want 8", len(rs))
	}
	if strings.Contains(string(rs[0].Message), "k-123") || !strings.Contains(string(rs[0].Message), `"apiKey":"[REDACTED]"`) {
		t.Errorf("record 1 message %s, want the key redacted", rs[0].Message)
	}
	for i, want := range []string{"tools/call", "", "tools/call", "roots/list", "roots/list", "", "", "notifications/message"} {
		if rs[i].Method != want {
			t.Errorf("record %d: method %q, want %q", i+1, rs[i].Method, want)
		}
	}
	if !rs[5].Cut || rs[5].Message != nil {
		t.Errorf("record 6 (too large to hand over): %+v, want cut and no message", rs[5])
	}
	if rs[6].Text != "not json\x1b[31m" || rs[6].Message != nil {
		t.Errorf("record 7: %+v, want the text kept as a JSON string", rs[6])
	}
	if !rs[7].Cut || rs[7].Message != nil || rs[7].Size != len(big) {
		t.Errorf("record 8: cut %v, %d bytes kept, size %d; want cut, nothing kept, size %d", rs[7].Cut, len(rs[7].Message), rs[7].Size, len(big))
	}
}
