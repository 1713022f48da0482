//go:build !linux

package store

import "os"

// seekHole is not used where allocatesInPlace is false.
const seekHole = 4

// allocatesInPlace is false outside Linux: headroom was measured on Linux
// filesystems only, and Windows maps the file in a way that conflicts with
// growing it from outside bbolt.
func allocatesInPlace(*os.File) bool { return false }
