package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// The Windows agent is linked as a GUI-subsystem program (-H=windowsgui, see
// the Makefile): started from Explorer, the Start menu or the Run key it opens
// no console window, and it logs to its file as on every platform. A GUI
// program gets no console from cmd.exe or PowerShell either, so a command
// that prints (verify, doctor, printers, version, --help…) attaches to the
// console of the shell that started it and writes there.
//
// Rules:
//   - a standard handle that is already valid (redirected to a file or a
//     pipe: "cfe-agent doctor > informe.txt", or inherited from a console
//     program) is left alone;
//   - the others are reopened on the parent's console (CONOUT$, CONIN$) when
//     AttachConsole(ATTACH_PARENT_PROCESS) succeeds;
//   - with no parent console (Explorer, autostart, the service manager)
//     stdout and stderr are opened on NUL: output goes nowhere, and the
//     log, which writes each record to stderr and then to its file, still
//     reaches the file (a write to a missing handle fails, and would stop
//     io.MultiWriter before the file);
//   - the bare start of the agent (the tray) never attaches, so closing the
//     window it was typed in does not stop it.
//
// Known caveat: cmd.exe does not wait for a GUI program, so its prompt comes
// back at once and the command's output is written after it. "start /wait
// cfe-agent doctor", or redirecting to a file, waits; docs/service.md says so.
func init() {
	if consoleWanted(os.Args[1:]) {
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
