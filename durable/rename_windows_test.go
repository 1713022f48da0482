package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// holdOpen opens path as another process reading it does (Go's os.Open
// shares read and write, not delete) and returns the function that closes it.
func holdOpen(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = f.Close() }
}

// assertContent fails t unless path holds want and its folder holds no
// other file (no temporary file left behind).
func assertContent(t *testing.T, path, want string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("content %q, %v; want %q", b, err, want)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(path) {
			t.Errorf("%s left beside %s", e.Name(), filepath.Base(path))
		}
	}
}

// Serial: a file held for 200 ms must be released within the retries' second;
// alone in the binary the test is not starved of it.
func TestWriteFile_windowsHeldTarget(t *testing.T) {
	// The premise: a plain rename over a file held open fails at once on
	// Windows (else this test proves nothing).
	premise := filepath.Join(t.TempDir(), "config.yaml")
	for _, name := range []string{premise, premise + ".new"} {
		if err := os.WriteFile(name, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	release := holdOpen(t, premise)
	err := os.Rename(premise+".new", premise)
	release()
	if !heldError(err) {
		t.Fatalf("os.Rename over a file held open: %v, want ERROR_ACCESS_DENIED or ERROR_SHARING_VIOLATION", err)
	}

	writers := []struct {
		name  string
		write func(path, content string) error
	}{
		{"WriteFile", func(path, content string) error { return WriteFile(path, []byte(content), true) }},
		{"WriteFileFunc", func(path, content string) error {
			return WriteFileFunc(path, func(f *os.File) error { _, err := f.WriteString(content); return err }, nil)
		}},
	}
	for _, w := range writers {
		t.Run(w.name+": a file held for an instant is replaced once released", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte("viejo"), 0o600); err != nil {
				t.Fatal(err)
			}
			release := holdOpen(t, path)
			timer := time.AfterFunc(200*time.Millisecond, release)
			defer func() {
				if timer.Stop() { // the write returned before the release
					release()
				}
			}()
			if err := w.write(path, "nuevo"); err != nil {
				t.Fatalf("write while the file is held for 200 ms: %v", err)
			}
			assertContent(t, path, "nuevo")
		})

		t.Run(w.name+": a file held throughout fails and keeps its content", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte("viejo"), 0o600); err != nil {
				t.Fatal(err)
			}
			release := holdOpen(t, path)
			err := w.write(path, "nuevo")
			release()
			if !errors.Is(err, windows.ERROR_ACCESS_DENIED) && !errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
				t.Fatalf("write while the file is held throughout: %v, want ERROR_ACCESS_DENIED or ERROR_SHARING_VIOLATION", err)
			}
			assertContent(t, path, "viejo")
		})
	}
}
