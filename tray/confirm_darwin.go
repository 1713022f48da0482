//go:build darwin && cgo

package tray

import "context"

// confirmQuit has no dialog on macOS yet: the menu asks in a submenu.
func confirmQuit(context.Context) (bool, error) { return false, ErrNoDialog }

func hasConfirmDialog() bool { return false }
