//go:build !windows

package app

import "syscall"

// errConnRefused is how a refused connection fails.
var errConnRefused error = syscall.ECONNREFUSED
