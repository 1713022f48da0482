package tray

import (
	"testing"

	"golang.org/x/sys/windows"
)

// TestMessageBoxFlags checks the question's flags against Windows' own
// constants: Sí/No, No by default, a warning, in front.
func TestMessageBoxFlags(t *testing.T) {
	t.Parallel()
	want := uint32(windows.MB_YESNO | windows.MB_ICONWARNING | windows.MB_DEFBUTTON2 | windows.MB_SETFOREGROUND | windows.MB_TOPMOST)
	if messageBoxFlags != want {
		t.Errorf("messageBoxFlags = %#x, want %#x", messageBoxFlags, want)
	}
}
