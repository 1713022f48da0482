// Package console gives the Windows agent somewhere to write (Setup).
//
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
//
// Elsewhere a program's standard handles are its own, and Setup does nothing.
package console
