//go:build linux || windows || (darwin && cgo)

package tray

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"fyne.io/systray"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Menu labels.
const (
	labelReprint    = "Reimprimir último comprobante"
	labelStatusPage = "Abrir página de estado"
	labelSearch     = "Buscar comprobante"
	labelProfiles   = "Perfil"
	labelPrinters   = "Impresora predeterminada"
	labelAutostart  = "Iniciar con el sistema"
	labelLogs       = "Abrir carpeta de registros"
	labelDiagnose   = "Exportar diagnóstico" // "…" added when a save dialog will ask where
	labelQuit       = "Salir"
)

// appName names the agent in notifications and the tray.
const appName = "Agente CFE"

// Run shows the icon and the menu and blocks until the cashier chooses
// "Salir" or ctx ends. Call it from the main goroutine (macOS needs the main
// thread) and only once per process; check Available first. It returns an
// error only when the tray failed; the tray library's own failures (a panic
// on a missing bus connection) are recovered.
func Run(ctx context.Context, cfg Config) (err error) {
	cfg.defaults()
	if cfg.Notify == nil {
		cfg.Notify = newNotifier(cfg.Logger).notify
	}
	if cfg.AskSavePath == nil {
		cfg.AskSavePath = askSavePath
	}
	if cfg.SaveDir == nil {
		cfg.SaveDir = saveDir
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := &menu{cfg: cfg, log: cfg.Logger, actions: make(chan func(), 8)}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tray: %v", r)
		}
	}()
	// Subscribed before the icon registers, so that no host change is missed.
	hostLog := watchHostLog(ctx, m.log)
	go hostLog()
	systray.Run(func() {
		m.build()
		go func() {
			m.loop(ctx)
			systray.Quit()
		}()
	}, nil)
	return nil
}

// menu owns the systray items. Only loop's goroutine touches its fields after
// build; item goroutines send it actions.
type menu struct {
	cfg     Config
	log     *slog.Logger
	actions chan func()
	quit    bool

	reason    *systray.MenuItem // the red or amber reason, first; hidden when all is well
	lines     [4]*systray.MenuItem
	backup    *systray.MenuItem // the last backup (backupline.go)
	notice    *systray.MenuItem
	reprint   *systray.MenuItem
	profiles  choiceMenu
	printers  choiceMenu
	autostart *systray.MenuItem

	rep      *apitype.StateReport
	settings Settings
	red      redWatch
}

// choiceMenu is a submenu of checkable names, one of them checked.
type choiceMenu struct {
	parent *systray.MenuItem
	items  []*systray.MenuItem
	names  []string
	choose func(name string) error
	done   string // Spanish notice after a successful choice, with %s
}

func (m *menu) build() {
	systray.SetTitle(appName)
	m.reason = systray.AddMenuItem("", "")
	m.reason.Disable()
	m.reason.Hide()
	for i := range m.lines {
		m.lines[i] = systray.AddMenuItem("", "")
		m.lines[i].Disable()
	}
	m.backup = systray.AddMenuItem("", "")
	m.backup.Disable()
	m.notice = systray.AddMenuItem("", "")
	m.notice.Disable()
	m.notice.Hide()
	systray.AddSeparator()
	m.reprint = m.add(systray.AddMenuItem(labelReprint, "Vuelve a imprimir el último comprobante firmado"), m.doReprint)
	m.add(systray.AddMenuItem(labelStatusPage, "Abre la página de estado en el navegador"), m.doStatusPage)
	m.add(systray.AddMenuItem(labelSearch, "Abre la caja en el navegador: buscar, reimprimir, venta manual, cierre del día"), m.doSearch)
	m.profiles = choiceMenu{parent: systray.AddMenuItem(labelProfiles, "Cambia el perfil activo"),
		choose: m.cfg.Agent.UseProfile, done: "Perfil activo: %s"}
	m.printers = choiceMenu{parent: systray.AddMenuItem(labelPrinters, "Elige la impresora de las reimpresiones"),
		choose: m.cfg.Agent.UseDefaultPrinter, done: "Impresora predeterminada: %s"}
	m.autostart = m.add(systray.AddMenuItemCheckbox(labelAutostart, "Inicia el agente al iniciar la sesión", false), m.doAutostart)
	m.add(systray.AddMenuItem(labelLogs, "Abre la carpeta de los registros del agente"), m.doLogs)
	diagnose := labelDiagnose
	if hasSaveDialog() {
		diagnose += "…"
	}
	m.add(systray.AddMenuItem(diagnose, "Guarda un archivo .zip para soporte técnico"), m.doDiagnose)
	systray.AddSeparator()
	m.add(systray.AddMenuItem(labelQuit, "Detiene el agente"), func() { m.quit = true })
	m.refresh(context.Background())
}

// add forwards the item's clicks to loop as do.
func (m *menu) add(item *systray.MenuItem, do func()) *systray.MenuItem {
	go func() {
		for range item.ClickedCh {
			m.actions <- do
		}
	}()
	return item
}

// loop runs actions and refreshes the menu until "Salir" or ctx's end.
func (m *menu) loop(ctx context.Context) {
	t := time.NewTicker(m.cfg.Refresh)
	defer t.Stop()
	for !m.quit {
		select {
		case <-ctx.Done():
			return
		case do := <-m.actions:
			do()
			if !m.quit {
				m.refresh(ctx)
			}
		case <-t.C:
			m.refresh(ctx)
		}
	}
	m.log.Info("tray: quit chosen")
}

// refresh reads the state and the settings and updates what changed.
func (m *menu) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Refresh)
	defer cancel()
	rep, err := m.cfg.Agent.State(ctx)
	if err != nil {
		m.log.Warn("tray: reading the agent's state", "err", err)
		rep = nil
	}
	m.rep = rep
	m.settings = m.cfg.Agent.Settings()

	// Tooltip and icon are set on every refresh, not only on change: systray
	// loses values set before its D-Bus objects exist (seen when the first
	// refresh races the item's registration), and setting them is cheap.
	a := Assess(rep, err)
	systray.SetTooltip(a.Tooltip(m.settings.Profile))
	setIcon(a.State)
	if l := reasonLine(a); l == "" {
		m.reason.Hide()
	} else {
		m.reason.SetTitle(l)
		m.reason.Show()
	}
	if m.red.turnedRed(a.State) {
		m.notify(Notification{Summary: "El agente CFE no puede firmar", Body: a.Reason, Urgent: true})
	}
	for i, l := range statusLines(rep, m.settings.Profile) {
		m.lines[i].SetTitle(l)
	}
	m.backup.SetTitle(backupLine(rep, time.Now()))
	if lastReceipt(rep) == "" || m.settings.DefaultPrinter == "" {
		m.reprint.Disable()
	} else {
		m.reprint.Enable()
	}
	m.sync(&m.profiles, m.settings.Profiles, m.settings.Profile)
	m.sync(&m.printers, m.settings.Printers, m.settings.DefaultPrinter)
	if m.settings.Autostart {
		m.autostart.Check()
	} else {
		m.autostart.Uncheck()
	}
}

// sync makes the submenu list names with current checked, reusing items.
func (m *menu) sync(c *choiceMenu, names []string, current string) {
	c.names = slices.Clone(names)
	for i, name := range names {
		if i == len(c.items) {
			c.items = append(c.items, m.add(c.parent.AddSubMenuItemCheckbox(name, "", false), m.chooser(c, i)))
		}
		it := c.items[i]
		it.SetTitle(name)
		it.Show()
		if name == current {
			it.Check()
		} else {
			it.Uncheck()
		}
	}
	for _, it := range c.items[len(names):] {
		it.Hide()
	}
	if len(names) == 0 {
		c.parent.Disable()
	} else {
		c.parent.Enable()
	}
}

// chooser is the action of the i-th item of c: choose the name it shows now.
func (m *menu) chooser(c *choiceMenu, i int) func() {
	return func() {
		if i >= len(c.names) {
			return
		}
		name := c.names[i]
		if err := c.choose(name); err != nil {
			m.fail("no se pudo elegir "+name, err)
			return
		}
		m.say(fmt.Sprintf(c.done, name))
	}
}

func (m *menu) doReprint() {
	uuid, alias := lastReceipt(m.rep), m.settings.DefaultPrinter
	if uuid == "" || alias == "" {
		m.say("No hay comprobante o impresora para reimprimir")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
	defer cancel()
	if err := m.cfg.Agent.Print(ctx, uuid, alias); err != nil {
		msg := m.fail("no se pudo reimprimir", err)
		m.notify(Notification{Summary: "No se pudo reimprimir", Body: msg})
		return
	}
	m.log.Info("tray: reprinted the last receipt", "uuid", uuid, "printer", alias)
	m.say("Reimpreso en " + alias)
	m.notify(Notification{Summary: "Comprobante reimpreso", Body: receiptName(m.rep) + " se envió a la impresora " + alias + "."})
}

func (m *menu) doStatusPage() { m.open(m.settings.StatusURL, "la página de estado") }
func (m *menu) doLogs()       { m.open(m.settings.LogDir, "la carpeta de registros") }

// doSearch opens the /caja page, beside the status page.
func (m *menu) doSearch() {
	if m.settings.StatusURL == "" {
		m.open("", "la caja")
		return
	}
	m.open(strings.TrimSuffix(m.settings.StatusURL, "/")+"/caja", "la caja")
}

func (m *menu) open(target, what string) {
	if target == "" {
		m.say("No se sabe dónde está " + what)
		return
	}
	if err := m.cfg.Open(target); err != nil {
		m.fail("no se pudo abrir "+what, err)
	}
}

func (m *menu) doAutostart() {
	on := !m.settings.Autostart
	if err := m.cfg.Agent.SetAutostart(on); err != nil {
		m.fail("no se pudo cambiar el inicio con el sistema", err)
		return
	}
	if on {
		m.say("El agente se iniciará con el sistema")
	} else {
		m.say("El agente ya no se iniciará con el sistema")
	}
}

// doDiagnose asks where to save the diagnostic archive (the dialog runs on a
// goroutine of its own, so the menu keeps refreshing while it is open) and
// then exports it there. Without a dialog the archive goes to the desktop
// folder and a notification names it.
func (m *menu) doDiagnose() {
	name := "cfe-agent-diagnostico-" + time.Now().Format("20060102-150405") + ".zip"
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), dialogTimeout)
		defer cancel()
		path, err := m.cfg.AskSavePath(ctx, name)
		switch {
		case errors.Is(err, ErrCanceled):
			m.actions <- func() { m.say("No se exportó el diagnóstico") }
			return
		case errors.Is(err, ErrNoDialog):
			var dir string
			if dir, err = m.cfg.SaveDir(); err == nil {
				path = filepath.Join(dir, name)
			}
		}
		if err != nil {
			m.actions <- func() { m.fail("no se pudo elegir dónde guardar el diagnóstico", err) }
			return
		}
		m.actions <- func() { m.exportDiagnostics(path) }
	}()
}

func (m *menu) exportDiagnostics(path string) {
	ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
	defer cancel()
	path, err := m.cfg.Agent.ExportDiagnostics(ctx, path)
	if err != nil {
		msg := m.fail("no se pudo exportar el diagnóstico", err)
		m.notify(Notification{Summary: "No se pudo exportar el diagnóstico", Body: msg})
		return
	}
	m.log.Info("tray: diagnostics exported", "path", path)
	m.say("Diagnóstico guardado en " + path)
	m.notify(Notification{Summary: "Diagnóstico guardado", Body: "El archivo para soporte técnico está en " + path})
	m.open(filepath.Dir(path), "la carpeta del diagnóstico")
}

// say shows a notice line at the top of the menu.
func (m *menu) say(notice string) {
	m.notice.SetTitle(notice)
	m.notice.Show()
}

// fail logs err and shows what failed, with the error's Spanish message; it
// returns the line shown.
func (m *menu) fail(what string, err error) string {
	m.log.Error("tray: "+what, "err", err)
	msg := what
	var ce *cfe.Error
	if errors.As(err, &ce) && ce.Message != "" {
		msg += ": " + ce.Message
	}
	m.say(msg)
	return msg
}

// notify sends a desktop notification without holding the menu; a failure
// is logged only (the menu's notice line says the same).
func (m *menu) notify(n Notification) {
	go func() {
		if err := m.cfg.Notify(n); err != nil {
			m.log.Warn("tray: desktop notification", "summary", n.Summary, "err", err)
		}
	}()
}

func setIcon(s assets.IconState) {
	if runtime.GOOS == "windows" {
		systray.SetIcon(assets.IconICO(s))
		return
	}
	systray.SetIcon(assets.IconPNG(s))
}
