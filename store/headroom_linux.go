package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// allocatesInPlace reports whether f is on a filesystem where overwriting a
// written block reuses it (ext4, XFS), so that headroom pays off.
func allocatesInPlace(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return false
	}
	return st.Type == unix.EXT4_SUPER_MAGIC || st.Type == unix.XFS_SUPER_MAGIC
}
