//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockInstance takes, without waiting, the flock of run/agent.lock in dataDir;
// errInstanceHeld when another process holds it. The lock goes with the
// process: a crashed agent leaves no stale lock.
func lockInstance(dataDir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dataDir, "run", "agent.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errInstanceHeld
		}
		return nil, err
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}
