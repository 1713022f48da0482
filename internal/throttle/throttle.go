// Package throttle slows down guessing of credentials: it counts failed
// authentications per client address with a token bucket
// (golang.org/x/time/rate) and says when an address must wait.
//
// Each address may fail Failures times without pause (a success neither
// counts nor resets anything); after that it earns one more try every
// Window/Failures, so that over any Window it gets at most about
// 2×Failures tries. Addresses are kept exactly (an IPv6 /64 is not
// grouped), so a caller never pays for a neighbour's failures. The table is
// bounded: when MaxAddrs addresses are tracked, a new one makes room by
// forgetting the addresses whose bucket is full again or, when none is, the
// one whose last failure is oldest. State lives in memory; a restart forgets
// it.
//
// Concurrent attempts: a caller asks Blocked before it checks a credential,
// and after the check either Fail (which consumes a try atomically and says
// whether there was one) or, for a valid credential, Blocked again. So
// however many attempts an address sends at once, at most as many outcomes
// as it has tries are revealed: the others are answered "wait".
//
// The local module (localapi, wrong LAN tokens) and the sandbox (invalid
// API keys) both use it.
package throttle

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits configure a Throttle.
type Limits struct {
	// Failures an address may make at once before it must wait.
	Failures int
	// Window is how long an address takes to earn all its tries back.
	Window time.Duration
	// MaxAddrs caps how many addresses are tracked.
	MaxAddrs int
}

// Throttle counts failures per address. Its methods are safe for concurrent use.
type Throttle struct {
	lim   Limits
	every rate.Limit

	mu    sync.Mutex
	addrs map[netip.Addr]*entry
}

type entry struct {
	bucket *rate.Limiter
	last   time.Time // last failure
}

// New returns a Throttle with l; zero or negative fields take 10 failures,
// one minute and 4096 addresses.
func New(l Limits) *Throttle {
	if l.Failures <= 0 {
		l.Failures = 10
	}
	if l.Window <= 0 {
		l.Window = time.Minute
	}
	if l.MaxAddrs <= 0 {
		l.MaxAddrs = 4096
	}
	return &Throttle{lim: l, every: rate.Every(l.Window / time.Duration(l.Failures)), addrs: map[netip.Addr]*entry{}}
}

// Limits returns the throttle's effective limits.
func (t *Throttle) Limits() Limits { return t.lim }

// Blocked reports whether a must wait before it may try again at now, and
// for how long. It counts nothing.
func (t *Throttle) Blocked(a netip.Addr, now time.Time) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.addrs[a.Unmap()]
	if e == nil {
		return 0, false
	}
	if e.bucket.TokensAt(now) >= 1 {
		return 0, false
	}
	return t.waitLocked(e, now), true
}

// Fail records a failed authentication from a at now. blocked reports that
// a had no try left for it (another attempt of a used the last one
// meanwhile): the caller answers "wait", not "wrong credential", and retry
// says for how long.
func (t *Throttle) Fail(a netip.Addr, now time.Time) (retry time.Duration, blocked bool) {
	a = a.Unmap()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.addrs[a]
	if e == nil {
		if len(t.addrs) >= t.lim.MaxAddrs {
			t.makeRoom(now)
		}
		e = &entry{bucket: rate.NewLimiter(t.every, t.lim.Failures)}
		t.addrs[a] = e
	}
	e.last = now
	if e.bucket.AllowN(now, 1) { // an empty bucket stays empty
		return 0, false
	}
	return t.waitLocked(e, now), true
}

// waitLocked is how long until e has a try again. The caller holds t.mu.
func (t *Throttle) waitLocked(e *entry, now time.Time) time.Duration {
	return time.Duration((1 - e.bucket.TokensAt(now)) / float64(t.every) * float64(time.Second))
}

// RetryAfter is a wait as the Retry-After header gives it: whole seconds,
// rounded up, at least 1.
func RetryAfter(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}

// Len returns how many addresses are tracked.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.addrs)
}

// makeRoom forgets every address whose bucket is full again; when none is,
// it forgets the one whose last failure is oldest.
func (t *Throttle) makeRoom(now time.Time) {
	var oldest netip.Addr
	var oldestAt time.Time
	for a, e := range t.addrs {
		if e.bucket.TokensAt(now) >= float64(t.lim.Failures) {
			delete(t.addrs, a)
			continue
		}
		if !oldest.IsValid() || e.last.Before(oldestAt) {
			oldest, oldestAt = a, e.last
		}
	}
	if len(t.addrs) >= t.lim.MaxAddrs {
		delete(t.addrs, oldest)
	}
}
