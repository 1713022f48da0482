package localapi

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// PrinterList lists the printers a point of sale may name in POST /pdf; the
// application implements it over the profile and the printer package
// (app.Facade.Printers).
type PrinterList interface {
	// Printers returns the profile's aliases and the machine's printers. A
	// spooler that cannot be asked is reported in the answer (System.Error),
	// not as an error; an error means the list could not be made at all.
	Printers(ctx context.Context) (*apitype.PrintersReport, error)
}

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
		rep.Aliases = []apitype.PrinterAlias{}
	}
	if rep.System.Printers == nil {
		rep.System.Printers = []apitype.SystemPrinter{}
	}
	writeJSON(w, http.StatusOK, rep)
}
