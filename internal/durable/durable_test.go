package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nuevo")
	path := filepath.Join(dir, "diario.json")
	if err := WriteFile(path, []byte("uno"), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("dos"), false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("without replace over an existing file: %v, want fs.ErrExist", err)
	}
	if err := WriteFile(path, []byte("tres"), true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "tres" {
		t.Fatalf("content %q, %v; want tres", b, err)
	}
	for name, want := range map[string]os.FileMode{path: 0o600, dir: 0o700 | os.ModeDir} {
		if fi, err := os.Stat(name); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode(), err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files, want only %s (no temporary file left)", len(entries), path)
	}
}
