package main_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// startBus runs a private dbus-daemon session bus for the test, from a
// configuration of its own (no system session.conf needed), and returns its
// address. It never touches the user's own bus.
func startBus(t *testing.T) string {
	t.Helper()
	testtool.Require(t, "dbus-daemon")
	dir := t.TempDir()
	conf := filepath.Join(dir, "session.conf")
	err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+filepath.Join(dir, "bus")+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	select {
	case a := <-addr:
		if a == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon did not start")
	}
	return ""
}

// busConn connects to the bus at addr.
func busConn(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// fakeWatcher is a tray host: it owns org.kde.StatusNotifierWatcher and
// records the items that register with it.
type fakeWatcher struct {
	mu    sync.Mutex
	items []string // bus names of the registered items
	reg   chan string
}

func (w *fakeWatcher) RegisterStatusNotifierItem(sender dbus.Sender, path string) *dbus.Error {
	w.mu.Lock()
	w.items = append(w.items, string(sender))
	w.mu.Unlock()
	w.reg <- string(sender)
	return nil
}

func startWatcher(t *testing.T, addr string) *fakeWatcher {
	t.Helper()
	conn := busConn(t, addr)
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

// menuItem is one node of a com.canonical.dbusmenu layout.
type menuItem struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []menuItem
}

func (m menuItem) label() string {
	s, _ := m.Props["label"].Value().(string)
	return s
}

func (m menuItem) bool(prop string, def bool) bool {
	if v, ok := m.Props[prop]; ok {
		b, _ := v.Value().(bool)
		return b
	}
	return def
}

// visible lists the visible items' labels, submenus flattened as
// "parent/child", separators as "-".
func (m menuItem) visible(prefix string) []string {
	var out []string
	for _, c := range m.Children {
		if !c.bool("visible", true) {
			continue
		}
		if t, _ := c.Props["type"].Value().(string); t == "separator" {
			out = append(out, "-")
			continue
		}
		out = append(out, prefix+c.label())
		out = append(out, c.visible(prefix+c.label()+"/")...)
	}
	return out
}

// find returns the visible item whose label starts with label.
func (m menuItem) find(label string) (menuItem, bool) {
	for _, c := range m.Children {
		if c.bool("visible", true) && strings.HasPrefix(c.label(), label) {
			return c, true
		}
		if f, ok := c.find(label); ok {
			return f, true
		}
	}
	return menuItem{}, false
}

// child returns the direct child labelled label (a zero item when none).
func (m menuItem) child(label string) menuItem {
	for _, c := range m.Children {
		if c.label() == label {
			return c
		}
	}
	return menuItem{}
}

func decodeLayout(v []any) menuItem {
	m := menuItem{ID: v[0].(int32), Props: v[1].(map[string]dbus.Variant)}
	for _, c := range v[2].([]dbus.Variant) {
		m.Children = append(m.Children, decodeLayout(c.Value().([]any)))
	}
	return m
}

// itemProperty reads a property of the StatusNotifierItem owned by name, as
// a tray host does.
func itemProperty(t *testing.T, conn *dbus.Conn, name, prop string) dbus.Variant {
	t.Helper()
	v, err := conn.Object(name, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem." + prop)
	if err != nil {
		t.Fatalf("reading %s: %v", prop, err)
	}
	return v
}

// waitTooltip polls the item's tooltip title until it contains want (or 20 s
// pass) and returns the last title read.
func waitTooltip(t *testing.T, conn *dbus.Conn, name, want string) string {
	t.Helper()
	var title string
	testtool.WaitUntil(t, 20*time.Second, func() bool {
		title = itemProperty(t, conn, name, "ToolTip").Value().([]any)[2].(string)
		return strings.Contains(title, want)
	})
	return title
}

// iconPixel returns the colour of pixel (x, y) of the item's icon as a tray
// host gets it (IconPixmap, ARGB in network byte order).
func iconPixel(t *testing.T, conn *dbus.Conn, name string, x, y int) (r, g, b byte) {
	t.Helper()
	pixmaps := itemProperty(t, conn, name, "IconPixmap").Value().([][]any)
	if len(pixmaps) == 0 {
		return 0, 0, 0 // no icon yet: callers poll
	}
	w, data := int(pixmaps[0][0].(int32)), pixmaps[0][2].([]byte)
	i := (y*w + x) * 4
	if i+3 >= len(data) {
		return 0, 0, 0 // an icon being replaced: callers poll
	}
	return data[i+1], data[i+2], data[i+3]
}

// menuPath is the item's dbusmenu object, from its Menu property.
func menuPath(t *testing.T, conn *dbus.Conn, name string) dbus.ObjectPath {
	t.Helper()
	return itemProperty(t, conn, name, "Menu").Value().(dbus.ObjectPath)
}

// trayMenu reads the whole menu of the item owned by name.
func trayMenu(t *testing.T, conn *dbus.Conn, name string) menuItem {
	t.Helper()
	var rev uint32
	var layout []any
	err := conn.Object(name, menuPath(t, conn, name)).Call("com.canonical.dbusmenu.GetLayout", 0,
		int32(0), int32(-1), []string{}).Store(&rev, &layout)
	if err != nil {
		t.Fatalf("GetLayout: %v", err)
	}
	return decodeLayout(layout)
}

// click sends the "clicked" event to the item id.
func click(t *testing.T, conn *dbus.Conn, name string, id int32) {
	t.Helper()
	err := conn.Object(name, menuPath(t, conn, name)).Call("com.canonical.dbusmenu.Event", 0,
		id, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix())).Err
	if err != nil {
		t.Fatalf("Event clicked: %v", err)
	}
}

// waitMenu reads the menu until ok accepts it.
func waitMenu(t *testing.T, conn *dbus.Conn, name, what string, ok func(menuItem) bool) menuItem {
	t.Helper()
	var m menuItem
	if !testtool.WaitUntil(t, 20*time.Second, func() bool { m = trayMenu(t, conn, name); return ok(m) }) {
		t.Fatalf("menu never showed %s within 20 s; it shows %q", what, m.visible(""))
	}
	return m
}

func TestAgent_trayOverDBus(t *testing.T) {
	t.Parallel()
	addr := startBus(t)
	w := startWatcher(t, addr)
	notes := startNotifications(t, addr)
	dataDir := t.TempDir()
	p := startProc(t, procEnv(t, dataDir, "DBUS_SESSION_BUS_ADDRESS="+addr), "--listen", "127.0.0.1:0")

	var item string
	select {
	case item = <-w.reg:
	case <-time.After(20 * time.Second):
		t.Fatalf("the agent never registered a tray item:\n%s", p.stderr.String())
	}
	if lines := p.stderr.lines("running headless"); len(lines) > 0 {
		t.Fatalf("agent ran headless with a tray host present: %s", lines[0])
	}
	conn := busConn(t, addr)

	// Before any receipt: nothing to reprint. (systray answers the first
	// GetLayout with one level only, for libdbusmenu's sake: read again.)
	m := waitMenu(t, conn, item, "the status lines and submenus", func(m menuItem) bool {
		f, ok := m.find("Perfil: ")
		return ok && f.label() != "Perfil: " && slices.Contains(m.visible(""), "Perfil/sandbox")
	})
	for _, want := range []string{"Perfil: sandbox (sandbox)", "Dirección: " + p.baseURL, "Último comprobante: ninguno",
		"Envíos pendientes: 0", "Copia de seguridad: sin copias automáticas", "Reimprimir último comprobante", "Abrir página de estado", "Buscar comprobante", "Perfil",
		"Perfil/sandbox", "Impresora predeterminada", "Impresora predeterminada/archivo", "Iniciar con el sistema",
		"Abrir carpeta de registros", "Salir"} {
		if !slices.Contains(m.visible(""), want) {
			t.Errorf("menu lacks %q; it shows %q", want, m.visible(""))
		}
	}
	if p := m.child("Perfil").child("sandbox"); p.Props["toggle-state"].Value() != int32(1) {
		t.Error("the active profile is not checked in the profile submenu")
	}
	// A tray host shows the icon (green: all is well) and the tooltip.
	// The tooltip follows the first state refresh, which may land after the
	// menu: wait for it rather than read it once.
	if title := waitTooltip(t, conn, item, "funcionando"); !strings.Contains(title, "funcionando") {
		t.Errorf("tooltip title %q, want it to say the agent works", title)
	}
	// The icon is set right after the tooltip: poll for green.
	var r, g byte
	if !testtool.WaitUntil(t, 20*time.Second, func() bool { r, g, _ = iconPixel(t, conn, item, 5, 16); return g > r }) {
		t.Errorf("icon is not green with status ok: r=%d g=%d", r, g)
	}
	if r, _ := m.find("Reimprimir"); r.bool("enabled", true) {
		t.Error("reprint is enabled with no receipt signed")
	}

	// A receipt signed through the module shows up in the menu (the tray
	// refreshes by itself), and the reprint item becomes enabled.
	signed := p.signExample("0b6f3d2a-1c4e-4a8b-9f10-2d3e4f5a6b7c")
	st, err := p.client().State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	last := st.Receipts.Recent[0]
	if last.UUID != signed.UUID {
		t.Fatalf("/state's last receipt is %s, want %s", last.UUID, signed.UUID)
	}
	wantLast := "Último comprobante: e-Ticket " + last.Serie + "-" + itoa(last.Numero)
	wantPending := "Envíos pendientes: " + itoa(int64(st.Outbox.Pending))
	// A refresh updates the menu's items one by one over D-Bus: wait until
	// the last receipt, the pending line and the reprint item all show it.
	m = waitMenu(t, conn, item, wantLast+", "+wantPending+" and reprint enabled", func(m menuItem) bool {
		f, ok := m.find("Último comprobante: ")
		p, okp := m.find("Envíos pendientes: ")
		r, okr := m.find("Reimprimir último comprobante")
		return ok && strings.HasPrefix(f.label(), wantLast) && okp && strings.HasPrefix(p.label(), wantPending) &&
			okr && r.bool("enabled", true)
	})
	reprint, _ := m.find("Reimprimir último comprobante")
	if !reprint.bool("enabled", true) {
		t.Fatal("reprint stays disabled after a receipt was signed")
	}

	// Reprint: the module prints the last receipt on the default printer,
	// in-process (the tray's one path to the agent), as POST /pdf would.
	click(t, conn, item, reprint.ID)
	m = waitMenu(t, conn, item, "the reprint's outcome", func(m menuItem) bool {
		_, ok1 := m.find("Reimpreso en archivo")
		_, ok2 := m.find("no se pudo reimprimir")
		return ok1 || ok2
	})
	reqs := p.stderr.lines(`msg="cfe printed"`, "printer=archivo")
	if len(reqs) != 1 {
		t.Fatalf("module printed %d times, want 1:\n%s", len(reqs), p.stderr.String())
	}
	if _, ok := m.find("Reimpreso en archivo"); !ok {
		t.Fatalf("reprint failed: %s", reqs[0])
	}
	if jobs, _ := filepath.Glob(filepath.Join(dataDir, "impresiones", "*.pdf")); len(jobs) != 1 {
		t.Errorf("reprint reported done, but the directory printer holds %d PDFs", len(jobs))
	}
	// The outcome is also a desktop notification, without reopening the menu.
	done := notes.wait(t, "Comprobante reimpreso")
	if want := "e-Ticket " + last.Serie + "-" + itoa(last.Numero) + " se envió a la impresora archivo."; done.Body != want || done.App != "Agente CFE" || done.Urgency != 1 {
		t.Errorf("reprint notification %+v, want body %q from Agente CFE, normal urgency", done, want)
	}
	if red := notes.with("El agente CFE no puede firmar"); len(red) != 0 {
		t.Errorf("a working agent notified it cannot sign: %+v", red)
	}

	// Autostart: the checkbox writes and removes the XDG entry.
	auto, _ := m.find("Iniciar con el sistema")
	if auto.Props["toggle-state"].Value().(int32) != 0 {
		t.Fatal("autostart checked before it was enabled")
	}
	click(t, conn, item, auto.ID)
	waitMenu(t, conn, item, "autostart checked", func(m menuItem) bool {
		a, _ := m.find("Iniciar con el sistema")
		return a.Props["toggle-state"].Value().(int32) == 1
	})
	desktop := filepath.Join(envValue(p.cmd.Env, "XDG_CONFIG_HOME"), "autostart", "cfe-agent.desktop")
	if b, err := os.ReadFile(desktop); err != nil || !strings.Contains(string(b), "Exec="+agentBin) {
		t.Errorf("autostart entry %s: %v\n%s", desktop, err, b)
	}

	// Salir asks first. This desktop has no dialog program: the question
	// is Salir's submenu. "No" keeps the agent; "Sí" closes it, with a
	// clean exit, status 0.
	quit := m.child("Salir")
	if got := quit.visible(""); !slices.Equal(got, []string{"¿Cerrar el agente? No se podrán firmar ventas hasta que", "vuelva a abrirlo.",
		"Sí, cerrar el agente", "No, seguir firmando"}) {
		t.Fatalf("Salir's submenu %q", got)
	}
	click(t, conn, item, quit.child("No, seguir firmando").ID)
	waitRefreshes(t, addr, 1) // the action ran: the loop refreshes after every one
	if _, err := p.client().Health(context.Background()); err != nil {
		t.Fatalf("the agent stopped after Salir > No: %v", err)
	}
	click(t, conn, item, quit.child("Sí, cerrar el agente").ID)
	if code := p.wait(15 * time.Second); code != 0 {
		t.Fatalf("exit status %d after Salir", code)
	}
	if len(p.stderr.lines("panic")) > 0 {
		t.Errorf("the agent panicked on exit:\n%s", p.stderr.String())
	}
}

// TestAgent_headless checks that without a session bus, and with a bus but
// no tray host, the agent serves headless, says why once, and exits cleanly
// on SIGTERM.
func TestAgent_headless(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		env    func(t *testing.T) []string
		reason string
	}{
		{"no session bus", func(*testing.T) []string { return nil }, "no session bus"},
		{"bus without tray host", func(t *testing.T) []string {
			return []string{"DBUS_SESSION_BUS_ADDRESS=" + startBus(t)}
		}, "no tray host"},
		{"--headless", func(t *testing.T) []string {
			addr := startBus(t)
			startWatcher(t, addr)
			return []string{"DBUS_SESSION_BUS_ADDRESS=" + addr, "CFE_TEST_HEADLESS_FLAG=1"}
		}, "--headless"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := procEnv(t, t.TempDir(), tc.env(t)...)
			args := []string{"--listen", "127.0.0.1:0"}
			if envValue(env, "CFE_TEST_HEADLESS_FLAG") != "" {
				args = append(args, "--headless")
			}
			p := startProc(t, env, args...)
			h, err := p.client().Health(context.Background())
			if err != nil || !h.OK {
				t.Fatalf("health: %+v, %v", h, err)
			}
			p.waitLine("running headless")
			if got := p.stderr.lines("running headless"); len(got) != 1 || !strings.Contains(got[0], tc.reason) {
				t.Errorf("headless lines %q, want one naming %q", got, tc.reason)
			}
			if code := p.stop(syscall.SIGTERM); code != 0 {
				t.Fatalf("exit status %d after SIGTERM", code)
			}
			if len(p.stderr.lines("panic")) > 0 {
				t.Errorf("panic on exit:\n%s", p.stderr.String())
			}
			if len(p.stderr.lines("shutting down")) != 1 {
				t.Errorf("no clean shutdown logged:\n%s", p.stderr.String())
			}
		})
	}
}

func envValue(env []string, key string) string {
	for _, e := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(e, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestAgent_trayActions drives the rest of the menu: opening the status page
// and the log folder (through a recording xdg-open), exporting diagnostics,
// switching the default printer and the profile (the agent reopens on the
// new configuration), and SIGTERM in tray mode.
func TestAgent_trayActions(t *testing.T) {
	t.Parallel()
	addr := startBus(t)
	w := startWatcher(t, addr)
	dataDir := t.TempDir()
	writeTwoProfiles(t, dataDir)
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened.txt")
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" >> " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// A save dialog (zenity) where the cashier picks a folder of their own
	// and a name without ".zip"; it records its arguments.
	chosenDir := t.TempDir()
	dialogArgs := filepath.Join(bin, "zenity-args.txt")
	zenity := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + dialogArgs + "\necho " + filepath.Join(chosenDir, "para-soporte") + "\n"
	if err := os.WriteFile(filepath.Join(bin, "zenity"), []byte(zenity), 0o755); err != nil {
		t.Fatal(err)
	}
	env := procEnv(t, dataDir, "DBUS_SESSION_BUS_ADDRESS="+addr)
	for i, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(e, "PATH=")
		}
	}
	p := startProc(t, env, "--listen", "127.0.0.1:0")
	var item string
	select {
	case item = <-w.reg:
	case <-time.After(20 * time.Second):
		t.Fatalf("no tray item registered:\n%s", p.stderr.String())
	}
	conn := busConn(t, addr)
	m := waitMenu(t, conn, item, "both profiles and printers", func(m menuItem) bool {
		v := m.visible("")
		return slices.Contains(v, "Perfil/segundo") && slices.Contains(v, "Impresora predeterminada/termica__raster")
	})
	waitOpened := func(want string) {
		t.Helper()
		var b []byte
		if !testtool.WaitUntil(t, 15*time.Second, func() bool {
			b, _ = os.ReadFile(opened)
			return slices.Contains(strings.Split(strings.TrimSpace(string(b)), "\n"), want)
		}) {
			t.Fatalf("xdg-open never got %q within 15 s; it got %q", want, b)
		}
	}

	status, _ := m.find("Abrir página de estado")
	click(t, conn, item, status.ID)
	waitOpened(p.baseURL + "/")
	search, _ := m.find("Buscar comprobante")
	click(t, conn, item, search.ID)
	waitOpened(p.baseURL + "/caja")
	logsItem, _ := m.find("Abrir carpeta de registros")
	click(t, conn, item, logsItem.ID)
	waitOpened(filepath.Join(dataDir, "logs"))
	diag, _ := m.find("Exportar diagnóstico")
	if diag.label() != "Exportar diagnóstico…" {
		t.Errorf("diagnostics item %q, want an ellipsis: a dialog asks where", diag.label())
	}
	click(t, conn, item, diag.ID)
	waitOpened(chosenDir)
	if _, err := os.Stat(filepath.Join(chosenDir, "para-soporte.zip")); err != nil {
		t.Errorf("the archive is not where the dialog said: %v", err)
	}
	if args, _ := os.ReadFile(dialogArgs); !strings.Contains(string(args), "--save\n") || !strings.Contains(string(args), "--filename=") {
		t.Errorf("zenity was not asked for a file to save: %q", args)
	}

	// Default printer: the file changes and the agent's status page uses it.
	// The printer's name keeps its underscore: dbusmenu reads "_" as a
	// mnemonic, so the label doubles it ("termica__raster" shows as
	// termica_raster).
	click(t, conn, item, m.child("Impresora predeterminada").child("termica__raster").ID)
	m = waitMenu(t, conn, item, "termica_raster checked", func(m menuItem) bool {
		return m.child("Impresora predeterminada").child("termica__raster").Props["toggle-state"].Value() == int32(1)
	})
	if cfg, _ := os.ReadFile(filepath.Join(dataDir, "config.yaml")); !strings.Contains(string(cfg), "default_printer: termica_raster") {
		t.Errorf("config.yaml does not name termica_raster as default printer:\n%s", cfg)
	}
	base := strings.TrimPrefix(func() string { f, _ := m.find("Dirección: "); return f.label() }(), "Dirección: ")
	if _, page := getAccept(t, base+"/", "text/html"); !strings.Contains(string(page), `data-impresora="termica_raster"`) {
		t.Error("the status page does not print on the new default printer")
	}

	// Profile: the agent reopens on "segundo", and says so everywhere. A
	// refresh updates the items one by one over D-Bus (the status lines
	// before the submenu's checks): wait for both.
	click(t, conn, item, m.child("Perfil").child("segundo").ID)
	m = waitMenu(t, conn, item, "profile segundo, checked", func(m menuItem) bool {
		f, _ := m.find("Perfil: ")
		return f.label() == "Perfil: segundo (sandbox)" && m.child("Perfil").child("segundo").Props["toggle-state"].Value() == int32(1)
	})
	base = strings.TrimPrefix(func() string { f, _ := m.find("Dirección: "); return f.label() }(), "Dirección: ")
	_, body := getAccept(t, base+"/state", "application/json")
	if !strings.Contains(string(body), `"profile":"segundo"`) {
		t.Errorf("/state after the switch: %s", body)
	}
	if cfg, _ := os.ReadFile(filepath.Join(dataDir, "config.yaml")); !strings.Contains(string(cfg), "active: segundo") {
		t.Error("config.yaml's active profile did not change")
	}

	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d after SIGTERM in tray mode", code)
	}
	if len(p.stderr.lines("panic")) > 0 {
		t.Errorf("the agent panicked on exit:\n%s", p.stderr.String())
	}
}

// writeTwoProfiles writes the default configuration with a second printer,
// "termica_raster" (a name with an underscore), and a second sandbox
// profile, "segundo", that copies the first.
func writeTwoProfiles(t *testing.T, dataDir string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "profiles", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(raw), "        dir: impresiones\n",
		"        dir: impresiones\n      termica_raster:\n        backend: dir\n        dir: otra\n", 1)
	i := strings.Index(cfg, "  sandbox:\n")
	if i < 0 || !strings.Contains(cfg, "      termica_raster:") {
		t.Fatal("profiles/default.yaml changed shape: update writeTwoProfiles")
	}
	cfg += strings.Replace(cfg[i:], "  sandbox:\n", "  segundo:\n", 1)
	if err := os.WriteFile(filepath.Join(dataDir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAgent_hostedService checks the reachability of the hosted service as
// /state and the tray report it: an answering service leaves the agent ok; a
// dead one degrades it (it still signs) and turns the icon amber with the
// reason in the tooltip.
func TestAgent_hostedService(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound) // any answer means reachable
	}))
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more

	t.Run("reachable", func(t *testing.T) {
		p := startProc(t, procEnv(t, t.TempDir(), "CFE_AGENT_HOSTED_URL="+up.URL), "serve", "--listen", "127.0.0.1:0")
		st := waitHostedCheck(t, p)
		if !*st.Hosted.Reachable || st.Status != "ok" || st.Hosted.BaseURL != up.URL {
			t.Fatalf("status %s, hosted %+v", st.Status, st.Hosted)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		addr := startBus(t)
		w := startWatcher(t, addr)
		p := startProc(t, procEnv(t, t.TempDir(), "CFE_AGENT_HOSTED_URL="+down, "DBUS_SESSION_BUS_ADDRESS="+addr),
			"--listen", "127.0.0.1:0")
		st := waitHostedCheck(t, p)
		want := "el servicio en la nube (" + down + ") no responde: los comprobantes firmados esperan en la cola"
		if *st.Hosted.Reachable || st.Status != "degraded" || !st.OK || !slices.Contains(st.Warnings, want) {
			t.Fatalf("status %s (ok %v), hosted %+v, warnings %q", st.Status, st.OK, st.Hosted, st.Warnings)
		}
		item := <-w.reg
		conn := busConn(t, addr)
		var tip string
		var r, g, b byte
		if !testtool.WaitUntil(t, 20*time.Second, func() bool {
			tip = itemProperty(t, conn, item, "ToolTip").Value().([]any)[2].(string)
			r, g, b = iconPixel(t, conn, item, 5, 16)
			return strings.Contains(tip, want) && r > g && g > 0x80 && b < 0x40 // amber: much red, much green, little blue (red has little green)
		}) {
			t.Fatalf("tray never turned amber with the reason within 20 s: tooltip %q, pixel %d,%d,%d", tip, r, g, b)
		}
		// The menu's first lines say test mode and why, in lines of at
		// most 60 characters, with "Detalles…" after them.
		m := waitMenu(t, conn, item, "the amber reason", func(m menuItem) bool {
			v := m.visible("")
			return len(v) > 1 && strings.HasPrefix(v[1], "Atención: ")
		})
		if got := m.visible("")[0]; got != "MODO PRUEBA: comprobantes sin valor fiscal" {
			t.Errorf("first menu line %q, want MODO PRUEBA", got)
		}
		if got := reasonText(t, m); got != "Atención: "+want {
			t.Errorf("the menu's reason %q, want %q", got, "Atención: "+want)
		}
		if code := p.stop(syscall.SIGTERM); code != 0 {
			t.Fatalf("exit status %d", code)
		}
	})
}

// reasonText joins the menu's reason lines (from the first "Atención: " or
// "No puede firmar: " line to "Detalles…", which must follow them),
// checking that none is longer than 60 characters.
func reasonText(t *testing.T, m menuItem) string {
	t.Helper()
	v := m.visible("")
	start := slices.IndexFunc(v, func(l string) bool {
		return strings.HasPrefix(l, "Atención: ") || strings.HasPrefix(l, "No puede firmar: ")
	})
	end := slices.Index(v, "Detalles…")
	if start < 0 || end <= start {
		t.Fatalf("no reason lines followed by Detalles… in %q", v)
	}
	for _, l := range v[start:end] {
		if n := utf8.RuneCountInString(l); n > 60 {
			t.Errorf("reason line of %d characters: %q", n, l)
		}
	}
	return strings.Join(v[start:end], " ")
}

// waitHostedCheck waits until /state reports a finished check of the hosted
// service.
func waitHostedCheck(t *testing.T, p *agentProc) *apitype.StateReport {
	t.Helper()
	var st *apitype.StateReport
	if !testtool.WaitUntil(t, 20*time.Second, func() bool {
		var err error
		if st, err = p.client().State(context.Background()); err != nil {
			t.Fatal(err)
		}
		return st.Hosted != nil && st.Hosted.Reachable != nil
	}) {
		t.Fatalf("the hosted service was never checked within 20 s: %+v", st.Hosted)
	}
	return st
}

// TestAgent_trayQuitAsks checks "Salir" on a desktop with a dialog program
// (a recording zenity): it asks, with Sí/No and No as the default; "No"
// keeps the agent serving, "Sí" closes it cleanly.
func TestAgent_trayQuitAsks(t *testing.T) {
	t.Parallel()
	addr := startBus(t)
	w := startWatcher(t, addr)
	bin := t.TempDir()
	args, count := filepath.Join(bin, "args.txt"), filepath.Join(bin, "count.txt")
	// The first question is answered No (exit 1), the second Sí (exit 0).
	zenity := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> " + args + "\necho x >> " + count + "\n" +
		"[ \"$(wc -l < " + count + ")\" -ge 2 ] && exit 0\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "zenity"), []byte(zenity), 0o755); err != nil {
		t.Fatal(err)
	}
	env := procEnv(t, t.TempDir(), "DBUS_SESSION_BUS_ADDRESS="+addr)
	for i, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(e, "PATH=")
		}
	}
	p := startProc(t, env, "--listen", "127.0.0.1:0")
	item := waitRegistered(t, w, p, "quit question")
	conn := busConn(t, addr)
	m := waitMenu(t, conn, item, "Salir", func(m menuItem) bool { _, ok := m.find("Salir"); return ok })
	quit, _ := m.find("Salir")
	if len(quit.Children) != 0 {
		t.Fatalf("Salir has a submenu although a dialog can ask: %q", quit.visible(""))
	}
	click(t, conn, item, quit.ID)
	p.waitLine("tray: quit not confirmed")
	b, _ := os.ReadFile(args)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, want := range []string{"--question", "--text=¿Cerrar el agente?", "No se podrán firmar ventas hasta que vuelva a abrirlo.",
		"--ok-label=Sí", "--cancel-label=No", "--default-cancel"} {
		if !slices.Contains(got, want) {
			t.Errorf("zenity was not given %q: %q", want, got)
		}
	}
	if h, err := p.client().Health(context.Background()); err != nil || !h.OK {
		t.Fatalf("the agent does not serve after Salir > No: %+v, %v", h, err)
	}
	click(t, conn, item, quit.ID)
	if code := p.wait(15 * time.Second); code != 0 {
		t.Fatalf("exit status %d after Salir > Sí", code)
	}
	if len(p.stderr.lines("tray: quit confirmed")) != 1 {
		t.Errorf("the quit was not logged as confirmed:\n%s", p.stderr.String())
	}
}
