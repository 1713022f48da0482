package durable

import (
	"os"

	"golang.org/x/sys/windows"
)

// linkNew gives the written file tmp the name path unless path exists (the
// error then wraps fs.ErrExist: ERROR_ALREADY_EXISTS). On Windows the file is
// moved, not linked: removing a hard link's extra name fails while another
// program has the file open without FILE_SHARE_DELETE (as Go's os.Open
// does), which left ".config.yaml.tmp-*" files behind when the agent and
// another command created the default configuration at once.
func linkNew(tmp, path string) error {
	from, err := windows.UTF16PtrFromString(tmp)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	to, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	if err := windows.MoveFileEx(from, to, windows.MOVEFILE_WRITE_THROUGH); err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	return nil
}
