package console

import (
	"os"

	"golang.org/x/sys/windows"
)

// Setup points the standard handles where the program's output can go:
// when attach is set (the command prints), the ones that are not redirected
// at the console of the process that started it, if it has one; then the
// output handles still missing at NUL. Call it first thing in the program,
// before anything is written.
func Setup(attach bool) {
	if attach {
		attachParentConsole()
	}
	discardMissingOutput()
}

// discardMissingOutput opens stdout and stderr on NUL when they have no
// handle.
func discardMissingOutput() {
	for _, s := range []struct {
		id   uint32
		file **os.File
	}{{windows.STD_OUTPUT_HANDLE, &os.Stdout}, {windows.STD_ERROR_HANDLE, &os.Stderr}} {
		if validHandle(s.id) {
			continue
		}
		if f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			*s.file = f
		}
	}
}

// AttachConsole is not wrapped by golang.org/x/sys/windows.
var procAttachConsole = windows.NewLazySystemDLL("kernel32.dll").NewProc("AttachConsole")

// attachParentProcess is ATTACH_PARENT_PROCESS, (DWORD)-1.
const attachParentProcess = ^uintptr(0) & 0xffffffff

// attachParentConsole points the standard handles that are not redirected at
// the parent process's console, when there is one.
func attachParentConsole() {
	std := []struct {
		id   uint32
		file **os.File
		name string
		mode int
	}{
		{windows.STD_INPUT_HANDLE, &os.Stdin, "CONIN$", os.O_RDWR},
		{windows.STD_OUTPUT_HANDLE, &os.Stdout, "CONOUT$", os.O_RDWR},
		{windows.STD_ERROR_HANDLE, &os.Stderr, "CONOUT$", os.O_RDWR},
	}
	missing := 0
	for _, s := range std {
		if !validHandle(s.id) {
			missing++
		}
	}
	if missing == 0 {
		return
	}
	if r, _, _ := procAttachConsole.Call(attachParentProcess); r == 0 {
		return // no parent console: Explorer, autostart or a service
	}
	for _, s := range std {
		if validHandle(s.id) {
			continue
		}
		f, err := os.OpenFile(s.name, s.mode, 0)
		if err != nil {
			continue
		}
		_ = windows.SetStdHandle(s.id, windows.Handle(f.Fd())) // for child processes; os.* is what Go uses
		*s.file = f
	}
}

// validHandle reports whether the standard handle id is usable: set, and of a
// known kind (a file, pipe or console).
func validHandle(id uint32) bool {
	h, err := windows.GetStdHandle(id)
	if err != nil || h == 0 || h == windows.InvalidHandle {
		return false
	}
	t, err := windows.GetFileType(h)
	return err == nil && t != windows.FILE_TYPE_UNKNOWN
}
