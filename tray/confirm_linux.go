package tray

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// confirmQuit asks the quit question with zenity (GNOME, XFCE and most
// desktops) or kdialog (KDE), the programs the desktop already has for its
// own dialogs (the save dialog uses them too), and returns ErrNoDialog when
// neither is installed: the menu then asks in a submenu instead.
func confirmQuit(ctx context.Context) (bool, error) {
	var cmd *exec.Cmd
	text := quitQuestion + "\n" + quitDetail
	if p, err := exec.LookPath("zenity"); err == nil {
		cmd = exec.CommandContext(ctx, p, "--question", "--title="+quitTitle, "--text="+text,
			"--ok-label="+quitYes, "--cancel-label="+quitNo, "--default-cancel", "--no-wrap")
	} else if p, err := exec.LookPath("kdialog"); err == nil {
		cmd = exec.CommandContext(ctx, p, "--title", quitTitle, "--warningyesno", text,
			"--yes-label", quitYes, "--no-label", quitNo)
	} else {
		return false, ErrNoDialog
	}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return dialogAnswer(0)
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return dialogAnswer(ee.ExitCode())
	}
	return false, fmt.Errorf("question dialog: %w", err)
}

// hasConfirmDialog reports whether confirmQuit can show a dialog.
func hasConfirmDialog() bool { return hasSaveDialog() }
