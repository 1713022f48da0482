package tray

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// notifyTimeout bounds one Notify call: a notification server that hangs
// must not hold the menu.
const notifyTimeout = 5 * time.Second

// notifier sends desktop notifications to org.freedesktop.Notifications
// over a private session-bus connection, opened on first use and again after
// a failure (the notification server may start after the agent).
type notifier struct {
	log  *slog.Logger
	mu   sync.Mutex
	conn *dbus.Conn
}

func newNotifier(log *slog.Logger) *notifier { return &notifier{log: log} }

// notify shows n. The urgency hint is critical (2) for an agent that cannot
// sign, normal (1) otherwise; the icon is an error's for that and for a
// failure (Failed), information's otherwise; the server decides how long it
// stays (-1).
func (nt *notifier) notify(n Notification) error {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	if nt.conn == nil {
		// Not ctx: a connection made with a context closes when it ends.
		conn, err := sessionBus(context.Background())
		if err != nil {
			return err
		}
		nt.conn = conn
	}
	urgency, icon := byte(1), "dialog-information"
	switch {
	case n.Urgent:
		urgency, icon = 2, "dialog-error"
	case n.Failed:
		icon = "dialog-error"
	}
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(urgency)}
	var id uint32
	err := nt.conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications").CallWithContext(ctx,
		"org.freedesktop.Notifications.Notify", 0,
		appName, uint32(0), icon, n.Summary, n.Body, []string{}, hints, int32(-1)).Store(&id)
	if err != nil {
		nt.conn.Close() //nolint:errcheck // reconnect next time
		nt.conn = nil
		return fmt.Errorf("desktop notification: %w", err)
	}
	return nil
}
