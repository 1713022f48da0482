package profiles

import (
	"errors"

	"golang.org/x/sys/windows"
)

// transientOpenError reports the errors of opening a file that another
// handle is replacing: ERROR_SHARING_VIOLATION while the move holds the file,
// ERROR_ACCESS_DENIED while the replaced file is pending deletion.
func transientOpenError(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}
