package auth

import "sync/atomic"

// Counters are the protections' counters an operator reads at GET
// /sandbox/metrics. They carry no secret and no identifier.
type Counters struct {
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

// Snapshot reads every counter.
func (m *Counters) Snapshot() Metrics {
	return Metrics{
		LoginFailures:      m.loginFailures.Load(),
		LoginBlocked:       m.loginBlocked.Load(),
		LoginAlerts:        m.loginAlerts.Load(),
		KeyRateLimited:     m.keyRateLimited.Load(),
		RecoveryEmails:     m.recoveryEmails.Load(),
		KeyFailuresBlocked: m.keyFailuresBlocked.Load(),
		RefreshReuse:       m.refreshReuse.Load(),
	}
}
