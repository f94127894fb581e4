// Package golden checks computed values against golden files whose rows
// never change: the hashes that users' state files hold. A row is an "in:"
// line and one line per field, each value a Go quoted string; rows are
// separated by blank lines, and lines that start with '#' are comments.
package golden

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Field is one computed value of a row.
type Field struct{ Name, Value string }

type row struct {
	line   int
	in     string
	fields []Field
}

// Check compares compute(in) with every row of the golden file at path,
// and fails if an entry of corpus has no row. With update set, entries that
// have no row yet are appended; rows already in the file are never
// rewritten.
func Check(t *testing.T, path string, corpus []string, update bool, compute func(in string) []Field) {
	t.Helper()
	rows, header := read(t, path)
	if len(rows) == 0 && !update {
		t.Fatalf("%s holds no rows", path)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r.in] = true
		got := compute(r.in)
		if len(got) != len(r.fields) {
			t.Errorf("%s:%d: %d fields, want %d", path, r.line, len(got), len(r.fields))
			continue
		}
		for i, f := range got {
			if f != r.fields[i] {
				t.Errorf("%s:%d: %s of %q:\n got %q\nwant %q", path, r.line, f.Name, r.in, f.Value, r.fields[i].Value)
			}
		}
	}
	var missing []string
	for _, in := range corpus {
		if !have[in] {
			have[in] = true
			missing = append(missing, in)
		}
	}
	if len(missing) == 0 {
		return
	}
	if !update {
		t.Fatalf("%s has no row for %d corpus entries (the first: %q); run the test with -update-golden to add them", path, len(missing), missing[0])
	}
	var buf bytes.Buffer
	buf.WriteString(header)
	for _, r := range rows {
		writeRow(&buf, r.in, r.fields)
	}
	for _, in := range missing {
		writeRow(&buf, in, compute(in))
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeRow(buf *bytes.Buffer, in string, fields []Field) {
	fmt.Fprintf(buf, "in: %s\n", strconv.Quote(in))
	for _, f := range fields {
		fmt.Fprintf(buf, "%s: %s\n", f.Name, strconv.Quote(f.Value))
	}
	buf.WriteString("\n")
}

func read(t *testing.T, path string) (rows []row, header string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	var cur *row
	inHeader := true
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if inHeader && strings.HasPrefix(line, "#") {
			header += line + "\n"
			continue
		}
		inHeader = false
		if line == "" || strings.HasPrefix(line, "#") {
			cur = nil
			continue
		}
		name, quoted, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("%s:%d: want NAME: \"VALUE\", got %q", path, n, line)
		}
		value, err := strconv.Unquote(quoted)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		switch {
		case name == "in":
			rows = append(rows, row{line: n, in: value})
			cur = &rows[len(rows)-1]
		case cur == nil:
			t.Fatalf("%s:%d: %q before an in: line", path, n, name)
		default:
			cur.fields = append(cur.fields, Field{name, value})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, header
}
