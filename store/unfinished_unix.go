//go:build !windows

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockExclusive takes, without waiting, the lock bbolt takes on its file
// (flock); ok is false when another process holds it.
func lockExclusive(f *os.File) (unlock func(), ok bool) {
	fd := int(f.Fd())
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil, false
	}
	return func() { _ = unix.Flock(fd, unix.LOCK_UN) }, true
}
