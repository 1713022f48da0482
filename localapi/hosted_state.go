package localapi

import (
	"fmt"
	"time"
)

// HostedState is what the agent knows of the hosted service, from its last
// answers (no request is made to build it).
type HostedState struct {
	URL       string
	Auth      string    // "api_key", "jwt" or "ninguna"
	Reachable bool      // the last request got an answer
	Contact   time.Time // when the service last answered; zero if never
	LastError string    // Spanish; "" after a success
	RateLimit *RateLimit
	// WaitUntil is when requests may go again after a 429 or a used-up
	// window; zero when they may go now.
	WaitUntil time.Time
}

// RateLimit is the profile key's quota as the service last reported it.
type RateLimit struct {
	LimitMinute, RemainingMinute int
	LimitHour, RemainingHour     int
	ObservedAt                   time.Time
}

// HostedReport is the "hosted" object of /state; null when the profile
// names no hosted service.
type HostedReport struct {
	URL       string           `json:"url"`
	Reachable bool             `json:"reachable"`
	Auth      string           `json:"auth"`
	LastError string           `json:"last_error"`
	Contact   *time.Time       `json:"last_contact"`
	RateLimit *RateLimitReport `json:"rate_limit"`
	// WaitS is how many seconds requests wait for, after a 429 or with the
	// key's window used up; 0 when they go now.
	WaitS int64 `json:"wait_s"`
}

// RateLimitReport is the key's headroom (null with a JWT or before the first
// answer).
type RateLimitReport struct {
	LimitMinute     int       `json:"limit_minute"`
	RemainingMinute int       `json:"remaining_minute"`
	LimitHour       int       `json:"limit_hour"`
	RemainingHour   int       `json:"remaining_hour"`
	ObservedAt      time.Time `json:"observed_at"`
}

// addHosted reports the hosted service and warns when it is failing while
// CFEs wait to be delivered, or when the service refused some for good.
func (rep *StateReport) addHosted(h *HostedState, o Outbox, now time.Time) {
	if o.Rejected > 0 {
		rep.flag(HealthDegraded, fmt.Sprintf("el servicio alojado rechazó %d comprobantes firmados: revíselos (no se reenvían solos)", o.Rejected))
	}
	if h == nil {
		return
	}
	hr := &HostedReport{URL: h.URL, Reachable: h.Reachable, Auth: h.Auth, LastError: h.LastError}
	if !h.Contact.IsZero() {
		t := h.Contact
		hr.Contact = &t
	}
	if r := h.RateLimit; r != nil {
		hr.RateLimit = &RateLimitReport{LimitMinute: r.LimitMinute, RemainingMinute: r.RemainingMinute,
			LimitHour: r.LimitHour, RemainingHour: r.RemainingHour, ObservedAt: r.ObservedAt}
	}
	if h.WaitUntil.After(now) {
		hr.WaitS = int64(h.WaitUntil.Sub(now).Round(time.Second) / time.Second)
	}
	rep.Hosted = hr
	if h.LastError != "" && o.Pending > 0 {
		rep.flag(HealthDegraded, "servicio alojado: "+h.LastError+"; los comprobantes firmados esperan en la cola local")
	}
}
