package tray

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// askSavePath asks with zenity (GNOME, XFCE and most desktops) or kdialog
// (KDE), whichever is installed, and returns ErrNoDialog when neither is.
// Both exit 1 when the cashier cancels.
func askSavePath(ctx context.Context, name string) (string, error) {
	dir, err := saveDir()
	if err != nil {
		return "", err
	}
	start := filepath.Join(dir, name)
	var cmd *exec.Cmd
	if p, err := exec.LookPath("zenity"); err == nil {
		cmd = exec.CommandContext(ctx, p, "--file-selection", "--save", "--confirm-overwrite",
			"--title=Guardar diagnóstico", "--filename="+start, "--file-filter=Archivo ZIP | *.zip")
	} else if p, err := exec.LookPath("kdialog"); err == nil {
		cmd = exec.CommandContext(ctx, p, "--title", "Guardar diagnóstico", "--getsavefilename", start, "*.zip")
	} else {
		return "", ErrNoDialog
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return "", ErrCanceled
		}
		return "", fmt.Errorf("save dialog %s: %w: %s", filepath.Base(cmd.Path), err, strings.TrimSpace(stderr.String()))
	}
	path := strings.TrimRight(out.String(), "\r\n")
	if path == "" {
		return "", ErrCanceled
	}
	if !strings.HasSuffix(strings.ToLower(path), ".zip") {
		path += ".zip"
	}
	return path, nil
}

// hasSaveDialog reports whether askSavePath can show a dialog.
func hasSaveDialog() bool {
	for _, p := range []string{"zenity", "kdialog"} {
		if _, err := exec.LookPath(p); err == nil {
			return true
		}
	}
	return false
}

// saveDir is the desktop folder as xdg-user-dir names it (localized, e.g.
// ~/Escritorio), else ~/Escritorio or ~/Desktop, else the home folder.
func saveDir() (string, error) {
	if p, err := exec.LookPath("xdg-user-dir"); err == nil {
		if out, err := exec.Command(p, "DESKTOP").Output(); err == nil {
			if d := firstDir(strings.TrimSpace(string(out))); d != "" {
				return d, nil
			}
		}
	}
	return homeDesktop()
}
