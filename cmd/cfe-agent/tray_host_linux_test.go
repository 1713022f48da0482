package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// ownWatcher makes conn a tray host: it exports a StatusNotifierWatcher and
// owns its name.
func ownWatcher(t *testing.T, conn *dbus.Conn) *fakeWatcher {
	t.Helper()
	w := &fakeWatcher{reg: make(chan string, 4)}
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the watcher name: %v (reply %d)", err, reply)
	}
	return w
}

// waitRegistered waits for an item to register with w and returns its name.
func waitRegistered(t *testing.T, w *fakeWatcher, p *agentProc, what string) string {
	t.Helper()
	select {
	case item := <-w.reg:
		return item
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the agent never registered a tray item:\n%s", what, p.stderr.String())
	}
	return ""
}

// TestAgent_trayHostLater checks an agent started before the panel (a
// session bus with no tray host yet): it serves headless, and shows its icon
// when a tray host appears; when that host goes away and another one starts
// (a panel restarted), the item registers with the new one.
func TestAgent_trayHostLater(t *testing.T) {
	t.Parallel()
	addr := startBus(t)
	p := startProc(t, procEnv(t, t.TempDir(), "DBUS_SESSION_BUS_ADDRESS="+addr), "--listen", "127.0.0.1:0")
	p.waitLine("running headless")
	if got := p.stderr.lines("running headless"); len(got) != 1 || !strings.Contains(got[0], "no tray host") {
		t.Fatalf("headless lines %q, want one naming the missing tray host", got)
	}

	first, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	item := waitRegistered(t, ownWatcher(t, first), p, "a host appearing after the agent")
	conn := busConn(t, addr)
	m := waitMenu(t, conn, item, "the status lines", func(m menuItem) bool {
		f, ok := m.find("Perfil: ")
		return ok && f.label() == "Perfil: sandbox (sandbox)"
	})
	if _, ok := m.find("Salir"); !ok {
		t.Errorf("the late tray has no full menu: %q", m.visible(""))
	}

	// The panel restarts: its connection goes (the name is released) and a
	// new host takes the name.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	p.waitLine("the tray host went away")
	again := waitRegistered(t, ownWatcher(t, busConn(t, addr)), p, "a host restarted")
	p.waitLine("a tray host appeared; registering")
	if again != item {
		t.Errorf("the item registered as %s with the new host, was %s", again, item)
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d after SIGTERM", code)
	}
}

// notification is one call of the fake notification server.
type notification struct {
	App, Icon, Summary, Body string
	Urgency                  byte
}

// fakeNotifications is a desktop notification server
// (org.freedesktop.Notifications) that records what it is asked to show.
type fakeNotifications struct {
	mu      sync.Mutex
	got     []notification
	arrived chan struct{} // closed by the next notification; nil until next asks
}

// next returns a channel the next notification closes. Take it before
// reading got: a notification between the read and the wait then ends the
// wait.
func (f *fakeNotifications) next() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.arrived == nil {
		f.arrived = make(chan struct{})
	}
	return f.arrived
}

func (f *fakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	n := notification{App: app, Icon: icon, Summary: summary, Body: body}
	if v, ok := hints["urgency"]; ok {
		n.Urgency, _ = v.Value().(byte)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, n)
	if f.arrived != nil {
		close(f.arrived)
		f.arrived = nil
	}
	return uint32(len(f.got)), nil
}

// with returns the notifications whose summary is summary.
func (f *fakeNotifications) with(summary string) []notification {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []notification
	for _, n := range f.got {
		if n.Summary == summary {
			out = append(out, n)
		}
	}
	return out
}

// wait waits until a notification with summary arrives (looking at each
// one as it comes, for 20 s) and returns it.
func (f *fakeNotifications) wait(t *testing.T, summary string) notification {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		next := f.next()
		if got := f.with(summary); len(got) > 0 {
			return got[0]
		}
		select {
		case <-next:
		case <-deadline.C:
			f.mu.Lock()
			defer f.mu.Unlock()
			t.Fatalf("no notification %q within 20 s; got %+v", summary, f.got)
		}
	}
}

// waitRefreshes waits (a minute at most) until the tray items on the bus at
// addr have been refreshed n times from now on. The tray sets its tooltip on
// every refresh, and systray emits NewToolTip on every set, changed or not:
// each signal is a refresh.
func waitRefreshes(t *testing.T, addr string, n int) {
	t.Helper()
	conn := busConn(t, addr)
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.kde.StatusNotifierItem"), dbus.WithMatchMember("NewToolTip")); err != nil {
		t.Fatal(err)
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals) // closed with the connection, at the test's end
	deadline := time.After(time.Minute)
	for seen := 0; seen < n; {
		select {
		case sig, ok := <-signals:
			if !ok {
				t.Fatal("the bus connection watching the tooltip closed")
			}
			if sig.Name == "org.kde.StatusNotifierItem.NewToolTip" {
				seen++
			}
		case <-deadline:
			t.Fatalf("%d tray refreshes (tooltip sets) within a minute, want %d", seen, n)
		}
	}
}

func startNotifications(t *testing.T, addr string) *fakeNotifications {
	t.Helper()
	conn := busConn(t, addr)
	f := &fakeNotifications{}
	if err := conn.Export(f, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the notifications name: %v (reply %d)", err, reply)
	}
	return f
}

// TestAgent_trayRed checks an agent that cannot sign (the machine's time zone
// is not Uruguay's): the menu's first line says why, one desktop notification
// says it once (not on every refresh), and "Exportar diagnóstico" without a
// save dialog saves on the desktop and names the file in a notification.
func TestAgent_trayRed(t *testing.T) {
	t.Parallel()
	for _, dialog := range []string{"zenity", "kdialog"} {
		if p, err := exec.LookPath(dialog); err == nil {
			t.Skipf("%s is installed (%s): this test needs a desktop without a save dialog", dialog, p)
		}
	}
	addr := startBus(t)
	w := startWatcher(t, addr)
	notes := startNotifications(t, addr)
	env := procEnv(t, t.TempDir(), "DBUS_SESSION_BUS_ADDRESS="+addr, "TZ=UTC")
	desktop := filepath.Join(envValue(env, "HOME"), "Escritorio")
	if err := os.Mkdir(desktop, 0o700); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, env, "--listen", "127.0.0.1:0")
	item := waitRegistered(t, w, p, "red agent")
	conn := busConn(t, addr)

	m := waitMenu(t, conn, item, "the reason line", func(m menuItem) bool {
		_, ok := m.find("No puede firmar: ")
		return ok
	})
	reason, _ := m.find("No puede firmar: ")
	if v := m.visible(""); v[0] != "MODO PRUEBA: comprobantes sin valor fiscal" || v[1] != reason.label() {
		t.Errorf("the first lines are not MODO PRUEBA and the reason: %q", v)
	}
	// The reason wraps at 60 characters; the fix's words are in the menu.
	if text := reasonText(t, m); !strings.Contains(text, "zona horaria") || !strings.Contains(text, "Corrija la zona horaria") {
		t.Errorf("the menu's reason %q does not name the time zone and its fix", text)
	}
	// The icon: red, with the test mode's violet badge.
	var r, g, b byte
	if !testtool.WaitUntil(t, 20*time.Second, func() bool {
		r, g, b = iconPixel(t, conn, item, 21, 29)
		return r == 0x6a && g == 0x1b && b == 0x9a
	}) {
		t.Errorf("the icon has no test mode badge: pixel (21,29) = %d,%d,%d", r, g, b)
	}
	if tip := waitTooltip(t, conn, item, "MODO PRUEBA"); !strings.HasPrefix(tip, "Agente CFE — MODO PRUEBA (sandbox): ") {
		t.Errorf("tooltip %q", tip)
	}
	red := notes.wait(t, "El agente CFE no puede firmar")
	if red.App != "Agente CFE" || red.Urgency != 2 || !strings.Contains(red.Body, "zona horaria") {
		t.Errorf("red notification %+v: want app Agente CFE, critical urgency, the time zone as reason", red)
	}
	// The tray refreshes every 5 s: after two more refreshes the agent is
	// still red, and still notified only once. Three refreshes seen from
	// now on make at least two after the one that notified, whose own
	// tooltip signal, sent before the notification but over another
	// connection, may arrive after it.
	waitRefreshes(t, addr, 3)
	if got := notes.with("El agente CFE no puede firmar"); len(got) != 1 {
		t.Errorf("%d red notifications for one transition, want 1", len(got))
	}

	// No save dialog on this desktop: no ellipsis, the archive goes to the
	// desktop folder and a notification names it.
	diag, ok := m.find("Exportar diagnóstico")
	if !ok || diag.label() != "Exportar diagnóstico" {
		t.Fatalf("diagnostics item %q, want it without an ellipsis", diag.label())
	}
	click(t, conn, item, diag.ID)
	saved := notes.wait(t, "Diagnóstico guardado")
	zips, _ := filepath.Glob(filepath.Join(desktop, "cfe-agent-diagnostico-*.zip"))
	if len(zips) != 1 {
		t.Fatalf("%d archives on the desktop, want 1", len(zips))
	}
	if want := "El archivo para soporte técnico está en " + zips[0]; saved.Body != want {
		t.Errorf("notification body %q, want %q", saved.Body, want)
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d after SIGTERM", code)
	}
}
