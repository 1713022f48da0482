package hosted

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rate-limit headers of the service (interface §7 rule 2).
const (
	HeaderLimitMinute     = "X-RateLimit-Limit-Minute"
	HeaderRemainingMinute = "X-RateLimit-Remaining-Minute"
	HeaderLimitHour       = "X-RateLimit-Limit-Hour"
	HeaderRemainingHour   = "X-RateLimit-Remaining-Hour"
)

// windowMargin is added to the start of the next window before a key with no
// requests left sends again, for clocks a little apart.
const windowMargin = 500 * time.Millisecond

// RateLimit is a key's quota as the last answer reported it.
type RateLimit struct {
	LimitMinute     int
	RemainingMinute int
	LimitHour       int
	RemainingHour   int
	ObservedAt      time.Time
}

// parseRateLimit reads the X-RateLimit-* headers; ok is false when the answer
// carried none (JWT requests, errors before the key was checked).
func parseRateLimit(h http.Header, now time.Time) (RateLimit, bool) {
	rl := RateLimit{ObservedAt: now}
	for _, f := range []struct {
		name string
		dst  *int
	}{
		{HeaderLimitMinute, &rl.LimitMinute}, {HeaderRemainingMinute, &rl.RemainingMinute},
		{HeaderLimitHour, &rl.LimitHour}, {HeaderRemainingHour, &rl.RemainingHour},
	} {
		n, err := strconv.Atoi(strings.TrimSpace(h.Get(f.name)))
		if err != nil || n < 0 {
			return RateLimit{}, false
		}
		*f.dst = n
	}
	return rl, true
}

// exhaustedUntil returns when the key may send again when it has no requests
// left: the start of the next minute (or hour) window. The service's windows
// are fixed and aligned to the clock's minute and hour.
func (rl RateLimit) exhaustedUntil() (time.Time, bool) {
	switch {
	case rl.RemainingHour == 0:
		return rl.ObservedAt.Truncate(time.Hour).Add(time.Hour + windowMargin), true
	case rl.RemainingMinute == 0:
		return rl.ObservedAt.Truncate(time.Minute).Add(time.Minute + windowMargin), true
	}
	return time.Time{}, false
}

// retryAfter reads Retry-After in seconds (the service's form) or as an HTTP
// date; zero when absent or unreadable.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// gate holds requests back until a time: the end of a 429's Retry-After, or
// the next window of a key with no requests left.
type gate struct {
	mu sync.Mutex
	t  time.Time
}

// hold moves the gate's time to t, if later.
func (g *gate) hold(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.After(g.t) {
		g.t = t
	}
}

func (g *gate) until() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.t
}

// wait returns once the gate's time has passed, or when ctx ends.
func (g *gate) wait(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	for {
		d := g.until().Sub(now())
		if d <= 0 {
			return ctx.Err()
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}
