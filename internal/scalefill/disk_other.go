//go:build !unix

package scalefill

import "os"

// diskBytes is the file's size: the allocated size is not read here.
func diskBytes(fi os.FileInfo) int64 { return fi.Size() }
