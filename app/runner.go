package app

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/logs"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/tray"
)

// Module is the local module that serves a session's Facade (a
// *localapi.Server, which cmd/cfe-agent builds): Open listens and serves,
// Close stops it and drains its requests.
type Module interface {
	Endpoint
	Open() error
	Close() error
}

// RunnerConfig configures a Runner. Module is required.
type RunnerConfig struct {
	// Options are the options the agent runs with; the tray's profile
	// switch changes their profile.
	Options Options
	// DataDir is the data directory (profiles.DataDir of Options.DataDir).
	DataDir string
	// Log is the agent's log; Redactor (nil: none) learns the secrets of
	// every profile before anything is logged about it.
	Log      *slog.Logger
	Redactor *logs.Redactor
	// Version is the agent's version, in the state report and the log.
	Version string
	// Module builds the local module, not yet open, that serves f on listen
	// (the profile's address, or --listen): the application does not know
	// HTTP, so cmd/cfe-agent gives the runner this factory, which it calls
	// at every (re)opening.
	Module func(f *Facade, listen string) Module
	// Doctor writes the doctor's checks (cfe-agent doctor, run with opts)
	// for the diagnostic archive; none when nil.
	Doctor func(ctx context.Context, w io.Writer, opts Options)
	// AutostartEnabled says whether the agent starts with the user's
	// session, and SetAutostart turns that on or off (the command line's
	// autostart entry); the tray's item does nothing without them.
	AutostartEnabled func() (bool, error)
	SetAutostart     func(opts Options, on bool) error
}

// Runner keeps the running agent's session open (one profile's agent, the
// local module serving its Facade, and the work it does in the background)
// and reopens it when the tray switches the profile or the default printer.
// It implements tray.Agent in-process: the tray reads the state and reprints
// through the session's Facade, as the local module does.
type Runner struct {
	cfg RunnerConfig
	log *slog.Logger

	mu   sync.Mutex // guards opts and cur; held while reopening
	opts Options
	cur  *Session // nil only when reopening failed twice
}

// Session is one profile's agent, its Facade, the local module serving it,
// and the background work it runs (the deliverer, the numbering check,
// backups, the archiver) until it closes.
type Session struct {
	a    *Agent
	f    *Facade
	srv  Module
	stop context.CancelFunc
	done sync.WaitGroup
	// calls are the tray's in-process calls using the session (see hold):
	// close waits for them before it closes the store, as the module's
	// Close drains its requests.
	calls sync.WaitGroup
}

// Agent is the session's agent.
func (s *Session) Agent() *Agent { return s.a }

// Facade is the session's facade.
func (s *Session) Facade() *Facade { return s.f }

// BaseURL is the base URL the session's module serves at.
func (s *Session) BaseURL() string { return s.srv.BaseURL() }

// NewRunner returns a Runner; nothing is opened.
func NewRunner(cfg RunnerConfig) *Runner {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Redactor == nil {
		cfg.Redactor = &logs.Redactor{}
	}
	return &Runner{cfg: cfg, log: cfg.Log, opts: cfg.Options}
}

// Open opens the session of the runner's options: configuration, store,
// signer, deliverer and the rest, then the local module. When it returns
// without error the module serves; on error nothing stays open.
func (r *Runner) Open(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.open(ctx)
}

// Close closes the session, the local module first.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.close()
}

// BaseURL is the local module's base URL while a session is open, else "".
func (r *Runner) BaseURL() string {
	s, err := r.current()
	if err != nil {
		return ""
	}
	return s.BaseURL()
}

// open opens a session on r.opts; the caller holds r.mu. The configuration
// is loaded once, and every part the local module reads is built before it
// serves: request goroutines only read the agent.
func (r *Runner) open(ctx context.Context) error {
	dataDir, cfg, created, err := LoadConfig(r.opts)
	if err != nil {
		return err
	}
	r.cfg.Redactor.SetSecrets(configSecrets(cfg)...) // before anything is logged about the profile
	if err := checkTestModeAllowed(r.opts, cfg); err != nil {
		return err
	}
	a, err := OpenLoaded(ctx, dataDir, cfg, created, r.log)
	if err != nil {
		return err
	}
	recordProduction(a, r.log)
	settle := a.checkNumbering(ctx)
	a.Backups, a.AdminToken = newBackupManager(a, r.log), newAdminToken()
	// Direct mode begins before the deliverer runs (app/dgi.go).
	dgiWake, dgiUnwatch := a.DB.WatchCommits()
	ds := newDGISender(ctx, a, dgiWake)
	rs := newReporter(a) // direct mode: the daily report (app/dailyreport.go)
	wake, unwatch := a.DB.WatchCommits()
	dr := newDGIReader(ctx, a)        // provider mode: DGI's verdicts read back (app/dgi.go)
	prs, pad := newProviderReports(a) // provider mode: the daily report's states and annulled numbers (app/reportprov.go)
	d := newDeliverer(a, wake)        // sets a.Deliverer, which requests read (hostedState)
	f := NewFacade(a, FacadeConfig{Version: r.cfg.Version})
	srv := r.cfg.Module(f, a.Profile.Listen)
	f.Serve(srv)
	if err := srv.Open(); err != nil {
		unwatch()
		dgiUnwatch()
		a.Close()
		return err
	}
	bg, stop := context.WithCancel(context.Background())
	s := &Session{a: a, f: f, srv: srv, stop: stop}
	if d != nil {
		s.done.Go(func() { d.Run(bg); unwatch() })
	} else {
		unwatch()
	}
	if ds != nil {
		s.done.Go(func() { ds.Run(bg); dgiUnwatch() })
	} else {
		dgiUnwatch()
	}
	if dr != nil {
		s.done.Go(func() { dr.Run(bg) })
	}
	if rs != nil {
		s.done.Go(func() { rs.Run(bg) })
	}
	if prs != nil {
		s.done.Go(func() { prs.Run(bg) })
		s.done.Go(func() { pad.Run(bg) })
	}
	if settle != nil {
		s.done.Go(func() { settle(bg) })
	}
	s.done.Go(func() { a.Backups.Run(bg) })
	s.done.Go(func() { runArchiver(bg, a, r.log) })
	s.done.Go(func() { a.PrinterWatch.Run(bg) })
	r.cur = s
	// The run file lets one-shot commands (doctor, diagnostics) find this agent.
	if err := WriteRunFile(a.DataDir, a.Name, RunInfo{PID: os.Getpid(), BaseURL: srv.BaseURL(), Started: time.Now(), AdminToken: a.AdminToken}); err != nil {
		r.log.Warn("could not write the run file", "file", RunFilePath(a.DataDir, a.Name), "err", err)
	}
	r.log.Info("cfe-agent listening", "base_url", srv.BaseURL(), "urls", srv.URLs(), "profile", a.Name,
		"environment", a.Profile.Environment, "version", r.cfg.Version)
	return nil
}

// close closes the current session, the module first; the caller holds r.mu.
func (r *Runner) close() {
	if r.cur == nil {
		return
	}
	os.Remove(RunFilePath(r.cur.a.DataDir, r.cur.a.Name))
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
func (r *Runner) reopen(change, undo func() error) error {
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

// errNotRunning is the answer of a call when no session is open.
func errNotRunning() error { return cfe.Errorf(cfe.EUNAVAILABLE, "el agente no está funcionando") }

// current returns the open session, or an EUNAVAILABLE error. It is for
// reading the session's configuration; a call that uses its store or its
// module holds it (hold).
func (r *Runner) current() (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil, errNotRunning()
	}
	return r.cur, nil
}

// currentWithOptions is current with r.opts, both read under r.mu.
func (r *Runner) currentWithOptions() (*Session, Options, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil, r.opts, errNotRunning()
	}
	return r.cur, r.opts, nil
}

// hold returns the open session and r.opts, and holds the session open until
// release is called: close waits for it, so that a reopen from the tray does
// not close the store under a call that reads it. A held call must not wait
// for r.mu (reopen holds it while it waits for the call).
func (r *Runner) hold() (s *Session, opts Options, release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil, r.opts, nil, errNotRunning()
	}
	s = r.cur
	s.calls.Add(1) // under r.mu: never while close waits
	return s, r.opts, s.calls.Done, nil
}

// State implements tray.Agent in-process: the report GET /state answers
// (Facade.Report), as the status page reads it.
func (r *Runner) State(ctx context.Context) (*apitype.StateReport, error) {
	s, _, release, err := r.hold()
	if err != nil {
		return nil, err
	}
	defer release()
	return s.f.report(ctx), nil
}

// Settings implements tray.Agent.
func (r *Runner) Settings() tray.Settings {
	st := tray.Settings{LogDir: logs.Dir(r.cfg.DataDir)}
	if r.cfg.AutostartEnabled != nil {
		if on, err := r.cfg.AutostartEnabled(); err == nil {
			st.Autostart = on
		}
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

// Print implements tray.Agent in-process: a reprint through the session's
// Facade (Reprint), as POST /pdf prints, with the profile's template and
// copies.
func (r *Runner) Print(ctx context.Context, uuid, alias string) error {
	s, _, release, err := r.hold()
	if err != nil {
		return err
	}
	defer release()
	return s.f.Reprint(ctx, uuid, alias)
}

// UseProfile implements tray.Agent: the file's active profile changes and
// the agent reopens on it.
func (r *Runner) UseProfile(name string) error {
	s, opts, err := r.currentWithOptions()
	if err != nil {
		return err
	}
	oldActive, oldFlag := s.a.Config.Active, opts.Profile
	return r.reopen(func() error {
		if err := profiles.Use(r.cfg.DataDir, name); err != nil {
			return err
		}
		r.opts.Profile = name
		return nil
	}, func() error {
		r.opts.Profile = oldFlag
		return profiles.Use(r.cfg.DataDir, oldActive)
	})
}

// UseDefaultPrinter implements tray.Agent: the active profile's default
// printer changes in the file and the agent reopens with it.
func (r *Runner) UseDefaultPrinter(alias string) error {
	s, err := r.current()
	if err != nil {
		return err
	}
	name, old := s.a.Name, s.a.Profile.DefaultPrinter
	return r.reopen(func() error {
		return profiles.SetDefaultPrinter(r.cfg.DataDir, name, alias)
	}, func() error {
		if old == "" {
			return nil
		}
		return profiles.SetDefaultPrinter(r.cfg.DataDir, name, old)
	})
}

// SetAutostart implements tray.Agent.
func (r *Runner) SetAutostart(on bool) error {
	if r.cfg.SetAutostart == nil {
		return cfe.Errorf(cfe.EUNAVAILABLE, "el inicio con la sesión no se puede cambiar desde este agente")
	}
	r.mu.Lock()
	opts := r.opts
	r.mu.Unlock()
	return r.cfg.SetAutostart(opts, on)
}

// ExportDiagnostics implements tray.Agent: the archive goes to path, or to
// the data directory's diagnostics folder when path is "".
func (r *Runner) ExportDiagnostics(ctx context.Context, path string) (string, error) {
	s, opts, release, err := r.hold()
	if err != nil {
		return "", err
	}
	defer release()
	src := DiagnosticsSource{Version: r.cfg.Version, DataDir: r.cfg.DataDir, Config: s.a.Config,
		State: func(ctx context.Context) (*apitype.StateReport, error) { return s.f.report(ctx), nil }}
	if r.cfg.Doctor != nil {
		src.Doctor = func(ctx context.Context, w io.Writer) { r.cfg.Doctor(ctx, w, opts) }
	}
	return ExportDiagnostics(ctx, src, path)
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

var _ tray.Agent = (*Runner)(nil)
