package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	sdgi "github.com/cfe-agent/cfe-agent/sandbox/dgi"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
	"github.com/cfe-agent/cfe-agent/signer"
)

// DGIConfig configures the sandbox as the provider that sends to DGI
// (docs/sandbox.md, "The provider sends to DGI"). Its zero value sends
// nothing; cfe-sandbox's command line turns it on by default.
type DGIConfig struct {
	// Enabled turns the provider's sending on.
	Enabled bool
	// URL is the base URL of the DGI services to send to (another
	// `cfe-sandbox dgi`, or a stand-in serving DGI's paths); empty runs an
	// emulator in-process, its data in DataDir/dgi-ENVIRONMENT.
	URL string
	// Certificate is the PEM file of the certificate URL's answers are
	// signed with (required with URL).
	Certificate string
	// Listen and AdminListen are the in-process emulator's addresses
	// (127.0.0.1:0, a free port, when empty); Processing its Fechahora
	// delay (emulator.Config.Processing).
	Listen      string
	AdminListen string
	Processing  time.Duration
	// Poll is the provider's wait between rounds; Retry its wait after a
	// failure (their packages' defaults when 0).
	Poll  time.Duration
	Retry time.Duration

	// The daily report (docs/sandbox.md, "The daily report"): ReportPoll
	// is the reporter's wait between rounds, ReportCheck its wait between
	// two questions about a report's later state, ReportSettle how long
	// after midnight a day's report waits for DGI's verdicts on the day's
	// CFEs (sdgi's defaults when 0). ReportOffset moves the reporter's clock ahead of the service's
	// (tests and demonstrations: with 24h it reports today's CFEs as
	// yesterday's); ReportClock, when set, is the reporter's clock
	// instead (tests).
	ReportPoll   time.Duration
	ReportCheck  time.Duration
	ReportSettle time.Duration
	ReportOffset time.Duration
	ReportClock  func() time.Time
}

// DGIDataDir is the in-process emulator's data directory in dataDir.
func DGIDataDir(dataDir, env string) string { return filepath.Join(dataDir, "dgi-"+env) }

// openDGI starts the emulator (in-process) and the provider; Close stops
// them.
func (s *Server) openDGI() error {
	c := s.cfg.DGI
	if !c.Enabled {
		return nil
	}
	base := c.URL
	var dgiCert []byte
	if base == "" {
		listen, admin := c.Listen, c.AdminListen
		if listen == "" {
			listen = "127.0.0.1:0"
		}
		if admin == "" {
			admin = "127.0.0.1:0"
		}
		e, err := emulator.New(emulator.Config{Listen: listen, AdminListen: admin, DataDir: DGIDataDir(s.cfg.DataDir, s.cfg.Environment),
			Processing: c.Processing, Logger: s.log.With("component", "dgi-emulator")})
		if err != nil {
			return err
		}
		if err := e.Open(); err != nil {
			return errors.Join(err, e.Close())
		}
		s.dgiEmulator = e
		base = e.URL()
	} else {
		if c.Certificate == "" {
			return errors.New("sandbox: con --dgi-url indique --dgi-certificado, el certificado con el que firma sus respuestas")
		}
		var err error
		if dgiCert, err = os.ReadFile(c.Certificate); err != nil {
			return fmt.Errorf("sandbox: certificado de DGI: %w", err)
		}
	}
	cfg := dgi.Config{ReceptionURL: base + dgi.PathReception, QueryURL: base + dgi.PathQueries}
	if s.dgiEmulator != nil {
		cfg.DGICertificate = s.dgiEmulator.Certificate()
	} else {
		certs, err := dgi.ParseCertificates(dgiCert)
		if err != nil {
			return fmt.Errorf("sandbox: certificado de DGI %s: %w", c.Certificate, err)
		}
		cfg.DGICertificate = certs[0]
	}
	// Checked now, with a company's credentials: a URL or certificate the
	// client refuses stops the start.
	if err := s.checkDGI(cfg); err != nil {
		return errors.Join(err, s.closeDGI())
	}
	s.dgiProvider = sdgi.NewProvider(sdgi.ProviderConfig{DB: s.db, Credentials: s.issuing.Credentials,
		NewDGI: func(creds *signer.Credentials) (dgisend.DGI, error) { return dgi.New(withCreds(cfg, creds)) },
		Poll:   c.Poll, Retry: c.Retry, Now: s.cfg.Now, Log: s.log.With("component", "dgi-provider")})
	reportNow := c.ReportClock
	if reportNow == nil {
		reportNow = func() time.Time { return s.cfg.Now().Add(c.ReportOffset) }
	}
	s.dgiReporter = sdgi.NewReporter(sdgi.ReporterConfig{DB: s.db, Credentials: s.issuing.Credentials,
		NewDGI: func(creds *signer.Credentials) (sdgi.ReportDGI, error) { return dgi.New(withCreds(cfg, creds)) },
		Build:  buildReport, Poll: c.ReportPoll, Check: c.ReportCheck, Settle: c.ReportSettle, Now: reportNow,
		Log: s.log.With("component", "dgi-report")})
	s.dailyRep.SetReporter(s.dgiReporter)
	ctx, cancel := context.WithCancel(context.Background())
	s.dgiStop = cancel
	s.dgiDone = make(chan struct{})
	go func() {
		defer close(s.dgiDone)
		s.dgiProvider.Run(ctx)
	}()
	s.reportDone = make(chan struct{})
	go func() {
		defer close(s.reportDone)
		s.dgiReporter.Run(ctx)
	}()
	s.log.Info("sending to DGI as the provider", "reception", cfg.ReceptionURL, "queries", cfg.QueryURL)
	return nil
}

// checkDGI makes a client for the first company, which refuses a URL that
// is not https (or http to a loopback host) and an expired certificate.
func (s *Server) checkDGI(cfg dgi.Config) error {
	var first int64
	if err := s.db.View(func(tx *bolt.Tx) error {
		if ids := data.Companies(tx); len(ids) > 0 {
			first = ids[0]
		}
		return nil
	}); err != nil || first == 0 {
		return err
	}
	creds, err := s.issuing.Credentials(context.Background(), first)
	if err != nil {
		return err
	}
	_, err = dgi.New(withCreds(cfg, creds))
	return err
}

func withCreds(cfg dgi.Config, creds *signer.Credentials) dgi.Config {
	cfg.Credentials = creds
	return cfg
}

// closeDGI stops the provider and the in-process emulator.
func (s *Server) closeDGI() error {
	if s.dgiStop != nil {
		s.dgiStop()
		<-s.dgiDone
		<-s.reportDone
		s.dgiStop = nil
	}
	if s.dgiEmulator != nil {
		err := s.dgiEmulator.Close()
		s.dgiEmulator = nil
		return err
	}
	return nil
}

// DGIEmulator returns the in-process DGI emulator (its knobs, its counts),
// nil when none runs.
func (s *Server) DGIEmulator() *emulator.Emulator { return s.dgiEmulator }

// DGIProvider returns the provider's sender, nil when it does not send.
func (s *Server) DGIProvider() *sdgi.Provider { return s.dgiProvider }

// DGIReporter returns the provider's daily reporter, nil when it does not
// send.
func (s *Server) DGIReporter() *sdgi.Reporter { return s.dgiReporter }
