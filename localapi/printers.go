package localapi

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// PrinterList lists the printers a point of sale may name in POST /pdf;
// cmd/cfe-agent implements it over the profile and the printer package.
type PrinterList interface {
	// Printers returns the profile's aliases and the machine's printers. A
	// spooler that cannot be asked is reported in the answer (System.Error),
	// not as an error; an error means the list could not be made at all.
	Printers(ctx context.Context) (*PrintersReport, error)
}

// PrintersReport is the body of GET /printers.
type PrintersReport struct {
	OK      bool   `json:"ok"` // always true: a failure is answered with the error shape
	Profile string `json:"profile"`
	// Aliases are the profile's printers, sorted by name.
	Aliases []PrinterAlias `json:"aliases"`
	System  SystemPrinters `json:"system"`
}

// PrinterAlias is one printer of the profile.
type PrinterAlias struct {
	Name    string `json:"name"`    // the alias, as POST /pdf's impresora takes it
	Backend string `json:"backend"` // cups, lp, dir, windows…
	// Target is where the alias prints: a CUPS queue, a Windows printer or
	// a folder.
	Target   string `json:"target"`
	Protocol string `json:"protocol"` // what the printer is sent: pdf (or escpos)
	Default  bool   `json:"default"`  // the profile's default printer
	// State is the state of the system printer the alias prints on (idle,
	// printing, stopped), "not_found" when the spooler answered without it,
	// and absent when it cannot be told (a folder, or the spooler did not
	// answer).
	State  string `json:"state,omitempty"`
	Reason string `json:"reason,omitempty"` // the spooler's reason, with State
}

// SystemPrinters are the machine's printers, as its spooler reports them.
type SystemPrinters struct {
	// Source is the spooler asked: "cups" (Linux, macOS) or "windows".
	Source   string          `json:"source"`
	Printers []SystemPrinter `json:"printers"`
	// Error says, in Spanish, why the spooler could not be asked; the list
	// is then empty.
	Error string `json:"error,omitempty"`
}

// SystemPrinter is one printer of the machine's spooler.
type SystemPrinter struct {
	Name        string `json:"name"` // a CUPS queue or a Windows printer: POST /pdf takes it as impresora
	Description string `json:"description"`
	Location    string `json:"location"`
	Model       string `json:"model"`
	// State is "idle", "printing" or "stopped".
	State string `json:"state"`
	// Reason is the spooler's explanation of the state ("Sin papel",
	// "paused", "sin papel, tapa abierta"); "" when there is none.
	Reason        string `json:"reason"`
	AcceptingJobs bool   `json:"accepting_jobs"`
	Default       bool   `json:"default"` // the spooler's default printer
}

// Printer states of the listing.
const (
	PrinterIdle     = "idle"
	PrinterPrinting = "printing"
	PrinterStopped  = "stopped"
	PrinterNotFound = "not_found"
)

func (s *Server) registerPrinterRoutes(r *mux.Router) {
	s.handle(r, http.MethodGet, "/printers", s.handlePrinters)
}

// handlePrinters answers the printer listing, 503 without a PrinterList.
func (s *Server) handlePrinters(w http.ResponseWriter, r *http.Request) {
	if s.cfg.PrinterList == nil {
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "la lista de impresoras no está disponible en este agente"))
		return
	}
	rep, err := s.cfg.PrinterList.Printers(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rep.OK = true
	if rep.Aliases == nil {
		rep.Aliases = []PrinterAlias{}
	}
	if rep.System.Printers == nil {
		rep.System.Printers = []SystemPrinter{}
	}
	writeJSON(w, http.StatusOK, rep)
}

// Printers calls GET /printers.
func (c *Client) Printers(ctx context.Context) (*PrintersReport, error) {
	var rep PrintersReport
	if err := c.do(ctx, http.MethodGet, "/printers", nil, &rep, http.StatusOK); err != nil {
		return nil, err
	}
	return &rep, nil
}
