//go:build darwin && cgo

package tray

import "context"

// askSavePath has no dialog on macOS yet: the file goes to the desktop.
func askSavePath(context.Context, string) (string, error) { return "", ErrNoDialog }

func hasSaveDialog() bool { return false }

func saveDir() (string, error) { return homeDesktop() }
