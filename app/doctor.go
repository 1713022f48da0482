package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// The doctor ("cfe-agent doctor", and doctor.txt of the diagnostic archive):
// the machine and the active profile checked one by one — the time zone, the
// certificate, the CAE ranges, numbering and its witness, the disk, the
// backups, the printed footer's data, the listen address, the outbox and the
// quarantine, the hosted service and the printers — with the agent running
// (its state report is read from its local module) or stopped (the doctor
// opens the profile itself).

// Statuses of a doctor's check.
const (
	CheckOK   = "OK"
	CheckWarn = "WARN"
	CheckFail = "FAIL"
)

// Check is one check of the doctor: its status (CheckOK, CheckWarn,
// CheckFail), what was checked and what was found (Spanish, for the
// technician).
type Check struct {
	Status  string
	Name    string
	Message string
	// Source is where the check read what it reports (SourceAgent,
	// SourceOpened, SourceConfig, SourceProbe); printed at the end of its
	// line.
	Source string
}

// Where a doctor's check read what it reports, as its line says it.
const (
	// SourceAgent: the running agent's local module (GET /state): what the
	// agent itself uses, its environment included.
	SourceAgent = "agente en ejecución"
	// SourceOpened: the profile's store, opened by the doctor because no
	// agent runs.
	SourceOpened = "perfil abierto por doctor"
	// SourceConfig: config.yaml and the CFE_AGENT_* variables of the
	// doctor's own process.
	SourceConfig = "configuración de esta consola"
	// SourceProbe: checked by the doctor now, from this machine, with the
	// configuration of this console (the network, the disk, the spooler).
	SourceProbe = "comprobado ahora desde esta consola"
)

// String is the check's line in the doctor's report.
func (c Check) String() string {
	if c.Source == "" {
		return fmt.Sprintf("%-4s %s: %s", c.Status, c.Name, c.Message)
	}
	return fmt.Sprintf("%-4s %s: %s [%s]", c.Status, c.Name, c.Message, c.Source)
}

// DoctorConfig is what the doctor checks and how.
type DoctorConfig struct {
	Options Options
	// LocalState reads the state report of an agent the doctor opened
	// itself because none runs (the report a running agent's GET /state
	// answers).
	LocalState func(ctx context.Context, a *Agent) (*apitype.StateReport, error)
	// GOOS is the system whose printing is checked (SumatraPDF on Windows);
	// runtime.GOOS when "".
	GOOS string
	// Sumatra is where SumatraPDF is looked for; printer.DefaultSumatraEnv
	// when nil.
	Sumatra *printer.SumatraEnv
	// Now is the clock of the certificate's checks; time.Now when nil.
	Now func() time.Time
}

// Doctor runs the doctor's checks, giving each to emit as soon as it is made
// (some wait on the network), and returns how many failed.
func Doctor(ctx context.Context, cfg DoctorConfig, emit func(Check)) (failed int) {
	if cfg.GOOS == "" {
		cfg.GOOS = runtime.GOOS
	}
	if cfg.Sumatra == nil {
		env := printer.DefaultSumatraEnv()
		cfg.Sumatra = &env
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := &doctor{cfg: cfg, emit: emit}
	d.run(ctx)
	return d.failed
}

// WriteDoctor runs the doctor's checks writing one line per check to w, and
// returns how many failed.
func WriteDoctor(ctx context.Context, cfg DoctorConfig, w io.Writer) (failed int) {
	return Doctor(ctx, cfg, func(c Check) { fmt.Fprintln(w, c) })
}

// doctor makes the checks, one call of emit per check.
type doctor struct {
	cfg DoctorConfig
	// provider: the profile's DGI mode is provider (the dgi line's name).
	provider bool
	emit     func(Check)
	failed   int
	// source is where the lines being made read from (Check.Source), and
	// state where the agent's report came from (SourceAgent or SourceOpened).
	source, state string
}

func (d *doctor) line(status, check, format string, args ...any) {
	if status == CheckFail {
		d.failed++
	}
	d.emit(Check{Status: status, Name: check, Message: fmt.Sprintf(format, args...), Source: d.source})
}

// from makes the next lines say they read from source.
func (d *doctor) from(source string) { d.source = source }

func (d *doctor) run(ctx context.Context) {
	dataDir, cfg, _, err := LoadConfig(d.cfg.Options)
	if err != nil {
		d.line(CheckFail, "configuración", "%s", cfe.Describe(err))
		return
	}
	p, _ := cfg.ActiveProfile()
	p = p.Resolve(dataDir)
	d.from(SourceConfig)
	d.line(CheckOK, "perfil", "%s (%s), RUC %s %s", cfg.Active, p.Environment, p.Company.RUC, p.Company.RazonSocial)

	// The agent's own report: from the running agent when there is one, else
	// from the profile opened here. Every line that the report can answer
	// is read from it, so that with the agent running the doctor shows what
	// the agent uses (its environment's settings included), not what this
	// console's configuration would give; each line names its source.
	report, running, liveURL, err := d.report(ctx, dataDir, cfg.Active, p)
	if err != nil {
		d.line(CheckFail, "agente", "%s", cfe.Describe(err))
		return
	}
	d.state = SourceOpened
	if running {
		d.state = SourceAgent
	}
	d.from(d.state)
	if running {
		d.line(CheckOK, "fuente", "el agente está en ejecución: las líneas [%s] se leyeron de su módulo local (%s/state); "+
			"[%s]: config.yaml y las variables %s* de esta consola; [%s]: comprobado por doctor", SourceAgent, liveURL,
			SourceConfig, profiles.EnvPrefix, SourceProbe)
	} else {
		d.line(CheckOK, "fuente", "el agente no está en ejecución: doctor abrió el perfil (las líneas [%s]); "+
			"[%s]: config.yaml y las variables %s* de esta consola; [%s]: comprobado por doctor", SourceOpened,
			SourceConfig, profiles.EnvPrefix, SourceProbe)
	}
	d.from(d.state)
	d.zone(report)
	d.from(SourceConfig)
	d.certificate(p, report, running)
	d.from(d.state)
	d.ranges(report)
	d.numbering(report)
	d.from(SourceProbe)
	d.witness(dataDir, cfg.Active, p)
	d.from(d.state)
	d.storage(report)
	d.backup(report)
	d.from(SourceConfig)
	d.footer(p, report)
	d.from(SourceProbe)
	if running {
		d.from(SourceAgent)
	}
	d.listen(p, report, running)
	d.from(d.state)
	d.outbox(report)
	d.quarantine(report)
	d.provider = !p.DGI.Direct()
	d.dgi(report)
	d.dailyReports(report)
	if running {
		d.from(SourceAgent)
		d.hostedLive(report.Hosted)
	} else {
		d.from(SourceProbe)
		d.hosted(ctx, p)
	}
	d.from(SourceProbe)
	d.printers(ctx, p)
	d.sumatra(p, d.cfg.GOOS, *d.cfg.Sumatra)
}

func (d *doctor) report(ctx context.Context, dataDir, name string, p profiles.Profile) (r *apitype.StateReport, running bool, url string, err error) {
	if live, ok := FindLive(ctx, dataDir, name, p); ok {
		return live.State, true, live.BaseURL, nil
	}
	a, err := Open(ctx, d.cfg.Options, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, false, "", err
	}
	defer a.Close()
	if d.cfg.LocalState == nil {
		return nil, false, "", errors.New("the doctor has no way to read the state of an agent it opened (DoctorConfig.LocalState)")
	}
	r, err = d.cfg.LocalState(ctx, a)
	return r, false, "", err
}

func (d *doctor) zone(r *apitype.StateReport) {
	if r.ZonaHoraria.OK {
		d.line(CheckOK, "zona horaria", "%s (%s)", r.ZonaHoraria.Nombre, r.ZonaHoraria.Desfase)
		return
	}
	d.line(CheckFail, "zona horaria", "%s", r.ZonaHoraria.Mensaje)
}

func (d *doctor) ranges(r *apitype.StateReport) {
	usable := 0
	for _, t := range r.CAE {
		switch {
		case t.Remaining == 0:
			d.line(CheckFail, "CAE "+t.TipoCFE.String(), "%s: sin números disponibles (rango agotado o vencido)", t.Nombre)
		case len(t.Warnings) > 0:
			usable++
			d.line(CheckWarn, "CAE "+t.TipoCFE.String(), "%s: %s", t.Nombre, strings.Join(t.Warnings, "; "))
		default:
			usable++
			d.line(CheckOK, "CAE "+t.TipoCFE.String(), "%s: %d números disponibles hasta %s", t.Nombre, t.Remaining, t.UsableUntil)
		}
	}
	if usable == 0 {
		d.line(CheckFail, "CAE", "no hay ningún rango CAE utilizable: importe los archivos CAE de DGI (cfe-agent cae import)")
	}
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
		d.line(CheckFail, "disco", "%s", strings.Join(s.Warnings, "; "))
	case s.Status == apitype.HealthDegraded:
		d.line(CheckWarn, "disco", "%s", strings.Join(s.Warnings, "; "))
	case s.SpaceError != "":
		d.line(CheckWarn, "disco", "%s (%s)", s.SpaceError, s.Dir)
	default:
		d.line(CheckOK, "disco", "%d MB libres en %s", s.FreeBytes>>20, s.Dir)
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
		// A contingency receipt's copy is no fiscal document (its paper
		// form is): its footer sends no one to verify it.
		if info, _ := t.TipoCFE.Info(); t.TipoCFE.IsTicketFamily() && !info.Contingency && t.Remaining > 0 {
			tickets = append(tickets, t.TipoCFE.String())
		}
	}
	var warned bool
	if c.FechaEmisor.IsZero() && c.Resolucion == "" {
		warned = true
		d.line(CheckWarn, check, "el perfil no indica company.fecha_emisor ni company.resolucion: "+
			"el pie no muestra la fecha de ingreso al régimen de CFE (o la resolución) que pide DGI")
	}
	if c.WebURL == "" && len(tickets) > 0 {
		warned = true
		d.line(CheckWarn, check, "el perfil no indica company.web_url: los e-Tickets (%s) mandan a verificar en "+
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
	d.line(CheckOK, check, "%s%s", since, where)
}

func (d *doctor) listen(p profiles.Profile, r *apitype.StateReport, running bool) {
	if running {
		d.line(CheckOK, "módulo local", "el agente está en ejecución en %s", r.BaseURL)
		return
	}
	l, err := net.Listen("tcp", p.Listen)
	if err != nil {
		d.line(CheckFail, "módulo local", "la dirección %s está ocupada por otro programa: %v", p.Listen, errors.Unwrap(err))
		return
	}
	l.Close()
	d.line(CheckOK, "módulo local", "la dirección %s está libre (el agente no está en ejecución)", p.Listen)
}

func (d *doctor) outbox(r *apitype.StateReport) {
	o := r.Outbox
	switch {
	case o.Pending == 0:
		d.line(CheckOK, "envíos", "no hay comprobantes pendientes de envío")
	case o.OldestPendingAgeS > 3600:
		d.line(CheckWarn, "envíos", "%s; el más antiguo espera desde %s",
			cfe.Count(int64(o.Pending), "comprobante pendiente", "comprobantes pendientes"), cfe.Hace(time.Duration(o.OldestPendingAgeS)*time.Second))
	default:
		d.line(CheckOK, "envíos", "%s de envío", cfe.Count(int64(o.Pending), "comprobante pendiente", "comprobantes pendientes"))
	}
	if o.Rejected > 0 {
		d.line(CheckWarn, "envíos", "el servicio en la nube rechazó %s", cfe.Count(int64(o.Rejected),
			"comprobante firmado: revíselo (no se reenvía solo)", "comprobantes firmados: revíselos (no se reenvían solos)"))
	}
	if h := r.Hosted; h != nil && h.LastError != "" {
		d.line(CheckWarn, "envíos", "último error del servicio en la nube: %s", h.LastError)
	}
}

// hosted checks that the service answers and accepts the profile's
// credentials, and reports the key's headroom.
func (d *doctor) hosted(ctx context.Context, p profiles.Profile) {
	const check = "servicio en la nube"
	h := p.Hosted
	if h.BaseURL == "" {
		d.line(CheckWarn, check, "no configurado: los comprobantes firmados quedan en la cola local")
		return
	}
	c, err := NewHostedClient(h, slog.New(slog.DiscardHandler))
	if err != nil {
		d.line(CheckFail, check, "%s", cfe.Describe(err))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		d.line(CheckFail, check, "%s no responde: %v", h.BaseURL, errors.Unwrap(err))
		return
	}
	if c.Auth() == hosted.AuthNone {
		d.line(CheckWarn, check, "%s responde, pero el perfil no tiene credenciales (api_key, o username y secret): "+
			"los comprobantes firmados no pueden enviarse", h.BaseURL)
		return
	}
	auth := "clave API de empresa"
	if c.Auth() == hosted.AuthJWT {
		auth = "usuario " + h.Username + " (JWT)"
	}
	if _, err := c.Empresas(ctx); err != nil {
		d.line(CheckFail, check, "%s responde, pero no acepta las credenciales (%s): %s", h.BaseURL, auth, cfe.Describe(err))
		return
	}
	headroom := ""
	if rl := c.Status().RateLimit; rl != nil {
		headroom = fmt.Sprintf("; cupo de la clave: %d de %d por minuto, %d de %d por hora",
			rl.RemainingMinute, rl.LimitMinute, rl.RemainingHour, rl.LimitHour)
	}
	d.line(CheckOK, check, "%s responde; autenticación: %s%s", h.BaseURL, auth, headroom)
}

// hostedLive reports the hosted service as the running agent uses it (its
// /state's hosted block): the service its settings name, environment
// included, and what its last request or probe found. The doctor does not
// ask the service itself: this console may lack the agent's credentials.
func (d *doctor) hostedLive(h *apitype.HostedReport) {
	const check = "servicio en la nube"
	if h == nil {
		d.line(CheckWarn, check, "el agente en ejecución no tiene servicio configurado: los comprobantes firmados quedan en la cola local")
		return
	}
	auth := map[string]string{hosted.AuthAPIKey: "clave API de empresa", hosted.AuthJWT: "usuario (JWT)"}[h.Auth]
	checked := ""
	if h.CheckedAt != nil {
		checked = " (comprobado el " + h.CheckedAt.In(cfe.Montevideo).Format("02/01/2006 15:04:05") + ")"
	}
	switch {
	case h.Auth == hosted.AuthNone:
		d.line(CheckWarn, check, "%s: el agente no tiene credenciales (api_key, o username y secret): "+
			"los comprobantes firmados no pueden enviarse", h.BaseURL)
	case h.Reachable == nil:
		d.line(CheckWarn, check, "%s: el agente todavía no lo consultó; autenticación: %s", h.BaseURL, auth)
	case !*h.Reachable:
		d.line(CheckFail, check, "%s no responde al agente%s: %s", h.BaseURL, checked, cmp.Or(h.LastError, "sin detalle"))
	case h.LastError != "":
		d.line(CheckWarn, check, "%s responde%s, pero: %s", h.BaseURL, checked, h.LastError)
	default:
		headroom := ""
		if rl := h.RateLimit; rl != nil {
			headroom = fmt.Sprintf("; cupo de la clave: %d de %d por minuto, %d de %d por hora",
				rl.RemainingMinute, rl.LimitMinute, rl.RemainingHour, rl.LimitHour)
		}
		d.line(CheckOK, check, "%s responde%s; autenticación: %s%s", h.BaseURL, checked, auth, headroom)
	}
}
