//go:build darwin && cgo

package tray

import (
	"errors"
	"log/slog"
)

// notifier is a placeholder on macOS: the tray library offers no
// notifications there; the menu's notice line still says what happened.
type notifier struct{}

func newNotifier(*slog.Logger) *notifier { return &notifier{} }

func (*notifier) notify(Notification) error {
	return errors.New("desktop notifications are not supported on macOS yet")
}
