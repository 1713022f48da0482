//go:build !windows

package store

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// FreeSpace reports the space left to this process and the size of the
// filesystem that holds dir, in bytes (statfs: the blocks available to
// unprivileged users, so the share a filesystem keeps for root is not
// counted as free).
func FreeSpace(dir string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	// The fields' types differ between systems (signed on some BSDs).
	bs := uint64(st.Bsize)                                     //nolint:unconvert,gosec // see above
	return uint64(st.Bavail) * bs, uint64(st.Blocks) * bs, nil //nolint:unconvert,gosec // see above
}

// writeCause names the system errors of a write that a technician can act
// on; "" for any other.
func writeCause(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "el disco está lleno"
	case errors.Is(err, syscall.EDQUOT):
		return "se agotó la cuota de disco del usuario"
	case errors.Is(err, syscall.EROFS):
		return "el disco es de solo lectura"
	case errors.Is(err, syscall.EIO):
		return "error de entrada/salida del disco"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "no hay permiso para escribir los datos"
	}
	return ""
}
