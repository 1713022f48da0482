//go:build !windows

package console

// Setup does nothing outside Windows: a program's standard handles are the
// ones it was started with (console_windows.go says what Windows needs).
func Setup(attach bool) {}
