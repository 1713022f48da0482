package tray

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi"
)

// Agent is the running agent as the tray sees it; cmd/cfe-agent implements it
// over the local module's HTTP API and the configuration.
type Agent interface {
	// State returns the local module's state report (GET /state). An error
	// means the module did not answer.
	State(ctx context.Context) (*localapi.StateReport, error)
	// Settings returns the choices the menu offers and where things are.
	Settings() Settings
	// Print prints the signed CFE uuid on the printer called alias (POST
	// /pdf). Errors: cfe.ENOTFOUND (no such CFE or printer), cfe.EUNAVAILABLE
	// (printing is not possible now), cfe.EINTERNAL.
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
	// ExportDiagnostics writes a diagnostic archive and returns its path.
	// Errors: cfe.EINTERNAL.
	ExportDiagnostics(ctx context.Context) (string, error)
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
}

// ErrUnavailable is wrapped by Available's error when no tray can be shown.
var ErrUnavailable = errors.New("no tray available")

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Refresh <= 0 {
		c.Refresh = 5 * time.Second
	}
	if c.Open == nil {
		c.Open = openDefault
	}
}

// actionTimeout bounds a reprint or a diagnostic export started from the menu.
const actionTimeout = time.Minute
