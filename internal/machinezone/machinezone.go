// Package machinezone reads the machine's time zone from the operating
// system: the TZ environment variable when it is set, otherwise the system's
// setting (/etc/localtime or /etc/timezone on Linux and macOS, the registry
// on Windows). It is the OS side of the issuer's zone check: Read fills the
// issuer's ZoneStatus, and the issuer applies the signing rule (only
// America/Montevideo at -03:00, else rejection 96) before a number is
// reserved. The agent wires Read into the issuer and the local module's
// state report; tests point both elsewhere.
package machinezone

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/issuer"
)

// Read reads the machine's time zone: the TZ environment variable when it is
// set, otherwise the operating system's setting. The offset is the one in
// force at now in that zone. It reads on every call, so a zone changed while
// the agent runs counts from the next CFE.
func Read(now time.Time) issuer.ZoneStatus {
	if tz, ok := os.LookupEnv("TZ"); ok {
		return zoneFromTZ(tz, now)
	}
	name, src := systemZoneName()
	_, off := now.In(time.Local).Zone()
	return issuer.ZoneStatus{Name: name, Source: src, Offset: off}
}

// zoneFromTZ interprets a TZ value the way the C library and Go do: empty means
// UTC, a leading ':' is dropped, and the rest names a zoneinfo file.
func zoneFromTZ(tz string, now time.Time) issuer.ZoneStatus {
	tz = strings.TrimPrefix(tz, ":")
	if tz == "" {
		return issuer.ZoneStatus{Name: "UTC", Source: "TZ", Offset: 0}
	}
	name := tz
	if filepath.IsAbs(tz) {
		name = zoneNameFromPath(tz)
	}
	loc, err := loadLocation(name)
	if err != nil {
		// An unknown zone makes the C library and Go fall back to UTC.
		return issuer.ZoneStatus{Name: tz, Source: "TZ", Offset: 0}
	}
	_, off := now.In(loc).Zone()
	return issuer.ZoneStatus{Name: name, Source: "TZ", Offset: off}
}

// locations caches the zones loaded by name: time.LoadLocation reads and
// parses the zoneinfo file on every call, and Read runs on every signature.
// A zone's rules change only with an update of the system's time zone data,
// which a running Go process does not see for its local zone either.
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
