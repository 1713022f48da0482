package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/profiles"
)

func newDoctorCommand(opts *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Diagnostica el equipo y el perfil activo: una línea OK/WARN/FAIL por comprobación",
		Long: "Comprueba la zona horaria, el certificado, los rangos CAE, la dirección de escucha, la cola de envíos, " +
			"el servicio alojado y las impresoras. Funciona con el agente en ejecución o detenido. " +
			"Termina con estado 1 si alguna comprobación falla.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := &doctor{w: cmd.OutOrStdout()}
			d.run(cmd.Context(), *opts)
			if d.failed > 0 {
				return errChecksFailed{d.failed}
			}
			return nil
		},
	}
}

// doctor prints one line per check.
type doctor struct {
	w      io.Writer
	failed int
}

func (d *doctor) line(status, check, format string, args ...any) {
	if status == "FAIL" {
		d.failed++
	}
	fmt.Fprintf(d.w, "%-4s %s: %s\n", status, check, fmt.Sprintf(format, args...))
}

func (d *doctor) run(ctx context.Context, opts globalOptions) {
	dataDir, cfg, _, err := loadConfig(opts)
	if err != nil {
		d.line("FAIL", "configuración", "%s", describe(err))
		return
	}
	p, _ := cfg.ActiveProfile()
	p = p.Resolve(dataDir)
	d.line("OK", "perfil", "%s (%s), RUC %s %s", cfg.Active, p.Environment, p.Company.RUC, p.Company.RazonSocial)

	// The agent's own report: from the running agent when there is one, else
	// from a private module started on a free loopback port.
	report, running, err := d.report(ctx, opts, dataDir, cfg.Active, p)
	if err != nil {
		d.line("FAIL", "agente", "%s", describe(err))
		return
	}
	d.zone(report)
	d.certificate(report)
	d.ranges(report)
	d.listen(p, report, running)
	d.outbox(report)
	d.hosted(ctx, p)
	d.printers(p)
}

func (d *doctor) report(ctx context.Context, opts globalOptions, dataDir, name string, p profiles.Profile) (*localapi.StateReport, bool, error) {
	base := "http://" + p.Listen
	if info, ok := readRunFile(dataDir, name); ok {
		base = info.BaseURL
	}
	if r, err := stateAt(ctx, base); err == nil && r.Profile == name {
		return r, true, nil
	}
	a, err := openAgent(ctx, opts, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	srv := newServer(a, "127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := srv.Open(); err != nil {
		return nil, false, err
	}
	defer func() { _ = srv.Close() }()
	r, err := stateAt(ctx, srv.BaseURL())
	return r, false, err
}

func stateAt(ctx context.Context, baseURL string) (*localapi.StateReport, error) {
	c, err := localapi.NewClient(baseURL, localapi.ClientOptions{HTTPClient: &http.Client{Timeout: 3 * time.Second}})
	if err != nil {
		return nil, err
	}
	return c.State(ctx)
}

func (d *doctor) zone(r *localapi.StateReport) {
	if r.ZonaHoraria.OK {
		d.line("OK", "zona horaria", "%s (%s)", r.ZonaHoraria.Nombre, r.ZonaHoraria.Desfase)
		return
	}
	d.line("FAIL", "zona horaria", "%s", r.ZonaHoraria.Mensaje)
}

func (d *doctor) certificate(r *localapi.StateReport) {
	c := r.Certificate
	switch {
	case c == nil:
		d.line("FAIL", "certificado", "no hay certificado de firma utilizable")
	case c.DaysLeft < 0:
		d.line("FAIL", "certificado", "%s venció el %s", c.Subject, c.ExpiresAt.Format(time.DateOnly))
	case c.DaysLeft <= 30:
		d.line("WARN", "certificado", "%s vence en %d días (%s)", c.Subject, c.DaysLeft, c.ExpiresAt.Format(time.DateOnly))
	default:
		d.line("OK", "certificado", "%s, RUC %s, vence el %s", c.Subject, c.RUC, c.ExpiresAt.Format(time.DateOnly))
	}
}

func (d *doctor) ranges(r *localapi.StateReport) {
	usable := 0
	for _, t := range r.CAE {
		switch {
		case t.Remaining == 0:
			d.line("FAIL", "CAE "+t.TipoCFE.String(), "%s: sin números disponibles (rango agotado o vencido)", t.Nombre)
		case len(t.Warnings) > 0:
			usable++
			d.line("WARN", "CAE "+t.TipoCFE.String(), "%s: %s", t.Nombre, strings.Join(t.Warnings, "; "))
		default:
			usable++
			d.line("OK", "CAE "+t.TipoCFE.String(), "%s: %d números disponibles hasta %s", t.Nombre, t.Remaining, t.UsableUntil)
		}
	}
	if usable == 0 {
		d.line("FAIL", "CAE", "no hay ningún rango CAE utilizable: importe los archivos CAE de DGI (cfe-agent cae import)")
	}
}

func (d *doctor) listen(p profiles.Profile, r *localapi.StateReport, running bool) {
	if running {
		d.line("OK", "módulo local", "el agente está en ejecución en %s", r.BaseURL)
		return
	}
	l, err := net.Listen("tcp", p.Listen)
	if err != nil {
		d.line("FAIL", "módulo local", "la dirección %s está ocupada por otro programa: %v", p.Listen, errors.Unwrap(err))
		return
	}
	l.Close()
	d.line("OK", "módulo local", "la dirección %s está libre (el agente no está en ejecución)", p.Listen)
}

func (d *doctor) outbox(r *localapi.StateReport) {
	o := r.Outbox
	switch {
	case o.Pending == 0:
		d.line("OK", "envíos", "no hay comprobantes pendientes de envío")
	case o.OldestPendingAgeS > 3600:
		d.line("WARN", "envíos", "%d comprobantes pendientes; el más antiguo espera desde hace %s", o.Pending,
			(time.Duration(o.OldestPendingAgeS) * time.Second).String())
	default:
		d.line("OK", "envíos", "%d comprobantes pendientes de envío", o.Pending)
	}
}

func (d *doctor) hosted(ctx context.Context, p profiles.Profile) {
	h := p.Hosted
	if h.BaseURL == "" {
		d.line("WARN", "servicio alojado", "no configurado: los comprobantes firmados quedan en la cola local")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(h.BaseURL, "/")+"/", nil)
	if err != nil {
		d.line("FAIL", "servicio alojado", "URL inválida %s", h.BaseURL)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.line("FAIL", "servicio alojado", "%s no responde: %v", h.BaseURL, errors.Unwrap(err))
		return
	}
	resp.Body.Close()
	auth := "sin credenciales"
	switch {
	case h.APIKey != "":
		auth = "clave API de empresa"
	case h.Username != "":
		auth = "usuario " + h.Username
	}
	d.line("OK", "servicio alojado", "%s responde (HTTP %d); autenticación: %s", h.BaseURL, resp.StatusCode, auth)
}

func (d *doctor) printers(p profiles.Profile) {
	if len(p.Printers) == 0 {
		d.line("WARN", "impresoras", "no hay impresoras configuradas")
		return
	}
	for name, pr := range p.Printers {
		switch pr.Backend {
		case profiles.BackendDir:
			if err := os.MkdirAll(pr.Dir, 0o700); err != nil {
				d.line("FAIL", "impresora "+name, "no se puede usar la carpeta %s: %v", pr.Dir, errors.Unwrap(err))
				continue
			}
			d.line("OK", "impresora "+name, "guarda los PDF en %s", pr.Dir)
		default:
			d.line("OK", "impresora "+name, "%s, cola %q", pr.Backend, pr.Queue)
		}
	}
}
