//go:build !windows

package durable

// heldError: outside Windows a rename over an open file succeeds and a
// replacement never makes opening the file fail, so nothing is retried.
func heldError(error) bool { return false }
