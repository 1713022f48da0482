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
	labelDetails    = "Detalles…"
	labelQuit       = "Salir"
	labelQuitYes    = "Sí, cerrar el agente"
	labelQuitNo     = "No, seguir firmando"
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
	if cfg.Confirm == nil {
		cfg.Confirm, cfg.confirmDialog = confirmQuit, hasConfirmDialog()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := &menu{cfg: cfg, log: cfg.Logger, actions: make(chan func(), 8), jobFailSeen: time.Now()}
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

	testMode  *systray.MenuItem                 // MODO PRUEBA, first; hidden in production
	reasons   [maxReasonLines]*systray.MenuItem // the red or amber reason; hidden when all is well
	details   *systray.MenuItem                 // "Detalles…": the status page, with the reason
	lines     [4]*systray.MenuItem
	backup    *systray.MenuItem // the last backup (backupline.go)
	report    *systray.MenuItem // the daily report to DGI (reportline.go); hidden when the agent knows none
	notice    *systray.MenuItem
	reprint   *systray.MenuItem
	profiles  choiceMenu
	printers  choiceMenu
	autostart *systray.MenuItem

	rep      *apitype.StateReport
	settings Settings
	red      redWatch
	asking   bool // the quit question is open
	// jobFailSeen is when the last failed print job was notified (or the
	// tray started): a newer one in the report is notified once.
	jobFailSeen time.Time
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
	m.testMode = systray.AddMenuItem(testModeLine, "Perfil de prueba: los comprobantes no se declaran a DGI")
	m.testMode.Disable()
	m.testMode.Hide()
	for i := range m.reasons {
		m.reasons[i] = systray.AddMenuItem("", "")
		m.reasons[i].Disable()
		m.reasons[i].Hide()
	}
	m.details = m.add(systray.AddMenuItem(labelDetails, "Abre la página de estado con todos los avisos"), m.doStatusPage)
	m.details.Hide()
	for i := range m.lines {
		m.lines[i] = systray.AddMenuItem("", "")
		m.lines[i].Disable()
	}
	m.backup = systray.AddMenuItem("", "")
	m.backup.Disable()
	m.report = systray.AddMenuItem("", "")
	m.report.Disable()
	m.report.Hide()
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
	quit := systray.AddMenuItem(labelQuit, "Detiene el agente")
	if m.cfg.confirmDialog {
		m.add(quit, m.doQuit)
	} else {
		// No dialog to ask with: the question is a submenu.
		for _, l := range wrapText(quitQuestion+" "+quitDetail, maxLineRunes) {
			quit.AddSubMenuItem(menuLabel(l), "").Disable()
		}
		m.add(quit.AddSubMenuItem(labelQuitYes, "Detiene el agente: no se firman ventas hasta que vuelva a abrirlo"),
			m.quitConfirmed)
		m.add(quit.AddSubMenuItem(labelQuitNo, "El agente sigue funcionando"), func() {})
	}
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
	setIcon(a.State, a.Test)
	if a.Test {
		m.testMode.Show()
	} else {
		m.testMode.Hide()
	}
	lines := reasonLines(a)
	for i, it := range m.reasons {
		if i < len(lines) {
			it.SetTitle(menuLabel(lines[i]))
			it.Show()
		} else {
			it.Hide()
		}
	}
	if len(lines) > 0 && m.settings.StatusURL != "" {
		m.details.Show()
	} else {
		m.details.Hide()
	}
	if m.red.turnedRed(a.State) {
		summary := "El agente CFE no puede firmar"
		if a.Signs {
			summary = "El agente CFE necesita atención urgente"
		}
		m.notify(Notification{Summary: summary, Body: a.Reason, Urgent: true})
	}
	if n, ok := failedJob(rep, m.jobFailSeen); ok {
		m.jobFailSeen = rep.Printer.At
		m.notify(n)
	}
	for i, l := range statusLines(rep, m.settings.Profile) {
		m.lines[i].SetTitle(menuLabel(l))
	}
	m.backup.SetTitle(menuLabel(backupLine(rep, time.Now())))
	if l := reportLine(rep); l == "" {
		m.report.Hide()
	} else {
		m.report.SetTitle(menuLabel(l))
		m.report.Show()
	}
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
			c.items = append(c.items, m.add(c.parent.AddSubMenuItemCheckbox(menuLabel(name), "", false), m.chooser(c, i)))
		}
		it := c.items[i]
		it.SetTitle(menuLabel(name))
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
		m.jobFailSeen = time.Now() // notified here, not again from the report
		msg := m.fail("no se pudo reimprimir", err)
		m.notify(Notification{Summary: "No se pudo reimprimir", Body: msg, Failed: true})
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
		m.notify(Notification{Summary: "No se pudo exportar el diagnóstico", Body: msg, Failed: true})
		return
	}
	m.log.Info("tray: diagnostics exported", "path", path)
	m.say("Diagnóstico guardado en " + path)
	m.notify(Notification{Summary: "Diagnóstico guardado", Body: "El archivo para soporte técnico está en " + path})
	m.open(filepath.Dir(path), "la carpeta del diagnóstico")
}

// doQuit asks the quit question with the desktop's dialog, on a goroutine
// of its own (the menu keeps refreshing while it is open), and quits on
// "Sí". A second click while it is open does not ask again. When the dialog
// cannot be shown the agent stays, and the notice line says so.
func (m *menu) doQuit() {
	if m.asking {
		return
	}
	m.asking = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), dialogTimeout)
		defer cancel()
		yes, err := m.cfg.Confirm(ctx)
		m.actions <- func() {
			m.asking = false
			switch {
			case err != nil:
				m.fail("no se pudo preguntar si cerrar el agente: sigue funcionando", err)
			case yes:
				m.quitConfirmed()
			default:
				m.log.Info("tray: quit not confirmed")
			}
		}
	}()
}

// quitConfirmed ends the loop: the cashier said yes.
func (m *menu) quitConfirmed() {
	m.log.Info("tray: quit confirmed")
	m.quit = true
}

// say shows a notice line at the top of the menu.
func (m *menu) say(notice string) {
	notice = menuLabel(notice)
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

// setIcon shows the icon of state s, with the test mode's mark when test.
func setIcon(s assets.IconState, test bool) {
	switch {
	case runtime.GOOS == "windows" && test:
		systray.SetIcon(assets.TestModeIconICO(s))
	case runtime.GOOS == "windows":
		systray.SetIcon(assets.IconICO(s))
	case test:
		systray.SetIcon(assets.TestModeIconPNG(s))
	default:
		systray.SetIcon(assets.IconPNG(s))
	}
}
