//go:build !linux

package store

import "os"

// syncData makes f's written data durable (fsync; FlushFileBuffers on
// Windows).
func syncData(f *os.File) error { return f.Sync() }
