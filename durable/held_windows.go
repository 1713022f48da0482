package durable

import (
	"errors"

	"golang.org/x/sys/windows"
)

// heldError reports the errors of a file another handle holds:
// ERROR_SHARING_VIOLATION while it is being opened, moved or closed,
// ERROR_ACCESS_DENIED while it is open without FILE_SHARE_DELETE or the
// replaced file is pending deletion.
func heldError(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
