package localapi

import (
	"context"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// StateSource builds the state report: the application's state use case
// (app.Facade), which the tray and the status page read too; the module
// only encodes it.
type StateSource interface {
	// Report returns the state report as of now; full adds what only /state
	// shows (the module's addresses). It is called on every /health request,
	// so it must be cheap (one read transaction). It always returns a
	// report: when the agent's facts could not be read the report says so
	// (status "error"), and the error is the cause, for the module's log.
	Report(ctx context.Context, full bool) (*apitype.StateReport, error)
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

// report reads the state report from the StateSource; full adds what only
// /state shows. The cause of facts that could not be read is logged with the
// request's id.
func (s *Server) report(ctx context.Context, full bool) *apitype.StateReport {
	rep, err := s.cfg.State.Report(ctx, full)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "reading the agent's state",
			slog.String("request_id", requestID(ctx)), slog.String("err", err.Error()))
	}
	return rep
}
