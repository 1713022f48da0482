package tray

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Agent is the running agent as the tray sees it; the application implements
// it in-process (app.Runner: see the package doc), over its facade and the
// configuration.
type Agent interface {
	// State returns the local module's state report (what GET /state
	// answers). An error means the agent is not running.
	State(ctx context.Context) (*apitype.StateReport, error)
	// Settings returns the choices the menu offers and where things are.
	Settings() Settings
	// Print prints the signed CFE uuid on the printer called alias, as POST
	// /pdf does. Errors: cfe.ENOTFOUND (no such CFE or printer),
	// cfe.EUNAVAILABLE (printing is not possible now, or the printer
	// refused or failed), cfe.EINTERNAL.
	Print(ctx context.Context, uuid, alias string) error
	// UseProfile makes name the active profile and restarts the agent's parts
	// on it. Errors: cfe.ENOTFOUND (no such profile), cfe.EINVALID (the
	// configuration breaks a rule), cfe.EINTERNAL.
	UseProfile(name string) error
	// UseDefaultPrinter makes alias the active profile's default printer.
	// Errors: cfe.ENOTFOUND (no such printer), cfe.EINTERNAL.
	UseDefaultPrinter(alias string) error
	// SetAutostart turns starting with the user's session on or off.
	// Errors: cfe.EINTERNAL.
	SetAutostart(on bool) error
	// ExportDiagnostics writes a diagnostic archive at path (the agent's own
	// diagnostics folder when path is "") and returns where it went.
	// Errors: cfe.EINTERNAL.
	ExportDiagnostics(ctx context.Context, path string) (string, error)
}

// Settings are the choices the menu offers and where things are.
type Settings struct {
	Profiles       []string // every profile, sorted
	Profile        string   // the active one
	Printers       []string // the active profile's printers, sorted
	DefaultPrinter string
	StatusURL      string // the status page (the local module's base URL)
	LogDir         string
	Autostart      bool
}

// Config configures Run. Only Agent is required.
type Config struct {
	Agent Agent
	// Logger receives what the tray did and what failed; discarded when nil.
	Logger *slog.Logger
	// Refresh is how often the state is read; 5 s when zero.
	Refresh time.Duration
	// Open opens a URL or a folder with the desktop's default application;
	// the platform's opener (xdg-open, open, rundll32) when nil.
	Open func(target string) error
	// Notify shows a desktop notification (org.freedesktop.Notifications on
	// Linux, a balloon of the tray icon on Windows); the platform's when nil.
	Notify func(n Notification) error
	// AskSavePath asks the cashier where to save a file named name, with the
	// desktop's save dialog. It returns ErrNoDialog when there is none (the
	// file then goes to the desktop folder, see SaveDir) and ErrCanceled
	// when the cashier closed the dialog; the platform's when nil.
	AskSavePath func(ctx context.Context, name string) (string, error)
	// SaveDir is where a file goes when there is no save dialog: the
	// desktop folder when there is one, else the home folder; the platform's
	// when nil.
	SaveDir func() (string, error)
	// Confirm asks the cashier whether to close the agent ("Salir"): true
	// for yes. The platform's dialog when nil (zenity or kdialog on Linux,
	// MessageBoxW on Windows); where there is none, "Salir" is a submenu
	// that asks instead.
	Confirm func(ctx context.Context) (bool, error)
	// confirmDialog is whether Confirm shows a dialog (a Confirm given
	// by the caller does).
	confirmDialog bool
}

// Notification is a desktop notification, in Spanish.
type Notification struct {
	Summary string
	Body    string
	Urgent  bool // the agent cannot sign: critical urgency, error icon
	Failed  bool // something the cashier asked for failed: error icon, normal urgency
}

// Errors of AskSavePath.
var (
	ErrNoDialog = errors.New("no save dialog on this desktop")
	ErrCanceled = errors.New("the save dialog was canceled")
)

// ErrUnavailable is wrapped by Available's error when no tray can be shown.
var ErrUnavailable = errors.New("no tray available")

// ErrNoHost is wrapped by Available's error (with ErrUnavailable) when a
// session bus exists but no tray host is registered on it yet: WaitHost can
// then wait for one (a panel that starts after the agent).
var ErrNoHost = errors.New("no tray host")

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Refresh <= 0 {
		c.Refresh = 5 * time.Second
	}
	if c.Open == nil {
		c.Open = OpenDefault
	}
	if c.Confirm != nil {
		c.confirmDialog = true
	}
}

// actionTimeout bounds a reprint or a diagnostic export started from the menu.
const actionTimeout = time.Minute

// dialogTimeout bounds how long a save dialog may stay open.
const dialogTimeout = 10 * time.Minute
