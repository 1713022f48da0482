//go:build !linux

package store

import "os"

// allocatesInPlace is false outside Linux: headroom was measured on Linux
// filesystems only, and Windows maps the file in a way that conflicts with
// growing it from outside bbolt.
func allocatesInPlace(*os.File) bool { return false }
