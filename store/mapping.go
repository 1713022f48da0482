package store

import (
	"os"
	"runtime"
)

// How large a mapping Open asks bbolt for.
//
// bbolt reads its file through a memory mapping, rounded up to a power of two
// (from 32 KiB to 1 GiB, then whole GiB), and maps again, larger, when the
// data outgrows it. Elsewhere the mapping costs only address space, but on
// Windows bbolt makes the file as large as its mapping (its mmap truncates the
// file to the mapping's size before mapping it) and never shrinks it. A fast
// start (verified.go) asks for room past the data, so that commits do not
// wait for the background check's read transaction; on Windows that room is
// disk, and asking for it from the file's size, as on Linux, made the file
// grow at every clean restart (1 MiB, 512 MiB, 1 GiB, 2 GiB...) and never
// match its record again. So:
//
//   - On Linux (and every system where the mapping does not touch the file) a
//     fast start asks for the recorded size + backgroundCheckRoom, as before.
//   - On Windows it asks for the data's end (the meta page's high-water mark)
//     + windowsCheckRoom(data): what it asks depends on the data only, so a
//     restart without new data asks for no more than the file already holds
//     and the file keeps its size; it grows only as the data does.
//   - A full start asks for nothing: bbolt maps the file as it is (on Windows,
//     a file bbolt sized is already a mapping's size, so nothing changes).
//
// bbolt's open on Windows also rewrites the file's end, which moves its
// modification time (under Wine, at least, even when the size stays), and
// may extend it to the mapping: the comparison with the record after the lock
// (matchesOpened) then looks only at what bbolt's open leaves alone.

// bboltMapGrowsFile reports whether bbolt makes its file as large as its
// mapping: true on Windows. A DB follows the Windows rules where it is
// (Options.mapGrowsFile); tests also set that elsewhere, with
// Options.afterBoltOpen, which then runs once bbolt has opened the file, with
// bbolt's writable file and the mapping Open asked for, and does to the file
// what bbolt's Windows mmap does, to run the Windows rules on Linux.
const bboltMapGrowsFile = runtime.GOOS == "windows"

// boltAllocSize is bbolt's default growth step (Options.AllocSize): once past
// it, bbolt grows the file on Linux by this much at a time.
const boltAllocSize = 16 << 20

// windowsCheckRoom is the room a fast start maps past the data on Windows,
// where it is disk: an eighth of the data, at least bbolt's own growth step
// and at most backgroundCheckRoom. The background check's time grows with the
// data (13 s at 3 M CFEs, where this gives the full 256 MiB), and so does what
// the till may commit meanwhile; a few hundred commits during the check of a
// small file (≈ 60 KB each while the check holds its snapshot) fit in the
// step.
func windowsCheckRoom(data int64) int64 {
	return min(max(data/8, boltAllocSize), backgroundCheckRoom)
}

// initialMmapSize is the mapping Open asks bbolt for (Options.InitialMmapSize)
// for the file at path, which a verified Close recorded as known when fast,
// by the Windows rules when growsFile.
func initialMmapSize(path string, known verifiedRecord, fast, growsFile bool) int {
	switch {
	case !fast:
		return 0
	case !growsFile:
		return int(known.Size) + backgroundCheckRoom
	}
	data, ok := dataEnd(path)
	if !ok {
		return 0 // the file as it is: no room, and no growth
	}
	return int(data + windowsCheckRoom(data))
}

// dataEnd returns where the data of the store file at path ends: its current
// meta page's high-water mark, in bytes.
func dataEnd(path string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	m, _, ok := currentMeta(f)
	return int64(m.pgid) * int64(m.pageSize), ok
}

// matchesOpened reports whether the file at path, now that bbolt has opened
// it and holds its lock, is still the one rec describes. Where bbolt's open
// does not write the file, that is matches. On Windows (growsFile: the
// Windows rules) bbolt's open rewrote
// the file's end (its modification time) and may have extended it to the
// mapping, so only the meta pages are compared, and the size may only have
// grown: a commit by another process in between rewrites a meta page, and the
// background check reads every page anyway.
func (rec verifiedRecord) matchesOpened(path string, growsFile bool) bool {
	if !growsFile {
		return rec.matches(path)
	}
	now, ok := fileState(path)
	return ok && now.Meta == rec.Meta && now.Size >= rec.Size
}
