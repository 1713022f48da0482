package store

import (
	"os"
	"runtime"
)

// EmulateWindowsMapping returns opts with Open following the Windows rules
// of mapping.go and doing to the file what bbolt's Windows mmap does at
// open: extend it (ftruncate, which also moves its modification time, as
// Wine's does) to the mapping bbolt makes from the file's size and the size
// Open asked for. bbolt's later remaps, when commits outgrow the mapping, are
// not emulated: they extend the file by bbolt's normal allocation only. It
// reports false, and returns opts unchanged, on Windows, where bbolt does it
// itself.
func EmulateWindowsMapping(opts Options) (Options, bool) {
	if runtime.GOOS == "windows" {
		return opts, false
	}
	opts.mapGrowsFile = true
	opts.afterBoltOpen = func(f *os.File, initialMmapSize int) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		return f.Truncate(boltMapping(max(fi.Size(), int64(initialMmapSize))))
	}
	return opts, true
}

// boltMapping is the size of the mapping bbolt 1.5 makes to hold size bytes:
// the next power of two from 32 KiB up to 1 GiB, then the next whole GiB.
func boltMapping(size int64) int64 {
	for m := int64(32 << 10); m <= 1<<30; m *= 2 {
		if size <= m {
			return m
		}
	}
	const gib = 1 << 30
	return (size + gib - 1) / gib * gib
}
