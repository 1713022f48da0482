package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/internal/gctune"
	"github.com/cfe-agent/cfe-agent/internal/instance"
	"github.com/cfe-agent/cfe-agent/logs"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/service"
	"github.com/cfe-agent/cfe-agent/tray"
)

// Main is the running agent, in WTF Dial's shape (cmd/wtfd's Main): the
// options it runs with, its log and the runner that keeps one profile's
// session (agent, local module, background work) open. cobra parses the
// flags into Options and Serve (no process environment is written); NewMain
// builds a Main, Open opens the log and the session (serving when it
// returns), Run is the whole program's life (Open, the tray or a headless
// wait, Close), Close closes in reverse order.
//
// The commands run it through runAgent; tests run it in-process.
type Main struct {
	// Options are the global flags, with --listen of the serve commands.
	Options app.Options
	// Serve are the flags of the commands that run the agent.
	Serve serveOptions
	// Stderr gets the log's second copy (os.Stderr when nil); the log file
	// in the data directory is always written.
	Stderr io.Writer

	log     *logs.Log
	runner  *app.Runner
	release func() // the data directory's instance lock (internal/instance)
	// stopWindowErr says why Windows' stop messages cannot reach the agent
	// (internal/winstop); Run logs it.
	stopWindowErr error
}

// errShownRunning is Open's answer when another agent already runs on the
// data directory and this (tray) start opened its status page instead: Run
// then returns nil, and the process exits 0.
var errShownRunning = errors.New("another agent runs on this data directory: its status page was opened")

// NewMain returns a Main for the command line's options; nothing is opened.
func NewMain(opts app.Options, so serveOptions) *Main {
	if so.listen != "" {
		// Through the profile's override, so the address obeys the same
		// rules as one written in the profile (a LAN address needs LAN mode
		// and tokens).
		opts.Listen = so.listen
	}
	return &Main{Options: opts, Serve: so}
}

// Open takes the data directory's instance lock (one agent per data
// directory; errShownRunning when a tray start found another agent and
// opened its status page), then opens the log (file and Stderr) and the
// session of the profile: configuration, store, signer, deliverer and the
// rest, then the local module. When it returns without error the module
// serves; on error nothing stays open.
func (m *Main) Open(ctx context.Context) error {
	if m.runner != nil {
		return errors.New("cfe-agent: Main is already open")
	}
	dataDir, err := profiles.DataDir(m.Options.DataDir)
	if err != nil {
		return err
	}
	release, err := instance.Take(ctx, instance.Start{DataDir: dataDir, Out: os.Stdout, Headless: m.Serve.headless,
		Autostarted: m.Serve.autostart, Locate: runFileOfPID(dataDir), Open: tray.OpenDefault})
	if err != nil {
		return err
	}
	if release == nil {
		return errShownRunning
	}
	lg, err := logs.Open(logs.Config{Dir: logs.Dir(dataDir), Stderr: m.Stderr, Level: slog.LevelInfo})
	if err != nil {
		release()
		return err
	}
	r := newRunner(m.Options, dataDir, lg)
	if err := r.Open(ctx); err != nil {
		// The service and the autostarted tray have no console for main's
		// message: the log keeps the reason (in Spanish, as shown).
		lg.Error("the agent could not start", "err", describe(err))
		lg.Close() //nolint:errcheck // the error that matters is err
		release()
		return err
	}
	m.log, m.runner, m.release = lg, r, release
	return nil
}

// Run is the agent's life: it opens the agent and serves the local module,
// then shows the tray when it can (else runs headless) until ctx ends
// (SIGINT, SIGTERM, a service stop) or the cashier chooses "Salir"; then it
// closes everything in reverse order. The server and the store are up
// before the tray appears. With Serve.headless it never shows the tray.
func (m *Main) Run(ctx context.Context) error {
	gctune.Apply()
	if err := m.Open(ctx); err != nil {
		if errors.Is(err, errShownRunning) {
			return nil
		}
		return err
	}
	defer m.Close() //nolint:errcheck // the log is the last thing open: nowhere left to report to
	r, log := m.runner, m.log.Logger
	service.SignalReady(ctx, log) // the Windows service reports Running now; systemd's start returns
	if m.stopWindowErr != nil {
		log.Warn("no window for Windows' stop messages: taskkill and the end of the session stop the agent without closing it", "err", m.stopWindowErr)
	}

	why := trayUnavailable(ctx, m.Serve.headless)
	if errors.Is(why, tray.ErrNoHost) {
		// A session without a tray host yet (the agent started at login
		// before the panel): serve headless and show the tray once one
		// appears.
		log.Info("running headless", "reason", why.Error()+"; the tray appears when a tray host starts")
		if err := tray.WaitHost(ctx); err != nil {
			if ctx.Err() == nil {
				log.Warn("no longer waiting for a tray host", "err", err)
				<-ctx.Done()
			}
		} else {
			log.Info("a tray host appeared: showing the tray")
			why = nil
		}
	} else if why != nil {
		log.Info("running headless", "reason", why.Error())
		<-ctx.Done()
	}
	if why == nil && ctx.Err() == nil {
		if err := tray.Run(ctx, tray.Config{Agent: r, Logger: log}); err != nil {
			log.Error("the tray failed: stopping", "err", err)
		}
	}
	service.SignalStopping(log)
	if cause := context.Cause(ctx); cause != nil {
		log.Info("shutting down", "reason", cause.Error())
	} else {
		log.Info("shutting down")
	}
	return nil
}

// BaseURL is the local module's base URL while Main is open, else "".
func (m *Main) BaseURL() string {
	if m.runner == nil {
		return ""
	}
	return m.runner.BaseURL()
}

// Close closes the session (the local module first, as runner.close does)
// and then the log. It returns the log's error; closing twice does nothing.
func (m *Main) Close() error {
	if m.runner == nil {
		return nil
	}
	m.runner.Close()
	err := m.log.Close()
	m.release()
	m.runner, m.log, m.release = nil, nil, nil
	return err
}
