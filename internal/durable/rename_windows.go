package durable

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// Bounds of renameOver's retries: up to renameAttempts renames renameWait
// apart, about a second in all.
const (
	renameAttempts = 20
	renameWait     = 50 * time.Millisecond
)

// renameOver renames tmp to path, replacing path. On Windows the replace
// fails while another process has path open without FILE_SHARE_DELETE, as
// Go's os.Open opens files (the service or doctor reading config.yaml):
// ERROR_ACCESS_DENIED, or ERROR_SHARING_VIOLATION while the file is being
// opened or closed. Such a hold lasts a read, so the rename is retried a
// bounded number of times before the error is returned (profiles' readFile
// retries the other side of the same race).
func renameOver(tmp, path string) error {
	for attempt := 1; ; attempt++ {
		err := os.Rename(tmp, path)
		if err == nil || attempt == renameAttempts || !transientRenameError(err) {
			return err
		}
		time.Sleep(renameWait)
	}
}

// transientRenameError reports the errors of replacing a file that another
// handle holds open.
func transientRenameError(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
