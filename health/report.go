package health

import (
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Identity is the part of the state report that says who reports: the
// agent's version and profile, where its local module serves, and the
// machine's time zone as the signing rule sees it.
type Identity struct {
	BaseURL string
	// URLs are the module's addresses, loopback first; only /state shows
	// them (nil for /health).
	URLs        []string
	Version     string
	Profile     string
	Environment string // "produccion" or "sandbox"
	Zone        apitype.ZoneReport
}

// Report is the whole state report (the body of GET /state, whose first
// part GET /health answers): id, and st assessed at now (Assess). A wrong
// time zone is an error: the agent cannot sign. When the facts could not be
// read (err), the report says so instead, as an error, with the fault's own
// message when the technician can act on it (cfe.UserFacingFault: a damaged
// store file); the cause stays in the caller's log.
func Report(id Identity, st State, err error, now time.Time) *apitype.StateReport {
	rep := &apitype.StateReport{HealthReport: apitype.HealthReport{
		Status:      apitype.HealthOK,
		BaseURL:     id.BaseURL,
		Version:     id.Version,
		Profile:     id.Profile,
		Environment: id.Environment,
		ZonaHoraria: id.Zone,
		Warnings:    []string{},
	}, URLs: id.URLs}
	if !id.Zone.OK {
		Flag(rep, apitype.HealthError, id.Zone.Mensaje)
	}
	if err != nil {
		msg := "no se pudo leer el estado del agente"
		if cfe.UserFacingFault(err) {
			msg += ": " + cfe.ErrorMessage(err)
		}
		Flag(rep, apitype.HealthError, msg)
	} else {
		Assess(rep, st, now)
	}
	rep.OK = rep.Status != apitype.HealthError
	return rep
}
