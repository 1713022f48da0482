//go:build unix

package scalefill

import (
	"os"
	"syscall"
)

// diskBytes is the space the file takes on disk (its allocated blocks): bbolt
// grows its file by truncating it, which leaves holes that take none.
func diskBytes(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
