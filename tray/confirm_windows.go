package tray

import (
	"context"

	"golang.org/x/sys/windows"
)

// confirmQuit asks the quit question with Windows' own MessageBoxW
// (golang.org/x/sys/windows): every Windows has it, it needs no library,
// and its Sí/No buttons are in the system's language. It blocks until the
// cashier answers; the menu runs it on a goroutine of its own.
func confirmQuit(context.Context) (bool, error) {
	text, err := windows.UTF16PtrFromString(quitQuestion + "\n\n" + quitDetail)
	if err != nil {
		return false, err
	}
	title, err := windows.UTF16PtrFromString(quitTitle)
	if err != nil {
		return false, err
	}
	return messageBoxAnswer(windows.MessageBox(0, text, title, messageBoxFlags))
}

func hasConfirmDialog() bool { return true }
