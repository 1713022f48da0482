package tray

import (
	"fmt"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Assessment is what the icon and tooltip say about the agent.
type Assessment struct {
	State  assets.IconState
	Reason string // Spanish, one line per reason; "" when all is well
	// Signs: the agent can sign (a red icon then means a daily report to
	// DGI past its deadline, not a refusal to sign).
	Signs bool
	// Test is a profile of the sandbox environment: its receipts have no
	// fiscal value, and the tray says MODO PRUEBA (first line, tooltip,
	// icon mark).
	Test bool
}

// testModeLine is the menu's first line in test mode.
const testModeLine = "MODO PRUEBA: comprobantes sin valor fiscal"

// isTestMode reports whether the report is of a profile whose receipts have
// no fiscal value: any environment but production (the sandbox).
func isTestMode(rep *apitype.StateReport) bool {
	return rep != nil && rep.Environment != "" && rep.Environment != "produccion"
}

// Assess maps a state report (or the error of reading it) to the icon state
// and the tooltip's reason. The module's own status decides: "error" (cannot
// sign: time zone wrong, certificate expired, no CAE numbers, numbering held
// until the agent knows where it stands, the store's last commit failed or
// its disk is nearly full) is red,
// "degraded" (certificate or CAE ranges expiring or running out, outbox
// backlog, hosted service unreachable, the disk's free space running low, a
// signed CFE whose stored record cannot be read back and waits in the
// quarantine, a daily report to DGI late) is amber, but red once a daily
// report is past DGI's deadline (dgi.urgencia_reporte "roja": the agent
// still signs); a module that does not answer is red. The reason is the module's
// warnings, so the tray says what /health says.
func Assess(rep *apitype.StateReport, err error) Assessment {
	if err != nil || rep == nil {
		return Assessment{State: assets.IconError, Reason: "el agente no responde"}
	}
	reason := strings.Join(rep.Warnings, "\n")
	test := isTestMode(rep)
	switch rep.Status {
	case apitype.HealthOK:
		return Assessment{State: assets.IconOK, Signs: true, Test: test}
	case apitype.HealthDegraded:
		if rep.DGI != nil && rep.DGI.UrgenciaReporte == cfe.ReportUrgent {
			// DGI's deadline for a daily report passed: red, though the
			// agent signs; the report's warning first.
			var first, rest []string
			for _, w := range rep.Warnings {
				if strings.Contains(w, "reporte diario") {
					first = append(first, w)
				} else {
					rest = append(rest, w)
				}
			}
			return Assessment{State: assets.IconError, Reason: strings.Join(append(first, rest...), "\n"), Signs: true, Test: test}
		}
		return Assessment{State: assets.IconWarning, Reason: reason, Signs: true, Test: test}
	default:
		if reason == "" {
			reason = "el agente no puede firmar"
		}
		return Assessment{State: assets.IconError, Reason: reason, Test: test}
	}
}

// Tooltip is the icon's tooltip: the product, MODO PRUEBA in test mode,
// the profile and the reason.
func (a Assessment) Tooltip(profile string) string {
	t := "Agente CFE"
	if a.Test {
		t += " — MODO PRUEBA"
	}
	if profile != "" {
		t += " (" + profile + ")"
	}
	if a.Reason == "" {
		return t + ": funcionando"
	}
	return t + ": " + a.Reason
}

// redWatch tells when the agent turns red: once per change from another
// state (or from nothing, the first refresh), not on every refresh.
type redWatch struct{ red bool }

// turnedRed records the state s of a refresh and reports whether it is a
// change to red.
func (w *redWatch) turnedRed(s assets.IconState) bool {
	red := s == assets.IconError
	turned := red && !w.red
	w.red = red
	return turned
}

// reasonLine is the menu's first line: why the agent is red ("No puede
// firmar: …") or amber ("Atención: …"), with the first reason and how many
// more there are; "" when all is well.
func reasonLine(a Assessment) string {
	if a.Reason == "" {
		return ""
	}
	reasons := strings.Split(a.Reason, "\n")
	first := reasons[0]
	prefix := "Atención: "
	if a.State == assets.IconError && a.Signs {
		prefix = "Urgente: "
	} else if a.State == assets.IconError {
		prefix = "No puede firmar: "
		// The module's own wording may say it already.
		for _, p := range []string{"no se puede firmar: ", "no puede firmar: "} {
			if rest, ok := strings.CutPrefix(first, p); ok {
				first = rest
				break
			}
		}
	}
	line := prefix + first
	switch n := len(reasons) - 1; n {
	case 0:
	case 1:
		line += " (y 1 aviso más)"
	default:
		line += fmt.Sprintf(" (y %d avisos más)", n)
	}
	return line
}

// maxReasonLines is how many lines of the menu say why the agent is red or
// amber; the rest is behind "Detalles…" (the status page).
const maxReasonLines = 4

// reasonLines is reasonLine broken into lines of at most maxLineRunes
// characters (at most maxReasonLines of them, the last ending in "…" when
// cut): nil when all is well.
func reasonLines(a Assessment) []string {
	l := reasonLine(a)
	if l == "" {
		return nil
	}
	return clipLines(wrapText(l, maxLineRunes), maxReasonLines, maxLineRunes)
}

// receiptName names the newest signed CFE ("e-Ticket A-12"), "El último
// comprobante" when there is none.
func receiptName(rep *apitype.StateReport) string {
	if rep == nil || len(rep.Receipts.Recent) == 0 {
		return "El último comprobante"
	}
	r := rep.Receipts.Recent[0]
	return fmt.Sprintf("%s %s-%d", r.Nombre, r.Serie, r.Numero)
}

// statusLines are the menu's disabled status lines, in order: profile and
// environment, listen address, last receipt, pending deliveries.
func statusLines(rep *apitype.StateReport, profile string) [4]string {
	if rep == nil {
		return [4]string{"Perfil: " + profile, "Dirección: —", "Último comprobante: —", "Envíos pendientes: —"}
	}
	last := "ninguno"
	if len(rep.Receipts.Recent) > 0 {
		r := rep.Receipts.Recent[0]
		last = fmt.Sprintf("%s %s-%d (%s)", r.Nombre, r.Serie, r.Numero,
			r.FirmadoA.In(cfe.Montevideo).Format("02/01 15:04"))
	}
	return [4]string{
		fmt.Sprintf("Perfil: %s (%s)", rep.Profile, environmentLabel(rep.Environment)),
		"Dirección: " + rep.BaseURL,
		"Último comprobante: " + last,
		fmt.Sprintf("Envíos pendientes: %d%s%s", rep.Outbox.Pending, pendingAge(rep.Outbox.OldestPendingAgeS), quarantined(rep.Outbox.Quarantined)),
	}
}

// quarantined is the pending line's note on the CFEs held out of delivery
// because their stored record cannot be read back; "" when none.
func quarantined(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "; 1 dañado en cuarentena"
	}
	return fmt.Sprintf("; %d dañados en cuarentena", n)
}

func environmentLabel(env string) string {
	switch env {
	case "produccion":
		return "producción"
	case "":
		return "sin entorno"
	}
	return env
}

func pendingAge(seconds int64) string {
	if seconds <= 0 {
		return ""
	}
	// The status page's form (cfe.Hace): "hace menos de 1 min", never "hace 0 min".
	return " (el más antiguo " + cfe.Hace(time.Duration(seconds)*time.Second) + ")"
}

// lastReceipt is the UUID of the newest signed CFE, "" when none.
func lastReceipt(rep *apitype.StateReport) string {
	if rep == nil || len(rep.Receipts.Recent) == 0 {
		return ""
	}
	return rep.Receipts.Recent[0].UUID
}

// failedJob is the notification of a print job that failed on the default
// printer after seen (a POST /pdf of the point of sale, say): an error, not
// information. ok is false when there is none.
func failedJob(rep *apitype.StateReport, seen time.Time) (n Notification, ok bool) {
	if rep == nil || rep.Printer == nil {
		return Notification{}, false
	}
	p := rep.Printer
	if p.OK || p.Source != apitype.PrinterCheckJob || !p.At.After(seen) {
		return Notification{}, false
	}
	return Notification{Summary: "No se pudo imprimir", Body: "La impresora «" + p.Alias + "» no imprimió el comprobante: " + p.Reason,
		Failed: true}, true
}
