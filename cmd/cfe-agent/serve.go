package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// serveOptions are the flags of the commands that run the agent.
type serveOptions struct {
	listen   string // --listen overrides the profile's address
	headless bool   // --headless: never the tray
}

// addServeCommands makes the root command run the agent (tray when available,
// else headless) and adds "serve" (always headless).
func addServeCommands(root *cobra.Command, opts *globalOptions) {
	var so serveOptions
	root.Flags().StringVar(&so.listen, "listen", "", "listen address, overriding the profile (e.g. 127.0.0.1:18787, 0.0.0.0:18787)")
	root.Flags().BoolVar(&so.headless, "headless", false, "run without the tray icon")
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
	serve.Flags().StringVar(&so.listen, "listen", "", "listen address, overriding the profile")
	root.AddCommand(serve)
}

// runAgent opens the agent, serves the local module until ctx ends (SIGINT or
// SIGTERM), then closes everything in reverse order.
func runAgent(ctx context.Context, opts globalOptions, so serveOptions) error {
	log := newLogger(os.Stderr)
	if so.listen != "" {
		// Through the profile's override, so the address obeys the same rules
		// as one written in the profile (a LAN address needs LAN mode and tokens).
		if err := os.Setenv(profiles.EnvPrefix+"LISTEN", so.listen); err != nil {
			return err
		}
	}
	a, err := openAgent(ctx, opts, log)
	if err != nil {
		return err
	}
	defer a.Close()

	srv := newServer(a, a.profile.Listen, log)
	if err := srv.Open(); err != nil {
		return err
	}
	runFile := runFilePath(a.dataDir, a.name)
	if err := writeRunFile(a.dataDir, a.name, runInfo{PID: os.Getpid(), BaseURL: srv.BaseURL(), Started: time.Now()}); err != nil {
		log.Warn("could not write the run file", "file", runFile, "err", err)
	}
	defer os.Remove(runFile)
	log.Info("cfe-agent listening", "base_url", srv.BaseURL(), "urls", srv.URLs(), "profile", a.name,
		"environment", a.profile.Environment, "version", version)
	if !so.headless {
		// The tray arrives with its own issue; until then every build is headless.
		log.Info("no tray in this build: running headless")
	}
	<-ctx.Done()
	log.Info("shutting down")
	if err := srv.Close(); err != nil {
		return fmt.Errorf("closing the local module: %w", err)
	}
	return nil
}

// newServer builds the local module of an open agent, listening on listen.
func newServer(a *agent, listen string, log *slog.Logger) *localapi.Server {
	tokens := make([]string, len(a.profile.LAN.Tokens))
	for i, t := range a.profile.LAN.Tokens {
		tokens[i] = t.Value()
	}
	return localapi.NewServer(localapi.ServerConfig{
		Listen:         listen,
		Version:        version,
		Profile:        a.name,
		Environment:    string(a.profile.Environment),
		AllowedOrigins: a.profile.AllowedOrigins,
		LAN:            localapi.LANConfig{Enabled: a.profile.LAN.Enabled, Tokens: tokens, AllowedHosts: a.profile.LAN.AllowedHosts},
		Logger:         log,
		Issuer:         a.issuer,
		State:          agentState{a},
		Printing:       newPrinting(a),
	})
}

// agentState reports the agent's state to the local module from the store and
// the signer. It stays cheap: /health calls it.
type agentState struct{ a *agent }

func (s agentState) State(ctx context.Context) (localapi.State, error) {
	now := time.Now()
	today := cfe.DateOf(now.In(cfe.Montevideo))
	var st localapi.State
	if s.a.signer != nil {
		c := signer.CertInfo(s.a.signer.Certificate(), now)
		st.Certificate = &localapi.Certificate{Subject: c.CommonName, RUC: c.RUC, NotBefore: c.NotBefore, NotAfter: c.NotAfter}
	}
	ranges, err := s.a.db.RangeStatus(ctx, today)
	if err != nil {
		return st, err
	}
	for _, r := range ranges {
		st.CAE = append(st.CAE, localapi.CAERangeUse{Range: r.Range, Remaining: r.Remaining, Expired: r.Expired,
			NearlyUsedUp: r.NearlyUsedUp, NearExpiry: r.NearExpiry})
	}
	stats, err := s.a.db.Stats(ctx)
	if err != nil {
		return st, err
	}
	st.Outbox = localapi.Outbox{Pending: stats.Pending, OldestPending: stats.OldestPending}
	if st.Receipts.SignedToday, err = s.a.db.CountByDate(ctx, today, today); err != nil {
		return st, err
	}
	last, err := s.a.db.Last(ctx, 1)
	if err != nil {
		return st, err
	}
	if len(last) == 1 {
		st.Receipts.LastSignedAt = last[0].TmstFirma
	}
	return st, nil
}
