package tray

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/godbus/dbus/v5"
)

// watcherName is the bus name of the tray host (KDE's StatusNotifierWatcher,
// which GNOME's AppIndicator extension, XFCE and others also provide).
const watcherName = "org.kde.StatusNotifierWatcher"

// sessionBus opens a private connection to the session bus that never
// auto-launches a bus (godbus would otherwise start one through dbus-launch
// that outlives the agent).
func sessionBus(ctx context.Context) (*dbus.Conn, error) {
	conn, err := dbus.SessionBusPrivateNoAutoStartup(dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("no session bus: %w", err)
	}
	if err := conn.Auth(nil); err != nil {
		conn.Close() //nolint:errcheck // already failing
		return nil, fmt.Errorf("session bus authentication: %w", err)
	}
	if err := conn.Hello(); err != nil {
		conn.Close() //nolint:errcheck // already failing
		return nil, fmt.Errorf("session bus: %w", err)
	}
	return conn, nil
}

// hostOwned asks the bus whether a tray host owns watcherName.
func hostOwned(ctx context.Context, conn *dbus.Conn) (bool, error) {
	var owned bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, watcherName).Store(&owned); err != nil {
		return false, fmt.Errorf("asking the session bus for a tray host: %w", err)
	}
	return owned, nil
}

// Available reports whether the tray can be shown: a session bus exists and a
// tray host owns watcherName on it. When the bus exists but no host does, the
// error wraps ErrNoHost too. It opens a private connection and closes it
// again.
func Available(ctx context.Context) error {
	conn, err := sessionBus(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer conn.Close() //nolint:errcheck // a read-only question; nothing to lose
	owned, err := hostOwned(ctx, conn)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if !owned {
		return fmt.Errorf("%w: %w (%s) on the session bus", ErrUnavailable, ErrNoHost, watcherName)
	}
	return nil
}

// watchHostChanges subscribes conn to the tray host's NameOwnerChanged and
// returns the channel the signals arrive on.
func watchHostChanges(ctx context.Context, conn *dbus.Conn) (<-chan *dbus.Signal, error) {
	// The channel first: a signal that arrives as soon as the match is
	// added has somewhere to go.
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	if err := conn.AddMatchSignalContext(ctx,
		dbus.WithMatchObjectPath("/org/freedesktop/DBus"),
		dbus.WithMatchInterface("org.freedesktop.DBus"),
		dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, watcherName),
	); err != nil {
		conn.RemoveSignal(signals)
		return nil, fmt.Errorf("watching the session bus for a tray host: %w", err)
	}
	return signals, nil
}

// newOwner is the new owner named by a NameOwnerChanged signal ("" when the
// name was released).
func newOwner(sig *dbus.Signal) string {
	if len(sig.Body) != 3 {
		return ""
	}
	owner, _ := sig.Body[2].(string)
	return owner
}

// watchHostLog subscribes to the tray host's comings and goings at once, so
// that a change right after the tray starts is not missed, and returns the
// loop that logs them until ctx ends; the tray library registers the item
// again with each new host.
func watchHostLog(ctx context.Context, log *slog.Logger) (loop func()) {
	conn, err := sessionBus(ctx)
	if err != nil {
		log.Warn("tray: cannot watch the tray host", "err", err)
		return func() {}
	}
	signals, err := watchHostChanges(ctx, conn)
	if err != nil {
		conn.Close() //nolint:errcheck // only signals were to be read
		log.Warn("tray: cannot watch the tray host", "err", err)
		return func() {}
	}
	return func() {
		defer conn.Close() //nolint:errcheck // only signals were read
		for {
			select {
			case <-ctx.Done():
				return
			case sig, ok := <-signals:
				if !ok || sig == nil {
					return
				}
				if newOwner(sig) == "" {
					log.Warn("tray: the tray host went away; the icon returns when one starts again")
				} else {
					log.Info("tray: a tray host appeared; registering the icon with it")
				}
			}
		}
	}
}

// WaitHost blocks until a tray host owns watcherName on the session bus (at
// once when one does already), ctx ends (its error) or the bus goes away. It
// watches the bus's NameOwnerChanged signal, subscribing before it asks, so
// that a host appearing in between is not missed.
func WaitHost(ctx context.Context) error {
	conn, err := sessionBus(ctx)
	if err != nil {
		return err
	}
	defer conn.Close() //nolint:errcheck // only signals were read
	signals, err := watchHostChanges(ctx, conn)
	if err != nil {
		return err
	}
	owned, err := hostOwned(ctx, conn)
	if err != nil || owned {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case sig, ok := <-signals:
			if !ok || sig == nil {
				return fmt.Errorf("the session bus closed the connection")
			}
			if newOwner(sig) != "" {
				return nil
			}
		}
	}
}
