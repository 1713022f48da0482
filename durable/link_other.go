//go:build !windows

package durable

import "os"

// linkNew gives the written file tmp the name path unless path exists (the
// error then wraps fs.ErrExist): a hard link, whose extra name tmp WriteFile
// removes.
func linkNew(tmp, path string) error { return os.Link(tmp, path) }
