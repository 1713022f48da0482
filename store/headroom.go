package store

import (
	"os"
	"runtime"
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
// blocks instead takes about a third off the time of each commit
// (BENCHMARKS.md).
//
// Only the committer writes the zeros, inside its write transaction, before
// bbolt allocates anything for it: bbolt is then not writing the file, and
// pages at or beyond the data's end (tx.Size()) are part of no committed
// state, so no reader looks at them. A crash leaves at most some zeros past
// the data, which bbolt ignores. The zeros reach the disk with the
// transaction's own fdatasync.
//
// It is on where it was measured, Linux. Elsewhere it does nothing: Windows
// maps the file in a way that conflicts with growing it from outside bbolt,
// and copy-on-write filesystems gain nothing from it.
type headroom struct {
	f        *os.File // nil when off
	zeroedTo int64    // the file holds written blocks up to here
}

// headroomStep is how much is zeroed at a time when the data ends at used:
// an eighth of the data, between 256 KiB (a new file's first commit stays
// cheap) and 4 MiB (once every few hundred CFEs). Once less than a quarter
// of a step is left, the next step is zeroed.
func headroomStep(used int64) int64 { return min(max(used/8, 256<<10), 4<<20) }

// zeros is the buffer the zeros are written from.
var zeros [256 << 10]byte

// openHeadroom prepares the headroom of the bbolt file at path, whose data
// ends at used. It is off when the platform is not Linux or the file cannot
// be opened for writing a second time; the store then works as bbolt alone.
func openHeadroom(path string, used int64) *headroom {
	h := &headroom{zeroedTo: used}
	if runtime.GOOS != "linux" {
		return h
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return h
	}
	h.f = f
	return h
}

// ensure zeroes the next headroomStep bytes when less than a quarter of that
// is left written past used, the end of the data in the current write
// transaction. It must run inside a write transaction, before the
// transaction has allocated pages. A failed write (a full disk, say) turns
// the headroom off: bbolt grows the file as usual and reports its own errors.
func (h *headroom) ensure(used int64) {
	if h.f == nil {
		return
	}
	h.zeroedTo = max(h.zeroedTo, used) // bbolt wrote up to used itself
	step := headroomStep(used)
	if h.zeroedTo-used >= step/4 {
		return
	}
	for end := h.zeroedTo + step; h.zeroedTo < end; {
		n, err := h.f.WriteAt(zeros[:min(int64(len(zeros)), end-h.zeroedTo)], h.zeroedTo)
		h.zeroedTo += int64(n)
		if err != nil {
			h.close()
			return
		}
	}
}

// close turns the headroom off and closes its file.
func (h *headroom) close() {
	if h.f != nil {
		_ = h.f.Close()
		h.f = nil
	}
}
