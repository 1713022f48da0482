//go:build !windows

package main

import "syscall"

// errConnRefused is how a refused connection fails.
var errConnRefused error = syscall.ECONNREFUSED
