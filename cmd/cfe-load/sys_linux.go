package main

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// sleepPrecisely blocks the calling thread in nanosleep for d: the kernel's
// high-resolution timer wakes it within tens of microseconds, where a
// runtime timer of an idle Go process may fire a millisecond late.
func sleepPrecisely(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR { // ts now holds what is left
	}
}

// fdatasync flushes f's data (and only the metadata needed to read it) to
// the disk, as bbolt does on Linux.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
