package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestUpdateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost", "passkeys.json")
	if data, err := ReadFile(path); data != nil || err != nil {
		t.Fatalf("ReadFile of a missing file = %q, %v; want nil, nil", data, err)
	}
	err := UpdateFile(path, func(old []byte) ([]byte, error) {
		if old != nil {
			t.Errorf("fn got %q for a missing file, want nil", old)
		}
		return []byte("one\n"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, %v; want 0600", fi.Mode(), err)
	}

	// An error from fn (a file it cannot read) leaves the file as it is.
	refused := errors.New("cannot read it")
	err = UpdateFile(path, func(old []byte) ([]byte, error) { return []byte("two\n"), refused })
	if err != refused {
		t.Fatalf("UpdateFile = %v, want fn's error unchanged", err)
	}
	if got, _ := ReadFile(path); !bytes.Equal(got, []byte("one\n")) {
		t.Fatalf("file after a refused update = %q, want %q", got, "one\n")
	}
	if err := UpdateFile(path, func(old []byte) ([]byte, error) { return append(old, "two\n"...), nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadFile(path); string(got) != "one\ntwo\n" {
		t.Fatalf("file = %q, want %q", got, "one\ntwo\n")
	}
	if err := os.Truncate(path, MaxSize+1); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := ReadFile(path); !errors.As(err, &ce) {
		t.Fatalf("ReadFile of a file over MaxSize = %v, want *CorruptError", err)
	}
}
