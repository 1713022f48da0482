// Package durable writes small files so that a crash or a power cut leaves
// either the old or the new content whole, never a partial file: the
// configuration and the store's numbering journal.
package durable

import (
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile writes data to path through a temporary file in the same
// directory, synced before it takes path's name, and syncs the directory, so
// that path never holds a partial file and the new content survives a power
// cut once WriteFile returns. With replace, an existing file is replaced
// (rename); without, an existing file is kept and the error wraps
// fs.ErrExist (link). The file gets mode 0600 and a missing directory 0700.
func WriteFile(path string, data []byte, replace bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return err
	}
	// After a rename this removes nothing; after a link, the extra name.
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes a rename or link in dir durable. Windows cannot sync a
// directory (it answers "Access is denied"), and its renames are journaled.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
