package durable

import (
	"os"
	"path/filepath"
)

// WriteFileFunc is WriteFile for content too large to hold in memory (a copy
// of the store): write fills a temporary file in path's directory, which is
// synced, closed and handed to check by name; only when check accepts it does
// it take path's name (replacing an existing file, as WriteFile does: retried
// on Windows while another process holds path open), and the directory is
// synced. On any failure, or a crash meanwhile, path keeps its old content
// (or stays absent) and the temporary file is removed (after a crash it may
// remain, named "."+base+".tmp-*": never path).
func WriteFileFunc(path string, write func(f *os.File) error, check func(tmp string) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename this removes nothing
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && check != nil {
		err = check(tmp.Name())
	}
	if err != nil {
		return err
	}
	if err := renameOver(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}
