package store

import (
	"io"
	"os"
)

// headroom keeps written zeros in the file past the pages bbolt uses, so that
// commits write into blocks the filesystem has already allocated.
//
// bbolt grows its file by truncating it to a larger size, which leaves a hole.
// A commit that writes new pages into a hole makes the filesystem allocate
// blocks for them, and the commit's fdatasync must then also write that
// allocation to the filesystem's journal. Signed CFEs are stored in
// append-only buckets, so almost every commit writes new pages at the end of
// the data. Measured on ext4 under signing load, writing into allocated
// blocks instead takes 17–35 % off the time of a commit (BENCHMARKS.md).
//
// Only the committer writes the zeros, through bbolt's own file descriptor,
// inside its write transaction, before bbolt allocates anything for it: bbolt
// is then not writing the file, and pages at or beyond the data's end
// (tx.Size()) are part of no committed state, so no reader looks at them. A
// crash leaves at most some zeros past the data, which bbolt ignores. The
// zeros reach the disk with the transaction's own fdatasync, a bounded amount
// per transaction so that no commit waits for much more than its own pages.
//
// It is on where it helps: Linux, on ext4 and XFS (headroom_linux.go). On
// copy-on-write filesystems a write never lands in the block it overwrites,
// and on other systems nothing was measured; there it does nothing.
type headroom struct {
	f        *os.File // bbolt's file; nil when off
	zeroedTo int64    // the file holds written blocks up to here
}

// headroomLead is the written space kept past the data when the data ends at
// used: an eighth of the data, between 256 KiB and 4 MiB. Once less than half
// of it is left, each commit zeroes up to headroomChunk more.
func headroomLead(used int64) int64 { return min(max(used/8, 256<<10), 4<<20) }

// headroomChunk bounds the zeros one transaction writes: more than a
// transaction's own pages, little next to them in time.
const headroomChunk = 256 << 10

// seekHole is lseek's SEEK_HOLE on Linux, the only system where
// allocatesInPlace can be true: the first hole at or past an offset.
const seekHole = 4

// zeros is the buffer the zeros are written from.
var zeros [headroomChunk]byte

// newHeadroom prepares the headroom of bbolt's file f, whose data ends at
// used. It is off when f is nil or its filesystem gains nothing from it. Zeros
// written by an earlier run are not written again: they count up to the first
// hole past the data.
func newHeadroom(f *os.File, used int64) *headroom {
	h := &headroom{zeroedTo: used}
	if f == nil || !allocatesInPlace(f) {
		return h
	}
	if hole, err := f.Seek(used, seekHole); err == nil && hole > used {
		h.zeroedTo = hole
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return h
	}
	h.f = f
	return h
}

// ensure zeroes up to headroomChunk more bytes past the data when less than
// half of headroomLead is left written past used, the end of the data in the
// current write transaction. It must run inside a write transaction, before
// the transaction has allocated pages. A failed write (a full disk, say)
// turns the headroom off: bbolt grows the file as usual and reports its own
// errors.
func (h *headroom) ensure(used int64) {
	if h == nil || h.f == nil { // none yet while Open replays the commit log

		return
	}
	h.zeroedTo = max(h.zeroedTo, used) // bbolt wrote up to used itself
	lead := headroomLead(used)
	if h.zeroedTo-used >= lead/2 {
		return
	}
	n, err := h.f.WriteAt(zeros[:min(headroomChunk, used+lead-h.zeroedTo)], h.zeroedTo)
	h.zeroedTo += int64(n)
	if err != nil {
		h.f = nil
	}
}
