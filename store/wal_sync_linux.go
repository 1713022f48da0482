package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncData makes f's written data durable: fdatasync, which skips the
// file's times (the log files never change size once created).
func syncData(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
