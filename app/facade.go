package app

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/internal/machinezone"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printing"
)

// Facade is the one in-process entry to the use cases of an agent that
// serves: signing, the state report, printing, the printer listing, the
// status page's view and backups. The local module (localapi) calls it
// through the interfaces it declares, the tray through Runner (State,
// Print), the status page through StatusPage: all three see the same
// answers, and none of them reaches the others. It holds no lock: every
// use case is safe for concurrent use.
type Facade struct {
	a        *Agent
	log      *slog.Logger
	version  string
	now      func() time.Time
	zone     func(time.Time) issuer.ZoneStatus
	printing PrintService
	printers printerList
	page     statusPage
	endpoint Endpoint // set by Serve, before the module serves
}

// FacadeConfig configures a Facade.
type FacadeConfig struct {
	Version string // the agent's version, in the state report
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Zone reads the machine's time zone; machinezone.Read when nil.
	Zone func(time.Time) issuer.ZoneStatus
}

// Endpoint is where the local module serves a Facade: its base URL and the
// addresses it can be reached at (localapi.Server).
type Endpoint interface {
	BaseURL() string
	URLs() []string
}

// NewFacade returns the Facade of an open agent. It sets up printing from
// the profile (newPrinting: a profile whose templates or printers cannot be
// used logs why, and printing then refuses with the reason).
func NewFacade(a *Agent, cfg FacadeConfig) *Facade {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Zone == nil {
		cfg.Zone = machinezone.Read
	}
	printing := newPrinting(a) // sets a.PrinterWatch, which the listing reads
	return &Facade{a: a, log: a.Log, version: cfg.Version, now: cfg.Now, zone: cfg.Zone,
		printing: printing, printers: newPrinterList(a)}
}

// Agent is the agent the Facade serves.
func (f *Facade) Agent() *Agent { return f.a }

// Serve names the local module that serves f, whose base URL and addresses
// the state report gives. It must be called before the module serves.
func (f *Facade) Serve(e Endpoint) { f.endpoint = e }

// Issue signs a CFE (localapi.Issuer): the issuer's use case. The store's
// commit wakes the deliverer and counts toward the backups (store.DB.WatchCommits).
func (f *Facade) Issue(ctx context.Context, req *cfe.Request) (*issuer.Result, error) {
	return f.a.Issuer.Issue(ctx, req)
}

// Report is the state use case (localapi.StateSource): the state report GET
// /state answers, the tray shows and the status page writes out, built by
// health.Report from the agent's identity, the machine's time zone and the
// agent's facts as of now; full adds the module's addresses. It always
// returns a report; the error is why the facts could not be read (the
// report then says so), for the caller's log.
func (f *Facade) Report(ctx context.Context, full bool) (*apitype.StateReport, error) {
	now := f.now()
	id := health.Identity{Version: f.version, Profile: f.a.Name, Environment: string(f.a.Profile.Environment),
		Zone: zoneReport(f.zone(now))}
	if f.endpoint != nil {
		id.BaseURL = f.endpoint.BaseURL()
		if full {
			id.URLs = f.endpoint.URLs()
		}
	}
	st, err := f.a.facts(ctx, now)
	return health.Report(id, st, err, now), err
}

// report is Report with the module's addresses, for the agent's own readers
// (the tray, the status page, diagnostics); why the facts could not be read
// is logged.
func (f *Facade) report(ctx context.Context) *apitype.StateReport {
	rep, err := f.Report(ctx, true)
	if err != nil {
		f.log.Error("reading the agent's state", "err", err)
	}
	return rep
}

// Render renders the stored CFE ref names with the template variant ("":
// the profile's), the first step of POST /pdf (localapi.Printing).
func (f *Facade) Render(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error) {
	return f.printing.Render(ctx, ref, variant)
}

// Load finds the stored CFE ref names for the template variant without
// rendering its PDF, which Print renders if its printer needs one: POST /pdf
// answering JSON (localapi's documentLoader).
func (f *Facade) Load(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error) {
	return f.printing.Load(ctx, ref, variant)
}

// Print sends doc to printer with the profile's copies, else fallbackCopies,
// else 1: the second step of POST /pdf (localapi.Printing).
func (f *Facade) Print(ctx context.Context, doc *printing.Document, printer string, fallbackCopies int) (printing.PrintResult, error) {
	res, err := f.printing.Print(ctx, doc, printer, fallbackCopies)
	f.a.PrinterWatch.recordJob(printer, err)
	return res, err
}

// Reprint prints the signed CFE uuid again on the printer called alias,
// with the profile's template and copies: the tray's reprint (Runner.Print),
// the same two steps as POST /pdf. Errors: ENOTFOUND (no such CFE or
// printer), EUNAVAILABLE (printing is not possible now, or the printer
// refused or failed, with its reason), EINVALID, EINTERNAL.
func (f *Facade) Reprint(ctx context.Context, uuid, alias string) error {
	doc, err := f.printing.Render(ctx, printing.CFERef{UUID: uuid}, "")
	if err != nil {
		return err
	}
	res, err := f.printing.Print(ctx, doc, alias, 0)
	f.a.PrinterWatch.recordJob(alias, err)
	if err != nil {
		return err
	}
	f.log.Info("cfe printed", "cfe", doc.Name(), "template", doc.Template, "printer", alias, "copies", res.Copies,
		"job", res.JobID, "state", res.State, "format", cmp.Or(res.Format, printing.FormatPDF), "by", "tray")
	return nil
}

// Printers lists the profile's printers and the machine's (GET /printers,
// localapi.PrinterList).
func (f *Facade) Printers(ctx context.Context) (*apitype.PrintersReport, error) {
	return f.printers.Printers(ctx)
}

// Backup takes a verified backup of the store into the data directory's
// backups folder (POST /backup, localapi.Backups). Only a serving agent
// takes backups: EUNAVAILABLE otherwise.
func (f *Facade) Backup(ctx context.Context) (*apitype.BackupResult, error) {
	if f.a.Backups == nil {
		return nil, cfe.Errorf(cfe.EUNAVAILABLE, "las copias de seguridad las toma el agente en ejecución")
	}
	return f.a.Backups.Backup(ctx)
}

// zoneReport is the machine's time zone as the state report gives it.
func zoneReport(z issuer.ZoneStatus) apitype.ZoneReport {
	return apitype.ZoneReport{OK: z.OK(), Nombre: z.Name, Desfase: issuer.FormatOffset(z.Offset), Mensaje: z.Message()}
}
