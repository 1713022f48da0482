package health

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// addHosted reports the hosted service. The agent signs without it, so an
// unreachable or failing service only degrades the status: receipts wait in
// the outbox. CFEs the service refused for good degrade it too.
func addHosted(rep *apitype.StateReport, h *Hosted, o cfe.Outbox, now time.Time) {
	if o.Rejected > 0 {
		Flag(rep, apitype.HealthDegraded, "el servicio en la nube rechazó "+cfe.Count(int64(o.Rejected), "comprobante firmado: revíselo (no se reenvía solo)",
			"comprobantes firmados: revíselos (no se reenvían solos)"))
	}
	if h == nil {
		return
	}
	hr := &apitype.HostedReport{BaseURL: h.BaseURL, Auth: h.Auth, LastError: h.LastError}
	rep.Hosted = hr
	if r := h.RateLimit; r != nil {
		rl := *r
		hr.RateLimit = &rl
	}
	if h.WaitUntil.After(now) {
		hr.WaitS = int64(h.WaitUntil.Sub(now).Round(time.Second) / time.Second)
	}
	if h.CheckedAt.IsZero() {
		return
	}
	at, ok := h.CheckedAt.In(cfe.Montevideo), h.Reachable
	hr.CheckedAt, hr.Reachable = &at, &ok
	switch {
	case !ok:
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("el servicio en la nube (%s) no responde: los comprobantes firmados esperan en la cola", h.BaseURL))
	case h.LastError != "" && o.Pending > 0:
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("el servicio en la nube (%s): %s; los comprobantes firmados esperan en la cola", h.BaseURL, h.LastError))
	}
}
