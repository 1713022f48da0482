package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// instanceMutexName names the data directory's mutex. It lives in the Global
// namespace so that the service (session 0) and a cashier's tray agent (their
// own session) exclude each other; paths are compared case-insensitively, as
// Windows does.
func instanceMutexName(dataDir string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(dataDir))))
	return `Global\cfe-agent-` + hex.EncodeToString(sum[:16])
}

// lockInstance creates the data directory's named mutex; errInstanceHeld when
// it exists already (another agent, maybe in another session or as the
// service, whose mutex this user may not even open). Windows destroys the
// mutex with the last handle: a crashed agent leaves no stale lock.
func lockInstance(dataDir string) (func(), error) {
	name, err := windows.UTF16PtrFromString(instanceMutexName(dataDir))
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateMutex(nil, false, name)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		if h != 0 {
			_ = windows.CloseHandle(h)
		}
		return nil, errInstanceHeld
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = windows.CloseHandle(h) }, nil
}
