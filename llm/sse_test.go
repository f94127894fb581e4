package llm

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// ev is an event as the tests write it.
type ev struct{ Name, Data string }

// readAll reads every event of stream through a reader with the given
// limit, and returns them with the error that ended the stream (nil for a
// clean end).
func readAll(r io.Reader, limit int) ([]ev, error) {
	s := newSSEReader(r)
	s.limit = limit
	var got []ev
	for {
		e, err := s.next()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, ev{string(e.name), string(e.data)})
	}
}

func TestSSE(t *testing.T) {
	tests := []struct {
		name, in string
		want     []ev
	}{
		{"one event", "event: a\ndata: x\n\n", []ev{{"a", "x"}}},
		{"no name", "data: x\n\n", []ev{{"", "x"}}},
		{"CRLF endings", "event: a\r\ndata: x\r\n\r\n", []ev{{"a", "x"}}},
		{"CR endings", "event: a\rdata: x\r\rdata: y\r\r", []ev{{"a", "x"}, {"", "y"}}},
		{"mixed endings", "data: a\r\n\ndata: b\r\rdata: c\n\r\n", []ev{{"", "a"}, {"", "b"}, {"", "c"}}},
		{"only one space is dropped", "data:  two\n\ndata:none\n\n", []ev{{"", " two"}, {"", "none"}}},
		{"data lines joined", "data: a\ndata:\ndata: b\n\n", []ev{{"", "a\n\nb"}}},
		{"empty data still dispatches", "data\n\ndata:\n\n", []ev{{"", ""}, {"", ""}}},
		{"colon in value", "data: {\"a\": \"b:c\"}\n\n", []ev{{"", `{"a": "b:c"}`}}},
		{"comments", ": hello\ndata: x\n:\n\n", []ev{{"", "x"}}},
		{"id and retry ignored", "id: 7\nretry: 1000\ndata: x\n\n", []ev{{"", "x"}}},
		{"unknown fields ignored", "foo: bar\nDATA: no\ndata: x\n\n", []ev{{"", "x"}}},
		{"blank line without data dispatches nothing", "event: a\n\ndata: x\n\n", []ev{{"", "x"}}},
		{"last event name wins", "event: a\nevent: b\ndata: x\n\n", []ev{{"b", "x"}}},
		{"name is per event", "event: a\ndata: x\n\ndata: y\n\n", []ev{{"a", "x"}, {"", "y"}}},
		{"no trailing blank line", "data: x\n\ndata: y\n", []ev{{"", "x"}}},
		{"unterminated last line", "data: x\n\ndata: y", []ev{{"", "x"}}},
		{"byte order mark", "\uFEFFdata: x\n\n", []ev{{"", "x"}}},
		{"byte order mark only at the start", "data: x\n\n\uFEFFdata: y\n\n", []ev{{"", "x"}}},
		{"empty stream", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Whole, and one byte at a time: a line ending split across
			// reads ("\r" then "\n") must not make an extra line.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := readAll(r, maxEventBytes)
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestSSELimits(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"long line", "data: " + strings.Repeat("x", 100) + "\n\n", "event stream: a line is longer than 64 bytes"},
		{"long unterminated line", strings.Repeat("x", 100), "event stream: a line is longer than 64 bytes"},
		{"long event", strings.Repeat("data: "+strings.Repeat("x", 30)+"\n", 3) + "\n", "event stream: an event has more than 64 bytes of data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(strings.NewReader(tt.in), 64)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
	// At the limit is still fine.
	in := "data: " + strings.Repeat("x", 58) + "\n\n"
	if got, err := readAll(strings.NewReader(in), 64); err != nil || len(got) != 1 {
		t.Errorf("a 64-byte line: got %v, %v; want one event", got, err)
	}
}

func TestSSEReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: x\n\ndata: y\n"), iotest.ErrReader(boom))
	got, err := readAll(r, maxEventBytes)
	if !errors.Is(err, boom) {
		t.Errorf("got error %v, want %v", err, boom)
	}
	if diff := cmp.Diff([]ev{{"", "x"}}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// referenceSSE parses a whole stream the slow, obvious way, following the
// standard's wording, for the fuzz test to compare with.
func referenceSSE(in string) []ev {
	in = strings.TrimPrefix(in, "\uFEFF")
	in = strings.ReplaceAll(in, "\r\n", "\n")
	in = strings.ReplaceAll(in, "\r", "\n")
	lines := strings.Split(in, "\n")
	lines = lines[:len(lines)-1] // the unterminated rest, maybe empty
	var (
		got  []ev
		name string
		data []string
	)
	for _, line := range lines {
		switch {
		case line == "":
			if data != nil {
				got = append(got, ev{name, strings.Join(data, "\n")})
			}
			name, data = "", nil
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				name = value
			case "data":
				data = append(data, value)
			}
		}
	}
	return got
}

func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"event: a\ndata: x\n\n",
		"data: a\r\n\ndata: b\r\rdata: c\n\r\n",
		"data:  two\n\ndata:none\n\n: c\nid: 1\n\n",
		"\uFEFFevent: a\rdata\r\r",
		"data: x\n\ndata: y",
		"data: [DONE]\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// A small limit reaches the limit paths; they must fail cleanly.
		if _, err := readAll(iotest.OneByteReader(strings.NewReader(in)), 16); err != nil && !strings.HasPrefix(err.Error(), "event stream: ") {
			t.Fatalf("unexpected error %v", err)
		}
		got, err := readAll(strings.NewReader(in), maxEventBytes)
		if err != nil {
			t.Fatalf("error %v", err)
		}
		if diff := cmp.Diff(referenceSSE(in), got); diff != "" {
			t.Errorf("events for %q (-reference +got):\n%s", in, diff)
		}
	})
}
