package app

import (
	"strings"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// dgi reports the CFEs' states at DGI: in direct mode the agent's sending
// (docs/dgi-direct.md), in provider mode what the hosted service reports
// (docs/dgi-provider.md): the counts of /state's dgi block, and each of the
// state's warnings about DGI (a CFE DGI rejected, urgent CFEs not received
// in time, a sending whose outcome is unknown, a backlog, a sender that
// cannot start) as a WARN line of its own. In provider mode with a service
// that reports no state of DGI the block is absent and nothing is said.
func (d *doctor) dgi(r *apitype.StateReport) {
	g := r.DGI
	if g == nil {
		return
	}
	check := "DGI (envío directo)"
	if d.provider {
		check = "DGI (por el proveedor)"
	}
	var problems []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "DGI") && !strings.Contains(w, "reporte diario") {
			problems = append(problems, w)
		}
	}
	status := CheckOK
	if len(problems) > 0 {
		status = CheckWarn
	}
	d.line(status, check, "%d enviados, %d aceptados, %d rechazados, %d observados, %d pendientes, %d sin respuesta",
		g.Enviados, g.Aceptados, g.Rechazados, g.Observados, g.Pendientes, g.Desconocidos)
	for _, p := range problems {
		d.line(CheckWarn, check, "%s", p)
	}
}
