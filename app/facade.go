package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
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
	endpoint Endpoint
}

// FacadeConfig configures a Facade.
type FacadeConfig struct {
	Version string // the agent's version, in the state report
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Zone reads the machine's time zone; issuer.MachineZone when nil.
	Zone func(time.Time) issuer.ZoneStatus
}

// Endpoint is where the local module serves a Facade: its base URL and the
// addresses it can be reached at (localapi.Server).
type Endpoint interface {
	BaseURL() string
	URLs() []string
}

// NewFacade returns the Facade of an open agent.
func NewFacade(a *Agent, cfg FacadeConfig) *Facade {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Zone == nil {
		cfg.Zone = issuer.MachineZone
	}
	return &Facade{a: a, log: a.Log, version: cfg.Version, now: cfg.Now, zone: cfg.Zone}
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

// zoneReport is the machine's time zone as the state report gives it.
func zoneReport(z issuer.ZoneStatus) apitype.ZoneReport {
	return apitype.ZoneReport{OK: z.OK(), Nombre: z.Name, Desfase: issuer.FormatOffset(z.Offset), Mensaje: z.Message()}
}
