package main

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/autostart"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/winstop"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/logs"
	"github.com/cfe-agent/cfe-agent/printing"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/tray"
)

// serveOptions are the flags of the commands that run the agent.
type serveOptions struct {
	listen   string // --listen overrides the profile's address
	headless bool   // --headless: never the tray
	// --autostart: started by an autostart entry; exits 0 quietly when
	// another agent runs on the data directory (internal/instance).
	autostart bool
}

// trayPreflightTimeout bounds the question whether a tray host exists.
const trayPreflightTimeout = 3 * time.Second

// addServeCommands makes the root command run the agent (tray when available,
// else headless) and adds "serve" (always headless).
func addServeCommands(root *cobra.Command, opts *app.Options) {
	var so serveOptions
	root.Flags().StringVar(&so.listen, "listen", "", "`DIRECCIÓN` de escucha en lugar de la del perfil (por ejemplo 127.0.0.1:18787, 0.0.0.0:18787)")
	root.Flags().BoolVar(&so.headless, "headless", false, "ejecuta sin el ícono de la bandeja")
	root.Flags().BoolVar(&so.autostart, "autostart", false, "inicio con la sesión: si ya hay un agente con estos datos, termina sin abrir su página de estado")
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runAgent(cmd.Context(), *opts, so) }

	serve := &cobra.Command{
		Use:   "serve",
		Short: "Ejecuta el agente sin ícono de bandeja (servidores, contenedores, CI)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := so
			s.headless = true
			return runAgent(cmd.Context(), *opts, s)
		},
	}
	serve.Flags().StringVar(&so.listen, "listen", "", "`DIRECCIÓN` de escucha en lugar de la del perfil")
	root.AddCommand(serve)
}

// runAgent runs the agent until ctx ends or the cashier chooses "Salir":
// Main.Run (agentmain.go).
func runAgent(ctx context.Context, opts app.Options, so serveOptions) error {
	// On Windows a hidden window turns taskkill's WM_CLOSE and the end of
	// the session into the same stop (internal/winstop).
	ctx, closed, err := winstop.Watch(ctx)
	defer closed()
	m := NewMain(opts, so)
	m.stopWindowErr = err
	return m.Run(ctx)
}

// trayUnavailable says why the agent runs headless, or nil when it shows the
// tray.
func trayUnavailable(ctx context.Context, headless bool) error {
	if headless {
		return errors.New("--headless or serve was given")
	}
	ctx, cancel := context.WithTimeout(ctx, trayPreflightTimeout)
	defer cancel()
	return tray.Available(ctx)
}

// runner keeps the agent's parts (a session) open and reopens them when the
// tray switches the profile or the default printer. It implements
// tray.Agent.
type runner struct {
	dataDir  string
	log      *slog.Logger
	redactor *logs.Redactor

	mu   sync.Mutex // guards opts and cur; held while reopening
	opts app.Options
	cur  *session // nil only when reopening failed twice
}

// session is one profile's agent, the local module serving it, and the
// background work it runs until stop.
type session struct {
	a    *app.Agent
	srv  *localapi.Server
	stop context.CancelFunc
	done sync.WaitGroup
	// calls are the tray's in-process calls using the session (see hold):
	// close waits for them before it closes the store, as srv.Close drains
	// the requests of the local module.
	calls sync.WaitGroup
}

// open opens a session on r.opts; the caller holds r.mu or is the only user.
// The configuration is loaded once, and every part the local module reads is
// built before it serves: request goroutines only read the agent.
func (r *runner) open(ctx context.Context) error {
	dataDir, cfg, created, err := app.LoadConfig(r.opts)
	if err != nil {
		return err
	}
	r.redactor.SetSecrets(configSecrets(cfg)...) // before anything is logged about the profile
	a, err := app.OpenLoaded(ctx, dataDir, cfg, created, r.log)
	if err != nil {
		return err
	}
	settle := a.CheckNumbering(ctx)
	a.Backups, a.AdminToken = app.NewBackupManager(a, r.log), app.NewAdminToken()
	d := app.NewDeliverer(a) // sets a.Deliverer, which requests read (kickingIssuer, hostedState)
	srv := newServer(a, a.Profile.Listen, r.log)
	if err := srv.Open(); err != nil {
		a.Close()
		return err
	}
	bg, stop := context.WithCancel(context.Background())
	s := &session{a: a, srv: srv, stop: stop}
	if d != nil {
		s.done.Go(func() { d.Run(bg) })
	}
	if settle != nil {
		s.done.Go(func() { settle(bg) })
	}
	s.done.Go(func() { a.Backups.Run(bg) })
	s.done.Go(func() { runArchiver(bg, a, r.log) })
	r.cur = s
	// The run file lets one-shot commands (doctor, diagnostics) find this agent.
	if err := app.WriteRunFile(a.DataDir, a.Name, app.RunInfo{PID: os.Getpid(), BaseURL: srv.BaseURL(), Started: time.Now(), AdminToken: a.AdminToken}); err != nil {
		r.log.Warn("could not write the run file", "file", app.RunFilePath(a.DataDir, a.Name), "err", err)
	}
	r.log.Info("cfe-agent listening", "base_url", srv.BaseURL(), "urls", srv.URLs(), "profile", a.Name,
		"environment", a.Profile.Environment, "version", version)
	return nil
}

// close closes the current session, the server first.
func (r *runner) close() {
	if r.cur == nil {
		return
	}
	os.Remove(app.RunFilePath(r.cur.a.DataDir, r.cur.a.Name))
	if err := r.cur.srv.Close(); err != nil {
		r.log.Error("closing the local module", "err", err)
	}
	r.cur.calls.Wait() // no new one: hold takes r.mu, which the caller holds
	r.cur.stop()
	r.cur.done.Wait()
	r.cur.a.Close()
	r.cur = nil
}

// reopen closes the session, applies change (to the configuration or to
// r.opts) and opens a new one. When the new one does not open, undo restores
// what change did and the old configuration is opened again; the error of
// the failed attempt is returned.
func (r *runner) reopen(change, undo func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx := context.Background()
	r.close()
	err := change()
	if err == nil {
		if err = r.open(ctx); err == nil {
			return nil
		}
	}
	r.log.Error("reopening the agent failed: back to the previous configuration", "err", err)
	if uerr := undo(); uerr != nil {
		r.log.Error("restoring the previous configuration", "err", uerr)
	}
	if oerr := r.open(ctx); oerr != nil {
		r.log.Error("the agent cannot reopen: it no longer serves", "err", oerr)
	}
	return err
}

// current returns the open session, or an EUNAVAILABLE error. It is for
// reading the session's configuration; a call that uses its store or its
// server holds it (hold).
func (r *runner) current() (*session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil, cfe.Errorf(cfe.EUNAVAILABLE, "el agente no está funcionando")
	}
	return r.cur, nil
}

// currentWithOptions is current with r.opts, both read under r.mu.
func (r *runner) currentWithOptions() (*session, app.Options, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil, r.opts, cfe.Errorf(cfe.EUNAVAILABLE, "el agente no está funcionando")
	}
	return r.cur, r.opts, nil
}

// hold returns the open session and r.opts, and holds the session open until
// release is called: close waits for it, so that a reopen from the tray does
// not close the store under a call that reads it. A held call must not wait
// for r.mu (reopen holds it while it waits for the call).
func (r *runner) hold() (s *session, opts app.Options, release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil, r.opts, nil, cfe.Errorf(cfe.EUNAVAILABLE, "el agente no está funcionando")
	}
	s = r.cur
	s.calls.Add(1) // under r.mu: never while close waits
	return s, r.opts, s.calls.Done, nil
}

// State implements tray.Agent in-process: the report the local module's
// GET /state answers (localapi.Server.Report), as the status page reads it.
func (r *runner) State(ctx context.Context) (*apitype.StateReport, error) {
	s, _, release, err := r.hold()
	if err != nil {
		return nil, err
	}
	defer release()
	return s.srv.Report(ctx), nil
}

// Settings implements tray.Agent.
func (r *runner) Settings() tray.Settings {
	st := tray.Settings{LogDir: logs.Dir(r.dataDir)}
	if on, err := autostart.Enabled(autostartName); err == nil {
		st.Autostart = on
	}
	s, err := r.current()
	if err != nil {
		return st
	}
	st.Profiles = slices.Sorted(maps.Keys(s.a.Config.Profiles))
	st.Profile = s.a.Name
	st.Printers = slices.Sorted(maps.Keys(s.a.Profile.Printers))
	st.DefaultPrinter = s.a.Profile.DefaultPrinter
	st.StatusURL = s.srv.BaseURL() + "/"
	return st
}

// Print implements tray.Agent in-process: the local module prints as its
// POST /pdf does (localapi.Server.Print), with the profile's template and
// copies.
func (r *runner) Print(ctx context.Context, uuid, alias string) error {
	s, _, release, err := r.hold()
	if err != nil {
		return err
	}
	defer release()
	return s.srv.Print(ctx, printing.CFERef{UUID: uuid}, alias, 0)
}

// UseProfile implements tray.Agent: the file's active profile changes and
// the agent reopens on it.
func (r *runner) UseProfile(name string) error {
	s, opts, err := r.currentWithOptions()
	if err != nil {
		return err
	}
	oldActive, oldFlag := s.a.Config.Active, opts.Profile
	return r.reopen(func() error {
		if err := profiles.Use(r.dataDir, name); err != nil {
			return err
		}
		r.opts.Profile = name
		return nil
	}, func() error {
		r.opts.Profile = oldFlag
		return profiles.Use(r.dataDir, oldActive)
	})
}

// UseDefaultPrinter implements tray.Agent: the active profile's default
// printer changes in the file and the agent reopens with it.
func (r *runner) UseDefaultPrinter(alias string) error {
	s, err := r.current()
	if err != nil {
		return err
	}
	name, old := s.a.Name, s.a.Profile.DefaultPrinter
	return r.reopen(func() error {
		return profiles.SetDefaultPrinter(r.dataDir, name, alias)
	}, func() error {
		if old == "" {
			return nil
		}
		return profiles.SetDefaultPrinter(r.dataDir, name, old)
	})
}

// SetAutostart implements tray.Agent.
func (r *runner) SetAutostart(on bool) error {
	r.mu.Lock()
	opts := r.opts
	r.mu.Unlock()
	return setAutostart(opts, on)
}

// ExportDiagnostics implements tray.Agent: the archive goes to path, or to
// the data directory's diagnostics folder when path is "".
func (r *runner) ExportDiagnostics(ctx context.Context, path string) (string, error) {
	s, opts, release, err := r.hold()
	if err != nil {
		return "", err
	}
	defer release()
	return app.ExportDiagnostics(ctx, app.DiagnosticsSource{Version: version, DataDir: r.dataDir, Config: s.a.Config,
		State:  func(ctx context.Context) (*apitype.StateReport, error) { return s.srv.Report(ctx), nil },
		Doctor: doctorTo(opts)}, path)
}

// newServer builds the local module of an open agent, listening on listen.
func newServer(a *app.Agent, listen string, log *slog.Logger) *localapi.Server {
	tokens := make([]string, len(a.Profile.LAN.Tokens))
	for i, t := range a.Profile.LAN.Tokens {
		tokens[i] = t.Value()
	}
	page := newStatusPage(a)
	cfg := localapi.ServerConfig{
		Listen:         listen,
		Version:        version,
		Profile:        a.Name,
		Environment:    string(a.Profile.Environment),
		AllowedOrigins: a.Profile.AllowedOrigins,
		LAN:            localapi.LANConfig{Enabled: a.Profile.LAN.Enabled, Tokens: tokens, AllowedHosts: a.Profile.LAN.AllowedHosts},
		Logger:         log,
		Issuer:         kickingIssuer{a},
		State:          a,
		Printing:       app.NewPrinting(a),
		PrinterList:    app.NewPrinters(a),
		StatusPage:     page,
	}
	if a.Backups != nil {
		cfg.Backups, cfg.AdminToken = a.Backups, a.AdminToken
		cfg.Repairs = recoverer{a}
	}
	hostedParts(a, &cfg)
	srv := localapi.NewServer(cfg)
	page.report = srv.Report
	return srv
}

// configSecrets lists every secret of every profile, for the log's redactor.
func configSecrets(cfg *profiles.Config) []string {
	var out []string
	for _, p := range cfg.Profiles {
		out = append(out, p.Certificate.Password.Value(), p.Hosted.APIKey.Value(), p.Hosted.Secret.Value())
		for _, t := range p.LAN.Tokens {
			out = append(out, t.Value())
		}
	}
	return out
}

var _ tray.Agent = (*runner)(nil)
