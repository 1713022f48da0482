package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

func newDoctorCommand(opts *app.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Diagnostica el equipo y el perfil activo: una línea OK/WARN/FAIL por comprobación",
		Long: "Comprueba la zona horaria, el certificado, los rangos CAE, la dirección de escucha, la cola de envíos " +
			"(y los comprobantes dañados en cuarentena), " +
			"el servicio en la nube y las impresoras. Funciona con el agente en ejecución o detenido. " +
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

func (d *doctor) run(ctx context.Context, opts app.Options) {
	dataDir, cfg, _, err := app.LoadConfig(opts)
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
	d.certificate(p, report, running)
	d.ranges(report)
	d.numbering(report)
	d.witness(dataDir, cfg.Active, p)
	d.storage(report)
	d.backup(report)
	d.footer(p, report)
	d.listen(p, report, running)
	d.outbox(report)
	d.quarantine(report)
	d.dgi(report)
	d.hosted(ctx, p)
	d.printers(ctx, p)
	d.sumatra(p, runtime.GOOS, printer.DefaultSumatraEnv())
}

func (d *doctor) report(ctx context.Context, opts app.Options, dataDir, name string, p profiles.Profile) (*apitype.StateReport, bool, error) {
	if live, ok := app.FindLive(ctx, dataDir, name, p); ok {
		return live.State, true, nil
	}
	a, err := app.Open(ctx, opts, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	srv := newServer(a, "127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := srv.Open(); err != nil {
		return nil, false, err
	}
	defer func() { _ = srv.Close() }()
	r, err := app.StateAt(ctx, srv.BaseURL())
	return r, false, err
}

func (d *doctor) zone(r *apitype.StateReport) {
	if r.ZonaHoraria.OK {
		d.line("OK", "zona horaria", "%s (%s)", r.ZonaHoraria.Nombre, r.ZonaHoraria.Desfase)
		return
	}
	d.line("FAIL", "zona horaria", "%s", r.ZonaHoraria.Mensaje)
}

func (d *doctor) ranges(r *apitype.StateReport) {
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

// numbering reports a store that refuses to number until it knows where
// numbering stands (docs/numbering.md).
func (d *doctor) numbering(r *apitype.StateReport) {
	n := r.Numeracion
	if n == nil {
		return
	}
	msg := n.Motivo + "; se espera la consulta al servicio en línea o «cfe-agent cae used-elsewhere TIPO SERIE HASTA»"
	if len(n.SeriesConfirmadas) > 0 {
		msg += " (ya confirmadas: " + strings.Join(n.SeriesConfirmadas, ", ") + ")"
	}
	d.line("FAIL", "numeración", "%s", msg)
}

// storage reports the store's disk: a failed last commit or little free
// space (localapi's thresholds).
func (d *doctor) storage(r *apitype.StateReport) {
	s := r.Storage
	if s == nil {
		return
	}
	switch {
	case s.Status == apitype.HealthError:
		d.line("FAIL", "disco", "%s", strings.Join(s.Warnings, "; "))
	case s.Status == apitype.HealthDegraded:
		d.line("WARN", "disco", "%s", strings.Join(s.Warnings, "; "))
	case s.SpaceError != "":
		d.line("WARN", "disco", "%s (%s)", s.SpaceError, s.Dir)
	default:
		d.line("OK", "disco", "%d MB libres en %s", s.FreeBytes>>20, s.Dir)
	}
}

// footer checks the profile's data for the printed footer that DGI asks
// for: the Fecha emisor or resolution, and the company's web site, which the
// e-Ticket family prints (only types the agent can number are considered).
func (d *doctor) footer(p profiles.Profile, r *apitype.StateReport) {
	const check = "pie impreso"
	c := p.Company
	var tickets []string
	for _, t := range r.CAE {
		if t.TipoCFE.IsTicketFamily() && t.Remaining > 0 {
			tickets = append(tickets, t.TipoCFE.String())
		}
	}
	var warned bool
	if c.FechaEmisor.IsZero() && c.Resolucion == "" {
		warned = true
		d.line("WARN", check, "el perfil no indica company.fecha_emisor ni company.resolucion: "+
			"el pie no muestra la fecha de ingreso al régimen de CFE (o la resolución) que pide DGI")
	}
	if c.WebURL == "" && len(tickets) > 0 {
		warned = true
		d.line("WARN", check, "el perfil no indica company.web_url: los e-Tickets (%s) mandan a verificar en "+
			"www.dgi.gub.uy, pero DGI pide la web de la empresa donde se publican", strings.Join(tickets, ", "))
	}
	if warned {
		return
	}
	since := "Res. " + c.Resolucion
	if c.Resolucion == "" {
		since = "Fecha emisor " + c.FechaEmisor.Time(time.UTC).Format("02/01/2006")
	}
	where := ""
	if c.WebURL != "" {
		where = "; e-Tickets verificables en " + c.WebURL
	}
	d.line("OK", check, "%s%s", since, where)
}

func (d *doctor) listen(p profiles.Profile, r *apitype.StateReport, running bool) {
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

func (d *doctor) outbox(r *apitype.StateReport) {
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
	if o.Rejected > 0 {
		d.line("WARN", "envíos", "el servicio en la nube rechazó %d comprobantes firmados: revíselos (no se reenvían solos)", o.Rejected)
	}
	if h := r.Hosted; h != nil && h.LastError != "" {
		d.line("WARN", "envíos", "último error del servicio en la nube: %s", h.LastError)
	}
}

// quarantine names each signed CFE whose stored record cannot be read back
// and how to recover it: a FAIL, since a signed receipt does not reach the
// hosted service (nor DGI) until a technician acts, although the agent
// signs (/health is degraded).
func (d *doctor) quarantine(r *apitype.StateReport) {
	o := r.Outbox
	where := "las copias de seguridad del agente, de la más nueva a la más vieja"
	if b := r.Backup; b != nil && b.Ultima != nil {
		where += " (la última: " + b.Ultima.Archivo + ")"
	}
	for _, q := range o.Quarantine {
		name := "con uuid " + q.UUID
		if q.Nombre != "" {
			name = fmt.Sprintf("%s %s-%d (uuid %s)", q.Nombre, q.Serie, q.Nro, q.UUID)
		}
		d.line("FAIL", "comprobante dañado", "%s, en cuarentena desde el %s: %s; no se envía al servicio en la nube ni se imprime, "+
			"y su número sigue usado. Recupérelo con «cfe-agent recuperar %s»: lo busca en %s y después en el servicio en la nube; "+
			"con «--copia ARCHIVO» use otra copia de seguridad que lo tenga", name, q.Since.In(cfe.Montevideo).Format("02/01/2006 15:04"),
			q.Reason, q.UUID, where)
	}
	if more := o.Quarantined - len(o.Quarantine); more > 0 {
		d.line("FAIL", "comprobante dañado", "y %d comprobantes dañados más en cuarentena: con tantos, el archivo de datos está muy dañado; restaure una copia de seguridad («cfe-agent restore»)", more)
	}
}

// hosted checks that the service answers and accepts the profile's
// credentials, and reports the key's headroom.
func (d *doctor) hosted(ctx context.Context, p profiles.Profile) {
	const check = "servicio en la nube"
	h := p.Hosted
	if h.BaseURL == "" {
		d.line("WARN", check, "no configurado: los comprobantes firmados quedan en la cola local")
		return
	}
	c, err := app.NewHostedClient(h, slog.New(slog.DiscardHandler))
	if err != nil {
		d.line("FAIL", check, "%s", describe(err))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		d.line("FAIL", check, "%s no responde: %v", h.BaseURL, errors.Unwrap(err))
		return
	}
	if c.Auth() == hosted.AuthNone {
		d.line("WARN", check, "%s responde, pero el perfil no tiene credenciales (api_key, o username y secret): "+
			"los comprobantes firmados no pueden enviarse", h.BaseURL)
		return
	}
	auth := "clave API de empresa"
	if c.Auth() == hosted.AuthJWT {
		auth = "usuario " + h.Username + " (JWT)"
	}
	if _, err := c.Empresas(ctx); err != nil {
		d.line("FAIL", check, "%s responde, pero no acepta las credenciales (%s): %s", h.BaseURL, auth, describe(err))
		return
	}
	headroom := ""
	if rl := c.Status().RateLimit; rl != nil {
		headroom = fmt.Sprintf("; cupo de la clave: %d de %d por minuto, %d de %d por hora",
			rl.RemainingMinute, rl.LimitMinute, rl.RemainingHour, rl.LimitHour)
	}
	d.line("OK", check, "%s responde; autenticación: %s%s", h.BaseURL, auth, headroom)
}

// printers checks each printer of the profile the way printing will use
// it: a directory printer's folder must be writable; a CUPS or lp queue must
// exist on the CUPS server and accept jobs.
func (d *doctor) printers(ctx context.Context, p profiles.Profile) {
	if _, err := app.TemplateCatalog(p); err != nil {
		d.line("FAIL", "plantillas", "%s", describe(err))
	}
	if len(p.Printers) == 0 {
		d.line("WARN", "impresoras", "no hay impresoras configuradas")
		return
	}
	m, err := app.PrinterManager(p)
	if err != nil {
		d.line("FAIL", "impresoras", "%s", describe(err))
		return
	}
	// CUPS is asked once, and only when a printer goes through it.
	var (
		queues  map[string]printer.Queue
		cupsErr error
	)
	if slices.ContainsFunc(slices.Collect(maps.Values(p.Printers)), func(pr profiles.Printer) bool {
		return pr.Backend == profiles.BackendCUPS || pr.Backend == profiles.BackendLP
	}) {
		queues, cupsErr = cupsQueues(ctx, m)
	}
	// The Windows spooler likewise, on Windows.
	var (
		spooler    map[string]printer.SystemPrinter
		spoolerErr error
	)
	if runtime.GOOS == "windows" && slices.ContainsFunc(slices.Collect(maps.Values(p.Printers)), func(pr profiles.Printer) bool {
		return pr.Backend == profiles.BackendWindows
	}) {
		spooler, spoolerErr = windowsPrinters(ctx, m)
	}
	for _, alias := range slices.Sorted(maps.Keys(p.Printers)) {
		pr, check := p.Printers[alias], "impresora "+alias
		switch pr.Backend {
		case profiles.BackendDir:
			if err := writableDir(pr.Dir); err != nil {
				d.line("FAIL", check, "no se puede escribir en la carpeta %s: %v", pr.Dir, err)
				continue
			}
			d.line("OK", check, "guarda los PDF en %s", pr.Dir)
		case profiles.BackendCUPS, profiles.BackendLP:
			q, found := queues[pr.Queue]
			switch {
			case cupsErr != nil:
				d.line("FAIL", check, "cola %q: %s", pr.Queue, describe(cupsErr))
			case !found:
				d.line("FAIL", check, "CUPS no tiene la cola %q (vea cfe-agent printers)", pr.Queue)
			case !q.Accepting:
				d.line("FAIL", check, "la cola %q no acepta trabajos%s", pr.Queue, reasonSuffix(q.Reason))
			case q.State == "stopped":
				d.line("WARN", check, "la cola %q está detenida%s", pr.Queue, reasonSuffix(q.Reason))
			default:
				d.line("OK", check, "%s, cola %q acepta trabajos", pr.Backend, pr.Queue)
			}
		case profiles.BackendTCP:
			status := pr.ESCPOS.StatusQuery(pr.Backend)
			if err := (&printer.TCP{Address: pr.Address, Status: status}).Check(ctx); err != nil {
				d.line("FAIL", check, "%s", describe(err))
				continue
			}
			what := "acepta conexiones"
			if status {
				what = "lista (papel y tapa bien)"
			}
			d.line("OK", check, "ESC/POS en %s: %s", pr.Address, what)
		case profiles.BackendDevice:
			if _, err := os.Stat(pr.Device); err != nil {
				d.line("FAIL", check, "el dispositivo %s no existe: ¿está conectada y encendida la impresora?", pr.Device)
				continue
			}
			d.line("OK", check, "ESC/POS en %s", pr.Device)
		case profiles.BackendWindows:
			d.windowsPrinter(check, pr, spooler, spoolerErr)
		default:
			d.line("OK", check, "%s, impresora %q", pr.Backend, pr.Queue)
		}
	}
}

// cupsQueues lists the CUPS server's queues by name.
func cupsQueues(ctx context.Context, m *printer.Manager) (map[string]printer.Queue, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	list, err := m.Discover(ctx)
	byName := make(map[string]printer.Queue, len(list))
	for _, q := range list {
		byName[q.Name] = q
	}
	return byName, err
}

// writableDir makes dir when missing and checks that a file can be created
// in it.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Unwrap(err)
	}
	f, err := os.CreateTemp(dir, ".cfe-agent-doctor-*")
	if err != nil {
		return errors.Unwrap(err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// dgi reports direct mode (the profile's dgi.modo: directo): the CFEs by
// their state at DGI, and each warning the state raises about them (a CFE
// DGI rejected, with its code and what to do; urgent CFEs not received;
// unknown outcomes; an old backlog). Nothing in provider mode.
func (d *doctor) dgi(r *apitype.StateReport) {
	g := r.DGI
	if g == nil {
		return
	}
	status := "OK"
	var problems []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "DGI") {
			problems = append(problems, w)
		}
	}
	if len(problems) > 0 {
		status = "WARN"
	}
	d.line(status, "DGI (envío directo)", "%d enviados, %d aceptados, %d rechazados, %d observados, %d pendientes, %d sin respuesta",
		g.Enviados, g.Aceptados, g.Rechazados, g.Observados, g.Pendientes, g.Desconocidos)
	for _, p := range problems {
		d.line("WARN", "DGI (envío directo)", "%s", p)
	}
}
