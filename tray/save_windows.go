package tray

import (
	"context"

	"golang.org/x/sys/windows"
)

// askSavePath has no dialog on Windows yet: the file goes to the desktop
// and a balloon names it.
func askSavePath(context.Context, string) (string, error) { return "", ErrNoDialog }

func hasSaveDialog() bool { return false }

// saveDir is the user's Desktop known folder (OneDrive's when redirected),
// else the home folder.
func saveDir() (string, error) {
	if d, err := windows.KnownFolderPath(windows.FOLDERID_Desktop, 0); err == nil && firstDir(d) != "" {
		return d, nil
	}
	return homeDesktop()
}
