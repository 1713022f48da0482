package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/autostart"
	"github.com/cfe-agent/cfe-agent/internal/winstop"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/logs"
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

// newRunner is the runner of Main's session: the options and data directory
// it runs with, its log, and what only the command line knows: the local
// module (newModule), the doctor, the autostart entry.
func newRunner(opts app.Options, dataDir string, lg *logs.Log) *app.Runner {
	return app.NewRunner(app.RunnerConfig{
		Options: opts, DataDir: dataDir, Log: lg.Logger, Redactor: lg.Redactor, Version: version,
		Module: func(f *app.Facade, listen string) app.Module { return newModule(f, listen, lg.Logger) },
		Doctor: func(ctx context.Context, w io.Writer, opts app.Options) {
			app.WriteDoctor(ctx, doctorConfig(opts), w) // the diagnostic archive's doctor.txt
		},
		AutostartEnabled: func() (bool, error) { return autostart.Enabled(app.AutostartName) },
		SetAutostart:     app.SetAutostart,
	})
}

// newServer builds the local module of an open agent, listening on listen:
// the doctor's private module when no agent runs.
func newServer(a *app.Agent, listen string, log *slog.Logger) *localapi.Server {
	f := app.NewFacade(a, app.FacadeConfig{Version: version})
	srv := newModule(f, listen, log)
	f.Serve(srv)
	return srv
}

// newModule builds the local module, not yet open, that serves f on
// listen: every route calls the application's facade, and the proxy the
// profile's hosted service.
func newModule(f *app.Facade, listen string, log *slog.Logger) *localapi.Server {
	a := f.Agent()
	tokens := make([]string, len(a.Profile.LAN.Tokens))
	for i, t := range a.Profile.LAN.Tokens {
		tokens[i] = t.Value()
	}
	cfg := localapi.ServerConfig{
		Listen:         listen,
		AllowedOrigins: a.Profile.AllowedOrigins,
		LAN:            localapi.LANConfig{Enabled: a.Profile.LAN.Enabled, Tokens: tokens, AllowedHosts: a.Profile.LAN.AllowedHosts},
		Logger:         log,
		Issuer:         f,
		State:          f,
		Printing:       f,
		PrinterList:    f,
		StatusPage:     localapi.NewStatusPage(f),
		Caja:           f,
	}
	if a.Backups != nil {
		cfg.Backups, cfg.AdminToken = f, a.AdminToken
		cfg.Repairs = app.Recoverer{A: a}
		cfg.ReportResends = f
		cfg.DailyReports = app.DailyReportService{A: a}
		cfg.KeyIn = app.KeyInner{A: a}
	}
	hostedParts(a, &cfg)
	return localapi.NewServer(cfg)
}
