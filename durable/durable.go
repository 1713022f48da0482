// Package durable writes small files so that a crash or a power cut leaves
// either the old or the new content whole, never a partial file: the
// configuration and the store's numbering journal.
package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile writes data to path through a temporary file in the same
// directory, synced before it takes path's name, and syncs the directory, so
// that path never holds a partial file and the new content survives a power
// cut once WriteFile returns. With replace, an existing file is replaced
// (rename, retried on Windows while another process holds path open:
// renameOver); without, an existing file is kept and the error wraps
// fs.ErrExist (a link; on Windows a move that replaces nothing). The file gets
// mode 0600 and a missing directory 0700.
//
// A missing directory is created with the file already in it: the file is
// written into a temporary directory beside it, which then takes the
// directory's name, and the directories above are synced (SyncParents). So
// the directory never exists without the file, even after a power cut: the
// store reads a journal folder without its journal as a journal that was
// lost (docs/numbering.md, "The hold").
func WriteFile(path string, data []byte, replace bool) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		done, err := writeInNewDir(path, data)
		if done || err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return err
	}
	// After a rename (or linkNew's move on Windows) this removes nothing;
	// after a link, the extra name.
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	if replace {
		err = renameOver(tmp.Name(), path)
	} else {
		err = linkNew(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	return SyncDir(dir)
}

// writeSynced writes data to f, syncs and closes it.
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeInNewDir makes path's directory, which does not exist, with the file
// in it (see WriteFile). It reports false, without an error, when another
// process made the directory meanwhile: the caller then writes the file into
// it as usual.
func writeInNewDir(path string, data []byte) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return false, err
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-*") // mode 0700
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmpDir) // after the rename, nothing is left to remove
	f, err := os.OpenFile(filepath.Join(tmpDir, filepath.Base(path)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, err
	}
	if err := writeSynced(f, data); err != nil {
		return false, err
	}
	if err := SyncDir(tmpDir); err != nil {
		return false, err
	}
	if err := os.Rename(tmpDir, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return false, nil // made meanwhile by another process
		}
		return false, err
	}
	return true, SyncParents(dir)
}

// SyncParents makes the name of path durable, and the names of the folders
// above it: it syncs path's folder, then each folder above it up to the
// filesystem's root. A new file's or folder's name reaches the disk with its
// folder, not with the file's own fsync (POSIX; ext4 happens to commit it
// with the file, other filesystems need not), and a folder made by MkdirAll
// is itself a new name in its parent. Call it once, when path was created:
// it costs one fsync per folder. Only the sync of path's own folder can
// fail it: a folder above that cannot be opened or synced (one the user may
// only traverse, a filesystem that refuses to sync folders) ends the walk
// quietly, since the folders the agent creates sit below such system ones.
func SyncParents(path string) error {
	dir := filepath.Dir(path)
	if err := SyncDir(dir); err != nil {
		return err
	}
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
		if SyncDir(dir) != nil {
			return nil
		}
	}
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
