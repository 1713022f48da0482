package sandbox

import (
	"net/http"
	"sync/atomic"

	"github.com/gorilla/mux"
)

// metrics are counters an operator can read at GET /sandbox/metrics.
type metrics struct {
	loginFailures  atomic.Int64
	loginBlocked   atomic.Int64
	loginAlerts    atomic.Int64
	keyRateLimited atomic.Int64
	recoveryEmails atomic.Int64

	keyFailuresBlocked atomic.Int64
	refreshReuse       atomic.Int64
}

// Metrics is the body of GET /sandbox/metrics.
type Metrics struct {
	LoginFailures  int64 `json:"login_failures"`
	LoginBlocked   int64 `json:"login_blocked"`
	LoginAlerts    int64 `json:"login_alerts"`
	KeyRateLimited int64 `json:"api_key_rate_limited"`
	RecoveryEmails int64 `json:"recovery_emails"`

	// KeyFailuresBlocked counts requests refused because their address sent
	// too many invalid API keys.
	KeyFailuresBlocked int64 `json:"api_key_failures_blocked"`
	// RefreshReuse counts sessions revoked because an exchanged refresh
	// token was presented again.
	RefreshReuse int64 `json:"refresh_token_reuse"`
}

func (m *metrics) snapshot() Metrics {
	out := Metrics{
		LoginFailures:  m.loginFailures.Load(),
		LoginBlocked:   m.loginBlocked.Load(),
		LoginAlerts:    m.loginAlerts.Load(),
		KeyRateLimited: m.keyRateLimited.Load(),
		RecoveryEmails: m.recoveryEmails.Load(),
	}
	out.KeyFailuresBlocked = m.keyFailuresBlocked.Load()
	out.RefreshReuse = m.refreshReuse.Load()
	return out
}

func (s *Server) registerMetricsRoutes(r *mux.Router) {
	r.HandleFunc("/sandbox/metrics", s.handleMetrics).Methods(http.MethodGet)
}

// handleMetrics exposes the counters. They carry no secret and no
// identifier, so the endpoint needs no credentials.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.metrics.snapshot())
}
