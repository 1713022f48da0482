//go:build unix

package instance

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock takes, without waiting, the flock of run/agent.lock in dataDir (its
// run folder must exist); ErrHeld when another process holds it, or another
// Lock of this process (an flock belongs to the open file). The lock goes
// with the process: a crashed agent leaves no stale lock. The function
// returned releases it.
func Lock(dataDir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dataDir, "run", "agent.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, err
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}
