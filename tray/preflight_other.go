//go:build windows || (darwin && cgo)

package tray

import (
	"context"
	"log/slog"
)

// Available reports whether the tray can be shown: on Windows and macOS the
// notification area always exists in a user's session.
func Available(context.Context) error { return nil }

// WaitHost returns at once: the notification area always exists.
func WaitHost(context.Context) error { return nil }

// watchHostLog has nothing to watch: the notification area always exists.
func watchHostLog(context.Context, *slog.Logger) (loop func()) { return func() {} }
