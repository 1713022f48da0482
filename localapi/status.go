package localapi

import (
	"context"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// StateSource reports what the agent holds; cmd/cfe-agent implements it over
// the store and the signer.
type StateSource interface {
	// State returns a snapshot of the agent's state. It is called on every
	// /health request, so it must be cheap (one read transaction). Any error
	// is reported as status "error" (EUNAVAILABLE or EINTERNAL).
	State(ctx context.Context) (health.State, error)
}

func (s *Server) registerStatusRoutes(r *mux.Router) {
	s.handle(r, http.MethodGet, "/health", s.handleHealth)
	s.handle(r, http.MethodGet, "/state", s.handleState)
	s.handle(r, http.MethodGet, "/", s.handleRoot)
}

// handleHealth answers 200 while the agent can sign and 503 when it cannot.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := s.report(r.Context(), false).HealthReport
	status := http.StatusOK
	if !h.OK {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, h)
}

// handleState answers 200 with the full report, whatever the status.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.report(r.Context(), true))
}

// handleRoot is /state for JSON clients; browsers get the status page when
// one is configured.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	if s.cfg.StatusPage != nil && acceptsHTML(r) {
		s.cfg.StatusPage.ServeHTTP(w, r)
		return
	}
	s.handleState(w, r)
}

// acceptsHTML reports whether the request's Accept header lists text/html.
func acceptsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/html" {
			return true
		}
	}
	return false
}

// report builds the state report; full adds what only /state shows (the
// interface addresses are read only then).
func (s *Server) report(ctx context.Context, full bool) *apitype.StateReport {
	now := s.now()
	z := s.cfg.Zone(now)
	rep := &apitype.StateReport{HealthReport: apitype.HealthReport{
		Status:      apitype.HealthOK,
		BaseURL:     s.BaseURL(),
		Version:     s.cfg.Version,
		Profile:     s.cfg.Profile,
		Environment: s.cfg.Environment,
		ZonaHoraria: apitype.ZoneReport{OK: z.OK(), Nombre: z.Name, Desfase: issuer.FormatOffset(z.Offset), Mensaje: z.Message()},
		Warnings:    []string{},
	}}
	if !z.OK() {
		health.Flag(rep, apitype.HealthError, z.Message())
	}
	if full {
		rep.URLs = s.URLs()
	}
	st, err := s.cfg.State.State(ctx)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "reading the agent's state",
			slog.String("request_id", requestID(ctx)), slog.String("err", err.Error()))
		msg := "no se pudo leer el estado del agente"
		if userFacingFault(err) {
			msg += ": " + cfe.ErrorMessage(err) // a fault the technician can act on (a damaged store file)
		}
		health.Flag(rep, apitype.HealthError, msg)
	} else {
		health.Assess(rep, st, now)
	}
	rep.OK = rep.Status != apitype.HealthError
	return rep
}
