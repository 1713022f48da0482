package issuer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// RequiredZone is the only zone in which the agent signs: Uruguay's.
const RequiredZone = "America/Montevideo"

// ZoneStatus is what the machine's time zone looks like now.
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
	return fmt.Sprintf("La zona horaria del equipo es %s con desfase %s; para firmar se requiere %s con desfase -03:00. "+
		"Corrija la zona horaria del sistema y reintente: no se firmó ningún comprobante.",
		name, FormatOffset(z.Offset), RequiredZone)
}

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

// MachineZone reads the machine's time zone: the TZ environment variable when it
// is set, otherwise the operating system's setting. The offset is the one in
// force at now in that zone.
func MachineZone(now time.Time) ZoneStatus {
	if tz, ok := os.LookupEnv("TZ"); ok {
		return zoneFromTZ(tz, now)
	}
	name, src := systemZoneName()
	_, off := now.In(time.Local).Zone()
	return ZoneStatus{Name: name, Source: src, Offset: off}
}

// zoneFromTZ interprets a TZ value the way the C library and Go do: empty means
// UTC, a leading ':' is dropped, and the rest names a zoneinfo file.
func zoneFromTZ(tz string, now time.Time) ZoneStatus {
	tz = strings.TrimPrefix(tz, ":")
	if tz == "" {
		return ZoneStatus{Name: "UTC", Source: "TZ", Offset: 0}
	}
	name := tz
	if filepath.IsAbs(tz) {
		name = zoneNameFromPath(tz)
	}
	loc, err := loadLocation(name)
	if err != nil {
		// An unknown zone makes the C library and Go fall back to UTC.
		return ZoneStatus{Name: tz, Source: "TZ", Offset: 0}
	}
	_, off := now.In(loc).Zone()
	return ZoneStatus{Name: name, Source: "TZ", Offset: off}
}

// locations caches the zones loaded by name: time.LoadLocation reads and
// parses the zoneinfo file on every call, and MachineZone runs on every
// signature. A zone's rules change only with an update of the system's time
// zone data, which a running Go process does not see for its local zone
// either.
var locations sync.Map // name → *time.Location

func loadLocation(name string) (*time.Location, error) {
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err == nil {
		locations.Store(name, loc)
	}
	return loc, err
}

// zoneNameFromPath turns /usr/share/zoneinfo/America/Montevideo (or a link to
// it) into America/Montevideo.
func zoneNameFromPath(p string) string {
	if target, err := filepath.EvalSymlinks(p); err == nil {
		p = target
	}
	if i := strings.Index(p, "zoneinfo/"); i >= 0 {
		name := p[i+len("zoneinfo/"):]
		return strings.TrimPrefix(strings.TrimPrefix(name, "posix/"), "right/")
	}
	return p
}
