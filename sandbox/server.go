package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/sandbox/account"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/mail"
	"github.com/cfe-agent/cfe-agent/sandbox/reports"
)

// Config configures a Server.
type Config struct {
	Environment string // EnvSandbox or EnvProduccion
	DataDir     string
	Listen      string // default 127.0.0.1:18788
	// DemoPassword is the password of the demo user created on first run;
	// when empty one is generated and printed once on Out.
	DemoPassword string
	Seed         *Seed
	SMTPAddr     string // host:port of the mail server (password recovery, CFEs by e-mail)
	// TrustProxy makes the client address the last X-Forwarded-For hop.
	TrustProxy  bool
	LoginLimits LoginLimits // DefaultLoginLimits when zero
	Logger      *slog.Logger
	Out         io.Writer // where first-run information is printed; io.Discard when nil
	Now         func() time.Time

	// ClientAddr, when set, decides the client address of every request,
	// before TrustProxy and the connection. It exists for tests, which
	// simulate callers from several networks over one loopback connection;
	// the command line never sets it.
	ClientAddr func(r *http.Request) (netip.Addr, bool)
	// PasswordCost is the bcrypt cost; auth.PasswordCost when zero. Tests lower it.
	PasswordCost int

	// KeyFailureLimits throttle invalid API keys per client address;
	// DefaultKeyFailureLimits when zero.
	KeyFailureLimits KeyFailureLimits

	// MaxExportRows bounds the CFEs of one Excel or accounting export;
	// the reports room's bound when zero. Tests lower it.
	MaxExportRows int

	// DGI configures the provider's sending to DGI (off when zero).
	DGI DGIConfig

	// MaxZipPDFs bounds the CFEs of one descargarPdfsFiltrados; the reports
	// room's bound when zero. Tests lower it.
	MaxZipPDFs int
}

// Server is the hosted-service emulator: the rooms, wired, behind one router.
type Server struct {
	cfg Config
	log *slog.Logger
	db  *data.DB

	auth      *auth.Service
	issuing   *issuing.Service
	reports   *reports.Service
	cfeMail   *mail.CFEMail
	envelopes *dgi.Envelopes
	dailyRep  *dgi.ReportRoutes
	pages     *account.Pages
	router    *mux.Router

	dgiEmulator *emulator.Emulator
	dgiProvider *dgi.Provider
	dgiReporter *dgi.Reporter
	reportDone  chan struct{}
	dgiStop     context.CancelFunc
	dgiDone     chan struct{}

	ln   net.Listener
	http *http.Server
	done chan error
}

// New opens the data directory of cfg.Environment, builds the rooms, creates
// the demo data on first run and applies cfg.Seed. It does not listen yet:
// see Open.
func New(cfg Config) (*Server, error) {
	if _, _, err := auth.KeyPrefixes(cfg.Environment); err != nil {
		return nil, err
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.LoginLimits == (LoginLimits{}) {
		cfg.LoginLimits = DefaultLoginLimits
	}
	if err := cfg.LoginLimits.Check(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = auth.PasswordCost
	}
	db, err := data.Open(cfg.DataDir, cfg.Environment)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, db: db}
	sender := mail.NewSender(cfg.SMTPAddr, cfg.Now)
	s.auth, err = auth.New(auth.Config{DB: db, Environment: cfg.Environment, Now: cfg.Now, Log: cfg.Logger,
		ClientAddr: cfg.ClientAddr, TrustProxy: cfg.TrustProxy, LoginLimits: cfg.LoginLimits,
		KeyFailureLimits: cfg.KeyFailureLimits, PasswordCost: cfg.PasswordCost, Mailer: sender, Issuer: s.issuer})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	s.issuing = issuing.New(issuing.Config{DB: db, DataDir: cfg.DataDir, Environment: cfg.Environment, Now: cfg.Now, Log: cfg.Logger})
	s.reports = reports.New(reports.Config{DB: db, CFEs: s.issuing.Issued, Printer: s.issuing.Printer, Now: cfg.Now,
		Log: cfg.Logger, MaxExportRows: cfg.MaxExportRows, MaxZipPDFs: cfg.MaxZipPDFs})
	s.cfeMail = mail.NewCFEMail(db, s.issuing.Issued, s.issuing.Printer, sender, cfg.Logger)
	s.envelopes = dgi.NewEnvelopes(db, s.issuing.Issued, cfg.Now, cfg.Logger)
	s.dailyRep = dgi.NewReportRoutes(db, cfg.Now, cfg.Logger, nil)
	s.pages = account.NewPages(cfg.Logger)
	if err := s.bootstrap(); err != nil {
		return nil, errors.Join(err, s.issuing.Close(), db.Close())
	}
	s.router = s.routes()
	return s, nil
}

// Handler returns the HTTP handler, for callers that run their own server.
func (s *Server) Handler() http.Handler { return s.router }

// Open listens on cfg.Listen (a busy port fails here) and serves in the
// background.
func (s *Server) Open() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("sandbox: listen on %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	if err := s.openDGI(); err != nil {
		return errors.Join(err, ln.Close())
	}
	s.http = &http.Server{Handler: s.router, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan error, 1)
	go func() { s.done <- s.http.Serve(ln) }()
	s.log.Info("cfe-sandbox listening", "addr", ln.Addr().String(), "environment", s.cfg.Environment)
	return nil
}

// URL returns the base URL of the listening server.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// issuer is the JWTs' iss: the service's URL, the address it listens on (the
// configured one when it serves through Handler only).
func (s *Server) issuer() string {
	if s.ln != nil {
		return s.URL()
	}
	return "http://" + s.cfg.Listen
}

// Close stops serving (waiting up to shutdownTimeout for requests in flight)
// and closes the data files.
func (s *Server) Close() error {
	errs := []error{s.closeDGI()}
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		err := s.http.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			// Connections still open at the deadline (net/http waits 5 s for
			// connections that never sent a request) are closed outright.
			err = s.http.Close()
		}
		errs = append(errs, err)
		if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.issuing.Close(), s.db.Close())
	return errors.Join(errs...)
}
