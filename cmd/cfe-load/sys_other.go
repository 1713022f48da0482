//go:build !linux

package main

import (
	"os"
	"time"
)

// sleepPrecisely sleeps for d; only Linux has the precise version.
func sleepPrecisely(d time.Duration) { time.Sleep(d) }

// fdatasync flushes f to the disk (fsync where there is no fdatasync).
func fdatasync(f *os.File) error { return f.Sync() }
