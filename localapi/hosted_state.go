package localapi

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Hosted is what the agent knows of the hosted service, from its last
// requests and probes (no request is made to build it).
type Hosted struct {
	BaseURL   string
	CheckedAt time.Time // when the last request or probe ended; zero until the first
	Reachable bool      // the last request or probe got an answer
	Auth      string    // "api_key", "jwt" or "ninguna"; "" when unknown
	LastError string    // Spanish; "" after a success
	RateLimit *RateLimit
	// WaitUntil is when requests may go again after a 429 or with the key's
	// window used up; zero when they may go now.
	WaitUntil time.Time
}

// RateLimit is the profile key's quota as the service last reported it.
type RateLimit struct {
	LimitMinute, RemainingMinute int
	LimitHour, RemainingHour     int
	ObservedAt                   time.Time
}

// HostedReport is the "hosted" object of /state; null when the profile names
// no hosted service.
type HostedReport struct {
	BaseURL string `json:"base_url"`
	// Reachable and CheckedAt are null until the first request or probe ends.
	Reachable *bool      `json:"reachable"`
	CheckedAt *time.Time `json:"checked_at"`
	Auth      string     `json:"auth,omitempty"`
	LastError string     `json:"last_error,omitempty"`
	// RateLimit is the profile key's headroom; absent with a JWT or before
	// the first answer.
	RateLimit *RateLimitReport `json:"rate_limit,omitempty"`
	// WaitS is how many seconds requests wait, after a 429 or with the key's
	// window used up; absent when they go now.
	WaitS int64 `json:"wait_s,omitempty"`
}

// RateLimitReport is the key's headroom.
type RateLimitReport struct {
	LimitMinute     int       `json:"limit_minute"`
	RemainingMinute int       `json:"remaining_minute"`
	LimitHour       int       `json:"limit_hour"`
	RemainingHour   int       `json:"remaining_hour"`
	ObservedAt      time.Time `json:"observed_at"`
}

// addHosted reports the hosted service. The agent signs without it, so an
// unreachable or failing service only degrades the status: receipts wait in
// the outbox. CFEs the service refused for good degrade it too.
func (rep *StateReport) addHosted(h *Hosted, o Outbox, now time.Time) {
	if o.Rejected > 0 {
		rep.flag(HealthDegraded, fmt.Sprintf("el servicio en la nube rechazó %d comprobantes firmados: revíselos (no se reenvían solos)", o.Rejected))
	}
	if h == nil {
		return
	}
	hr := &HostedReport{BaseURL: h.BaseURL, Auth: h.Auth, LastError: h.LastError}
	rep.Hosted = hr
	if r := h.RateLimit; r != nil {
		hr.RateLimit = &RateLimitReport{LimitMinute: r.LimitMinute, RemainingMinute: r.RemainingMinute,
			LimitHour: r.LimitHour, RemainingHour: r.RemainingHour, ObservedAt: r.ObservedAt}
	}
	if h.WaitUntil.After(now) {
		hr.WaitS = int64(h.WaitUntil.Sub(now).Round(time.Second) / time.Second)
	}
	if h.CheckedAt.IsZero() {
		return
	}
	at, ok := h.CheckedAt.In(cfe.Montevideo), h.Reachable
	hr.CheckedAt, hr.Reachable = &at, &ok
	switch {
	case !ok:
		rep.flag(HealthDegraded, fmt.Sprintf("el servicio en la nube (%s) no responde: los comprobantes firmados esperan en la cola", h.BaseURL))
	case h.LastError != "" && o.Pending > 0:
		rep.flag(HealthDegraded, fmt.Sprintf("el servicio en la nube (%s): %s; los comprobantes firmados esperan en la cola", h.BaseURL, h.LastError))
	}
}
