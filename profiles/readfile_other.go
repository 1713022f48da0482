//go:build !windows

package profiles

// transientOpenError: on Unix a replacement is an atomic rename, which never
// makes opening the file fail.
func transientOpenError(error) bool { return false }
