package app

import "golang.org/x/sys/windows"

// errConnRefused is how a refused connection fails on Windows (Winsock's
// WSAECONNREFUSED; Go's syscall.ECONNREFUSED is another number there).
var errConnRefused error = windows.WSAECONNREFUSED
