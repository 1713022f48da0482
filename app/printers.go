package app

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// SystemPrintersTimeout bounds the question to the spooler of GET /printers.
const SystemPrintersTimeout = 5 * time.Second

// printerList answers GET /printers from the profile's printers and the
// machine's spooler.
type printerList struct {
	name    string           // the profile's name
	profile profiles.Profile // resolved
	watch   *PrinterWatch    // what the agent last learned of each printer; nil without printing
}

// newPrinterList lists the printers of a's profile.
func newPrinterList(a *Agent) printerList {
	return printerList{name: a.Name, profile: a.Profile, watch: a.PrinterWatch}
}

// Printers implements localapi.PrinterList. The spooler is asked on every
// call: a printer's state is what matters, and it changes.
func (l printerList) Printers(ctx context.Context) (*apitype.PrintersReport, error) {
	m, err := PrinterManager(l.profile)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, SystemPrintersTimeout)
	defer cancel()
	source, system, sysErr := m.SystemPrinters(ctx)
	rep := printersReport(l.name, l.profile, source, system, sysErr)
	for i := range rep.Aliases {
		rep.Aliases[i].LastCheck = l.watch.lastCheck(rep.Aliases[i].Name)
	}
	return rep, nil
}

// printersReport joins the profile's aliases with the spooler's printers:
// an alias that prints on a spooler's printer carries that printer's state.
func printersReport(name string, p profiles.Profile, source printer.Backend, system []printer.SystemPrinter, sysErr error) *apitype.PrintersReport {
	rep := &apitype.PrintersReport{Profile: name, Aliases: []apitype.PrinterAlias{},
		System: apitype.SystemPrinters{Source: string(source), Printers: []apitype.SystemPrinter{}}}
	byName := make(map[string]printer.SystemPrinter, len(system))
	for _, sp := range system {
		byName[sp.Name] = sp
		rep.System.Printers = append(rep.System.Printers, apitype.SystemPrinter{Name: sp.Name, Description: sp.Description,
			Location: sp.Location, Model: sp.Model, State: sp.State, Reason: sp.Reason, AcceptingJobs: sp.Accepting,
			Default: sp.Default})
	}
	if sysErr != nil {
		rep.System.Error = cfe.ErrorMessage(sysErr)
	}
	for _, alias := range slices.Sorted(maps.Keys(p.Printers)) {
		pr := p.Printers[alias]
		a := apitype.PrinterAlias{Name: alias, Backend: string(pr.Backend), Target: printerTarget(pr),
			Protocol: printerProtocol(pr), Default: strings.EqualFold(alias, p.DefaultPrinter)}
		if spooled(pr.Backend, source) && sysErr == nil {
			if sp, ok := byName[pr.Queue]; ok {
				a.State, a.Reason = sp.State, sp.Reason
				if !sp.Accepting {
					a.State, a.Reason = apitype.PrinterStopped, strings.TrimPrefix(a.Reason+"; no acepta trabajos", "; ")
				}
			} else {
				a.State = apitype.PrinterNotFound
			}
		}
		rep.Aliases = append(rep.Aliases, a)
	}
	return rep
}

// spooled reports whether a printer of backend b goes through the spooler
// that was asked.
func spooled(b profiles.Backend, source printer.Backend) bool {
	switch b {
	case profiles.BackendCUPS, profiles.BackendLP:
		return source == printer.BackendCUPS
	case profiles.BackendWindows:
		return source == printer.BackendWindows
	}
	return false
}

// printerTarget is where a profile's printer prints: its folder, its
// network address or device file (ESC/POS), or its queue (a CUPS queue, a
// Windows printer).
func printerTarget(pr profiles.Printer) string {
	switch pr.Backend {
	case profiles.BackendDir:
		return pr.Dir
	case profiles.BackendTCP:
		return pr.Address
	case profiles.BackendDevice:
		return pr.Device
	}
	return pr.Queue
}

// printerProtocol is what a profile's printer is sent: pdf, or escpos for a
// thermal printer.
func printerProtocol(pr profiles.Printer) string {
	return string(cmp.Or(pr.Protocol, profiles.ProtocolPDF))
}
