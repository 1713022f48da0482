package issuer

import (
	"fmt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The signing rule on the machine's time zone: the issuer signs only when the
// zone is America/Montevideo at -03:00, and otherwise rejects with code 96
// before a number is reserved. Reading the zone is the operating system's
// side (internal/machinezone), injected as Config.Zone.

// RequiredZone is the only zone in which the agent signs: Uruguay's.
const RequiredZone = "America/Montevideo"

// ZoneStatus is what the machine's time zone looks like now: what
// Config.Zone reports.
type ZoneStatus struct {
	Name   string // IANA name (or the Windows zone name) found on the machine; "" if unknown
	Source string // where the name came from: "TZ", "/etc/localtime", "registry", ...
	Offset int    // current offset from UTC in seconds
}

// OK reports whether the machine may sign: the zone is America/Montevideo
// (Windows: "Montevideo Standard Time") and its current offset is -03:00.
func (z ZoneStatus) OK() bool {
	return isMontevideo(z.Name) && z.Offset == cfe.MontevideoOffset
}

// Message explains, in Spanish, what was found and what is required. It is the
// mensaje_respuesta of a rejection with code 96.
func (z ZoneStatus) Message() string {
	name := z.Name
	if name == "" {
		name = "desconocida"
	}
	if z.OK() {
		return fmt.Sprintf("zona horaria %s (%s): correcta", name, FormatOffset(z.Offset))
	}
	fix := "Corrija la zona horaria del sistema"
	if z.Source == WindowsZoneSource {
		fix = "Corrija la zona horaria en " + WindowsZoneFix
	}
	return fmt.Sprintf("La zona horaria del equipo es %s con desfase %s; para firmar se requiere %s con desfase -03:00. "+
		"%s y reintente: no se firmó ningún comprobante.",
		name, FormatOffset(z.Offset), RequiredZone, fix)
}

// WindowsZoneSource is ZoneStatus.Source when the zone was read from the
// Windows registry (internal/machinezone).
const WindowsZoneSource = "registry"

// WindowsZoneFix is where a Windows user sets the zone: the path of Windows
// 10 and 11's Settings app in Spanish, and the zone as its list names it.
const WindowsZoneFix = "Configuración > Hora e idioma > Fecha y hora > Zona horaria: «(UTC-03:00) Montevideo»"

// FormatOffset writes an offset in seconds as ±hh:mm.
func FormatOffset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("%c%02d:%02d", sign, sec/3600, sec%3600/60)
}

func isMontevideo(name string) bool {
	switch name {
	case RequiredZone, "Montevideo Standard Time":
		return true
	}
	return false
}
