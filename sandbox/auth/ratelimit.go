package auth

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// keyLimiter enforces the per-minute and per-hour limits of company API keys
// over fixed windows aligned to the clock's minute and hour. A refused
// request does not count. State lives in memory.
type keyLimiter struct {
	mu sync.Mutex
	m  map[int64]*keyWindows
}

type keyWindows struct {
	minute, hour window
}

type window struct {
	start time.Time
	count int
}

// limitState is what the X-RateLimit-* headers report.
type limitState struct {
	perMinute, remMinute int
	perHour, remHour     int
	retry                time.Duration // when refused
}

func newKeyLimiter() *keyLimiter { return &keyLimiter{m: map[int64]*keyWindows{}} }

// take counts one request of key id against its limits, or refuses it.
func (l *keyLimiter) take(id int64, perMinute, perHour int, now time.Time) (limitState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kw := l.m[id]
	if kw == nil {
		kw = &keyWindows{}
		l.m[id] = kw
	}
	kw.minute.roll(now.Truncate(time.Minute))
	kw.hour.roll(now.Truncate(time.Hour))
	st := limitState{perMinute: perMinute, perHour: perHour}
	if kw.minute.count >= perMinute {
		st.retry = kw.minute.start.Add(time.Minute).Sub(now)
	}
	if kw.hour.count >= perHour {
		st.retry = max(st.retry, kw.hour.start.Add(time.Hour).Sub(now))
	}
	if st.retry == 0 {
		kw.minute.count++
		kw.hour.count++
	}
	st.remMinute = max(perMinute-kw.minute.count, 0)
	st.remHour = max(perHour-kw.hour.count, 0)
	return st, st.retry == 0
}

func (w *window) roll(start time.Time) {
	if !w.start.Equal(start) {
		*w = window{start: start}
	}
}

func (st limitState) setHeaders(h http.Header) {
	h.Set("X-RateLimit-Limit-Minute", strconv.Itoa(st.perMinute))
	h.Set("X-RateLimit-Remaining-Minute", strconv.Itoa(st.remMinute))
	h.Set("X-RateLimit-Limit-Hour", strconv.Itoa(st.perHour))
	h.Set("X-RateLimit-Remaining-Hour", strconv.Itoa(st.remHour))
}
