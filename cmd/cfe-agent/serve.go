package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/autostart"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/internal/winstop"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/logs"
	"github.com/cfe-agent/cfe-agent/printing"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
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

// recentReceipts is how many of the last signed CFEs the state reports.
const recentReceipts = 10

// trayPreflightTimeout bounds the question whether a tray host exists.
const trayPreflightTimeout = 3 * time.Second

// addServeCommands makes the root command run the agent (tray when available,
// else headless) and adds "serve" (always headless).
func addServeCommands(root *cobra.Command, opts *globalOptions) {
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
func runAgent(ctx context.Context, opts globalOptions, so serveOptions) error {
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
	opts globalOptions
	cur  *session // nil only when reopening failed twice
}

// session is one profile's agent, the local module serving it, and the
// background work it runs until stop.
type session struct {
	a    *agent
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
	dataDir, cfg, created, err := loadConfig(r.opts)
	if err != nil {
		return err
	}
	r.redactor.SetSecrets(configSecrets(cfg)...) // before anything is logged about the profile
	a, err := openLoaded(ctx, dataDir, cfg, created, r.log)
	if err != nil {
		return err
	}
	settle := a.checkNumbering(ctx)
	a.backups, a.adminToken = newBackupManager(a, r.log), newAdminToken()
	d := newDeliverer(a) // sets a.deliverer, which requests read (kickingIssuer, hostedState)
	srv := newServer(a, a.profile.Listen, r.log)
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
	s.done.Go(func() { a.backups.Run(bg) })
	s.done.Go(func() { runArchiver(bg, a, r.log) })
	r.cur = s
	// The run file lets one-shot commands (doctor, diagnostics) find this agent.
	if err := writeRunFile(a.dataDir, a.name, runInfo{PID: os.Getpid(), BaseURL: srv.BaseURL(), Started: time.Now(), AdminToken: a.adminToken}); err != nil {
		r.log.Warn("could not write the run file", "file", runFilePath(a.dataDir, a.name), "err", err)
	}
	r.log.Info("cfe-agent listening", "base_url", srv.BaseURL(), "urls", srv.URLs(), "profile", a.name,
		"environment", a.profile.Environment, "version", version)
	return nil
}

// close closes the current session, the server first.
func (r *runner) close() {
	if r.cur == nil {
		return
	}
	os.Remove(runFilePath(r.cur.a.dataDir, r.cur.a.name))
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
func (r *runner) currentWithOptions() (*session, globalOptions, error) {
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
func (r *runner) hold() (s *session, opts globalOptions, release func(), err error) {
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
	st.Profiles = slices.Sorted(maps.Keys(s.a.cfg.Profiles))
	st.Profile = s.a.name
	st.Printers = slices.Sorted(maps.Keys(s.a.profile.Printers))
	st.DefaultPrinter = s.a.profile.DefaultPrinter
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
	oldActive, oldFlag := s.a.cfg.Active, opts.profile
	return r.reopen(func() error {
		if err := profiles.Use(r.dataDir, name); err != nil {
			return err
		}
		r.opts.profile = name
		return nil
	}, func() error {
		r.opts.profile = oldFlag
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
	name, old := s.a.name, s.a.profile.DefaultPrinter
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
	return exportDiagnostics(ctx, diagnosticsSource{opts: opts, dataDir: r.dataDir, cfg: s.a.cfg,
		state: func(ctx context.Context) (*apitype.StateReport, error) { return s.srv.Report(ctx), nil }}, path)
}

// newServer builds the local module of an open agent, listening on listen.
func newServer(a *agent, listen string, log *slog.Logger) *localapi.Server {
	tokens := make([]string, len(a.profile.LAN.Tokens))
	for i, t := range a.profile.LAN.Tokens {
		tokens[i] = t.Value()
	}
	page := newStatusPage(a)
	cfg := localapi.ServerConfig{
		Listen:         listen,
		Version:        version,
		Profile:        a.name,
		Environment:    string(a.profile.Environment),
		AllowedOrigins: a.profile.AllowedOrigins,
		LAN:            localapi.LANConfig{Enabled: a.profile.LAN.Enabled, Tokens: tokens, AllowedHosts: a.profile.LAN.AllowedHosts},
		Logger:         log,
		Issuer:         kickingIssuer{a},
		State:          agentState{a},
		Printing:       newPrinting(a),
		PrinterList:    printerList{name: a.name, profile: a.profile},
		StatusPage:     page,
	}
	if a.backups != nil {
		cfg.Backups, cfg.AdminToken = a.backups, a.adminToken
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

// agentState reports the agent's state to the local module from the store and
// the signer. It stays cheap: /health calls it.
type agentState struct{ a *agent }

func (s agentState) State(ctx context.Context) (health.State, error) {
	now := time.Now()
	today := cfe.DateOf(now.In(cfe.Montevideo))
	var st health.State
	if s.a.signer != nil {
		c := signer.CertInfo(s.a.signer.Certificate(), now)
		st.Certificate = &health.Certificate{Subject: c.CommonName, RUC: c.RUC, NotBefore: c.NotBefore, NotAfter: c.NotAfter,
			SubjectDN: c.Subject, Issuer: c.Issuer, SerialNumber: c.SerialNumber, Test: c.Test}
	} else if s.a.certErr != nil {
		st.CertificateError = cfe.ErrorMessage(s.a.certErr)
	}
	ranges, err := s.a.db.RangeStatus(ctx, today)
	if err != nil {
		return st, err
	}
	for _, r := range ranges {
		st.CAE = append(st.CAE, health.CAERangeUse{Range: r.Range, Used: r.Used, Remaining: r.Remaining, Expired: r.Expired,
			NearlyUsedUp: r.NearlyUsedUp, NearExpiry: r.NearExpiry})
	}
	stats, err := s.a.db.Stats(ctx)
	if err != nil {
		return st, err
	}
	st.Outbox = health.Outbox{Pending: stats.Pending, OldestPending: stats.OldestPending, Rejected: stats.Rejected,
		Quarantined: stats.Quarantined}
	for _, q := range stats.Quarantine {
		st.Outbox.Quarantine = append(st.Outbox.Quarantine, health.QuarantinedCFE{UUID: q.UUID, Type: q.Type, Serie: q.Serie,
			Nro: q.Nro, CommittedAt: q.CommittedAt, Since: q.Since, Reason: q.Reason})
	}
	if st.Receipts.SignedToday, err = s.a.db.CountByDate(ctx, today, today); err != nil {
		return st, err
	}
	if st.Receipts.Recent, err = s.a.db.Last(ctx, recentReceipts); err != nil {
		return st, err
	}
	if len(st.Receipts.Recent) > 0 {
		st.Receipts.LastSignedAt = st.Receipts.Recent[0].TmstFirma
	}
	st.Hosted = hostedState(s.a)
	if h := s.a.db.NumberingHold(); h != nil {
		st.NumberingHold = &health.NumberingHold{Since: h.Since, Reason: h.Reason}
		for _, r := range h.Released {
			st.NumberingHold.Settled = append(st.NumberingHold.Settled, fmt.Sprintf("%s serie %s", r.Type.Name(), r.Serie))
		}
	}
	st.Storage = storageState(s.a.db)
	st.Backup = backupState(s.a)
	return st, nil
}

// storageState reports the disk of the store: the last commit's failure and
// the free space of the store's filesystem (one statfs).
func storageState(db *store.DB) *health.Storage {
	w := db.WriteHealth()
	st := &health.Storage{Dir: w.Dir, LastWriteError: w.LastError, LastWriteErrorAt: w.LastErrorAt}
	free, total, err := store.FreeSpace(w.Dir)
	if err != nil {
		st.SpaceError = "no se pudo leer el espacio libre del disco de los datos"
	} else {
		st.FreeBytes, st.TotalBytes = free, total
	}
	return st
}

var _ tray.Agent = (*runner)(nil)
