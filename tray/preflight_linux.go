package tray

import (
	"context"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// watcherName is the bus name of the tray host (KDE's StatusNotifierWatcher,
// which GNOME's AppIndicator extension, XFCE and others also provide).
const watcherName = "org.kde.StatusNotifierWatcher"

// Available reports whether the tray can be shown: a session bus exists and a
// tray host owns watcherName on it. It opens a private connection that never
// auto-launches a bus (godbus would otherwise start one through dbus-launch
// that outlives the agent) and closes it again.
func Available(ctx context.Context) error {
	conn, err := dbus.SessionBusPrivateNoAutoStartup(dbus.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%w: no session bus: %w", ErrUnavailable, err)
	}
	defer conn.Close() //nolint:errcheck // a read-only question; nothing to lose
	if err := conn.Auth(nil); err != nil {
		return fmt.Errorf("%w: session bus authentication: %w", ErrUnavailable, err)
	}
	if err := conn.Hello(); err != nil {
		return fmt.Errorf("%w: session bus: %w", ErrUnavailable, err)
	}
	var owned bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, watcherName).Store(&owned); err != nil {
		return fmt.Errorf("%w: asking the session bus for a tray host: %w", ErrUnavailable, err)
	}
	if !owned {
		return fmt.Errorf("%w: no tray host (%s) on the session bus", ErrUnavailable, watcherName)
	}
	return nil
}
