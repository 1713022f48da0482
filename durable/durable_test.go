package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
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

// TestWriteFile_NewFolders checks a write into folders that do not exist:
// they are made with the file in them, mode 0700, and no temporary folder is
// left beside them.
func TestWriteFile_NewFolders(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	path := filepath.Join(base, "numbering", "test", "perfil", "journal.json")
	if err := WriteFile(path, []byte("uno"), true); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "uno" {
		t.Fatalf("content %q, %v; want uno", b, err)
	}
	for _, dir := range []string{filepath.Join(base, "numbering"), filepath.Join(base, "numbering", "test"), filepath.Dir(path)} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode() != 0o700|os.ModeDir {
			t.Errorf("%s: %v, %v; want a folder with mode 0700", dir, fi.Mode(), err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(base, "numbering", "test"))
	if err != nil || len(entries) != 1 || entries[0].Name() != "perfil" {
		t.Errorf("the parent folder holds %v (%v), want only perfil (no temporary folder left)", entries, err)
	}
	// The folder exists now: a second write replaces the file in place.
	if err := WriteFile(path, []byte("dos"), true); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "dos" {
		t.Fatalf("content %q, %v; want dos", b, err)
	}
	if err := SyncParents(path); err != nil {
		t.Errorf("SyncParents: %v", err)
	}
}

// BenchmarkSyncParents measures what store.Open adds at every start: the
// syncs of the store file's folder and the folders above it.
func BenchmarkSyncParents(b *testing.B) {
	path := filepath.Join(b.TempDir(), "store", "test", "perfil.db")
	if err := WriteFile(path, []byte("x"), true); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := SyncParents(path); err != nil {
			b.Fatal(err)
		}
	}
}
