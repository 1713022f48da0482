package testtool

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// MountTmpfs mounts a tmpfs of size (mount's syntax: "256m") on a new
// temporary directory and returns it: a small real filesystem that a test
// can fill. It is unmounted when the test ends (after the cleanups the test
// registers later, such as stopping what uses it). Mounting needs root: the
// test is skipped without it, and also when root may not mount (a restricted
// container), or fails in both cases under CFE_STRICT_TOOLS=1.
func MountTmpfs(t testing.TB, size string) string {
	t.Helper()
	RequireRoot(t, "mounting a small tmpfs")
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		Unavailable(t, "mount -t tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// FillDisk writes a file in dir until its filesystem is full and returns the
// file's path; removing it frees the space again.
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "relleno")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for size := len(chunk); size > 0; {
		if _, err := f.Write(chunk[:size]); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			size /= 2 // fill the last blocks too
		}
	}
	return path
}
