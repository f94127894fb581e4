package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindInstructionsPrefersAgentsMD(t *testing.T) {
	dir := t.TempDir()
	if in, err := FindInstructions(dir); in != nil || err != nil {
		t.Fatalf("no file: got %+v, %v", in, err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("CLAUDE.md", "claude's")
	in, err := FindInstructions(dir)
	if err != nil || in == nil || in.Text != "claude's" || filepath.Base(in.File) != "CLAUDE.md" {
		t.Fatalf("CLAUDE.md alone: %+v, %v", in, err)
	}
	write("AGENTS.md", "agents'")
	in, err = FindInstructions(dir)
	if err != nil || in == nil || in.Text != "agents'" || filepath.Base(in.File) != "AGENTS.md" {
		t.Fatalf("both: %+v, %v; want AGENTS.md alone", in, err)
	}
	if !strings.HasSuffix(in.Key, "AGENTS.md#"+InstructionsConsentName) || in.Hash == "" {
		t.Fatalf("key %q hash %q", in.Key, in.Hash)
	}
	before := in.Hash
	write("AGENTS.md", "agents', changed")
	if in, _ = FindInstructions(dir); in.Hash == before {
		t.Fatal("a changed file has the same consent hash: its consent would still hold")
	}
	write("AGENTS.md", strings.Repeat("x", maxInstructionsRead+10))
	if in, _ = FindInstructions(dir); len(in.Text) != maxInstructionsRead || in.Cut != 10 {
		t.Fatalf("long file: %d bytes read, cut %d", len(in.Text), in.Cut)
	}
	os.Remove(filepath.Join(dir, "AGENTS.md"))
	if err := os.Mkdir(filepath.Join(dir, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FindInstructions(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory named AGENTS.md: %v", err)
	}
}

// An AGENTS.md that is a FIFO must not make mcphost wait for a writer.
func TestFindInstructionsFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "AGENTS.md")); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("this system has no FIFOs")
	} else if err != nil {
		t.Fatalf("cannot make a FIFO: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := FindInstructions(dir)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("a FIFO named AGENTS.md: %v, want an error saying it is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("FindInstructions waits on a FIFO named AGENTS.md")
	}
}
