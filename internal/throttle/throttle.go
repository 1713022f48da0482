// Package throttle slows down guessing of credentials: it counts failed
// authentications in token buckets (golang.org/x/time/rate) at up to three
// tiers and says when a caller must wait.
//
//   - Per address (always): an address may fail Failures times without
//     pause (a success neither counts nor resets anything); after that it
//     earns one more try every Window/Failures, so that over any Window it
//     gets at most about 2×Failures tries. An IPv4-mapped IPv6 address
//     counts as the IPv4 address, and an IPv6 zone is ignored.
//   - Per prefix (Limits.PrefixFailures > 0): the same over every address of
//     an IPv4 /24 or an IPv6 /64 (PrefixOf). Whoever holds one address of a
//     /64 can use all 2^64 of them, and a LAN guesser usually has its whole
//     /24, so exact addresses alone do not slow a guesser down.
//   - In total (Limits.TotalFailures > 0): a ceiling of failures per Window
//     over all sources together, so that a guesser with many prefixes is
//     held as one.
//
// All tiers share Window. A failure is counted only when every tier that
// holds the caller has a try left, and then it uses one try of each;
// otherwise nothing is counted and the caller must wait: Verdict.Tier names
// the tier out of tries, Verdict.Wait says until when.
//
// Trust (Limits.TrustFor > 0): a caller that authenticated (Success) is
// trusted until TrustFor after its last success. A trusted address is held
// by its own address tier only; any address of a trusted prefix by its
// address and prefix tiers, not by the total. So sources that never
// authenticated (a guesser's) cannot lock the shop's terminals out by
// exhausting a prefix or the ceiling, while a terminal's own wrong tries
// still count for its address, and a guesser who spoofs a trusted address
// or sits in a trusted prefix gets that address's or that prefix's tries,
// no more.
//
// Memory is bounded: a tier tracks at most MaxAddrs addresses or
// MaxPrefixes prefixes, the trust table at most MaxTrusted addresses and
// prefixes (the least recently authenticated go first). A tracked key is
// forgotten only once its bucket is full again, when forgetting it loses
// nothing: pressure never forgives a failure, so a blocked address or prefix
// stays blocked until its block ends. A key that finds its tier's table full
// of keys still paying back gets no entry of its own: all such keys of the
// tier share one overflow bucket with the tier's limits, so a flood of new
// sources gets, together, the tries of one source, until tracked keys have
// their tries back and make room. With a total ceiling the tables barely
// fill: only failures that the ceiling let through (at most 2×TotalFailures
// per Window) or that came from trusted sources create entries. State lives
// in memory; a restart forgets it.
//
// Concurrent attempts: a caller asks Check before it checks a credential,
// and after the check either Failure (which uses a try atomically and says
// whether there was one) or, for a valid credential, Check again and then
// Success. So however many attempts a source sends at once, at most as many
// outcomes as it has tries are revealed: the others are answered "wait".
//
// The local module (localapi, wrong LAN tokens: every tier) and the sandbox
// (invalid API keys: per address only) both use it.
package throttle

import (
	"container/heap"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"
)

// The prefix lengths of the prefix tier.
const (
	PrefixBits4 = 24 // IPv4: a /24, a typical shop network
	PrefixBits6 = 64 // IPv6: a /64, one link's SLAAC prefix
)

// Limits configure a Throttle. Zero or negative fields take New's defaults;
// a zero PrefixFailures, TotalFailures or TrustFor turns that part off.
type Limits struct {
	// Failures an address may make at once before it must wait.
	Failures int
	// Window is how long a bucket takes to earn all its tries back, in
	// every tier.
	Window time.Duration
	// MaxAddrs caps how many addresses are tracked.
	MaxAddrs int

	// PrefixFailures an IPv4 /24 or IPv6 /64 may make at once.
	PrefixFailures int
	// MaxPrefixes caps how many prefixes are tracked.
	MaxPrefixes int

	// TotalFailures all sources together may make at once: the ceiling of
	// failures per Window.
	TotalFailures int

	// TrustFor is how long after its last success an address, and its
	// prefix, are trusted (see the package comment).
	TrustFor time.Duration
	// MaxTrusted caps how many addresses and prefixes are trusted.
	MaxTrusted int
}

// Tier is a level of counting.
type Tier uint8

// The tiers, from the most specific.
const (
	None    Tier = iota // no tier: the caller may try
	Address             // the caller's own address
	Prefix              // the caller's IPv4 /24 or IPv6 /64
	Total               // all sources together
)

func (t Tier) String() string {
	switch t {
	case Address:
		return "address"
	case Prefix:
		return "prefix"
	case Total:
		return "total"
	}
	return "none"
}

// Tiers is a set of tiers.
type Tiers uint8

// Has reports whether t is in the set.
func (s Tiers) Has(t Tier) bool { return s&(1<<t) != 0 }

func (s *Tiers) add(t Tier) { *s |= 1 << t }

// Verdict is the throttle's answer for one caller.
type Verdict struct {
	// Tier is the tier out of tries, the most specific one when several
	// are; None when the caller may try (Check) or its failure was counted
	// (Failure).
	Tier Tier
	// Wait is how long until every tier holding the caller has a try again;
	// 0 when Tier is None.
	Wait time.Duration
	// Emptied lists the tiers whose last try a counted failure used
	// (Failure only): from now on they make callers wait.
	Emptied Tiers
}

// Blocked reports whether the caller must wait.
func (v Verdict) Blocked() bool { return v.Tier != None }

// Throttle counts failures. Its methods are safe for concurrent use.
type Throttle struct {
	lim Limits

	mu      sync.Mutex
	tiers   []*tier                                 // address, then prefix and total when on
	trusted *simplelru.LRU[netip.Prefix, time.Time] // last success per address and prefix; nil when TrustFor is 0
}

// New returns a Throttle with l. Zero or negative fields take 10 failures
// per address, one minute, 4096 addresses, 4096 prefixes and 1024 trusted
// entries; PrefixFailures, TotalFailures and TrustFor stay off when zero.
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
	l.PrefixFailures = max(l.PrefixFailures, 0)
	if l.MaxPrefixes <= 0 {
		l.MaxPrefixes = 4096
	}
	l.TotalFailures = max(l.TotalFailures, 0)
	l.TrustFor = max(l.TrustFor, 0)
	if l.MaxTrusted <= 0 {
		l.MaxTrusted = 1024
	}
	t := &Throttle{lim: l, tiers: []*tier{newTier(Address, l.Failures, l.Window, l.MaxAddrs)}}
	if l.PrefixFailures > 0 {
		t.tiers = append(t.tiers, newTier(Prefix, l.PrefixFailures, l.Window, l.MaxPrefixes))
	}
	if l.TotalFailures > 0 {
		t.tiers = append(t.tiers, newTier(Total, l.TotalFailures, l.Window, 1))
	}
	if l.TrustFor > 0 {
		t.trusted, _ = simplelru.NewLRU[netip.Prefix, time.Time](l.MaxTrusted, nil) // errors only for a size <= 0
	}
	return t
}

// Limits returns the throttle's effective limits.
func (t *Throttle) Limits() Limits { return t.lim }

// PrefixOf returns the prefix the prefix tier counts a's failures in: its
// IPv4 /24 (IPv4-mapped IPv6 included) or its IPv6 /64.
func PrefixOf(a netip.Addr) netip.Prefix {
	a = a.Unmap().WithZone("")
	bits := PrefixBits6
	if a.Is4() {
		bits = PrefixBits4
	}
	p, _ := a.Prefix(bits) // an error only for the zero Addr: the zero Prefix then
	return p
}

// Check says whether a must wait before it may try at now. It counts
// nothing.
func (t *Throttle) Check(a netip.Addr, now time.Time) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.verdict(t.holds(a, now), now)
}

// Failure records a failed authentication from a at now, when every tier
// holding a has a try left. Otherwise it counts nothing and the verdict is
// blocked (another attempt used the last try meanwhile): the caller answers
// "wait", not "wrong credential".
func (t *Throttle) Failure(a netip.Addr, now time.Time) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.holds(a, now)
	v := t.verdict(hs, now)
	if v.Blocked() {
		return v
	}
	for _, h := range hs {
		if h.tier.use(h.key, h.entry, now) {
			v.Emptied.add(h.tier.kind)
		}
	}
	return v
}

// Success records that a authenticated at now: a and its prefix are trusted
// for Limits.TrustFor. It changes nothing when trust is off.
func (t *Throttle) Success(a netip.Addr, now time.Time) {
	if t.lim.TrustFor <= 0 {
		return
	}
	a = a.Unmap().WithZone("")
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trusted.Add(netip.PrefixFrom(a, a.BitLen()), now)
	t.trusted.Add(PrefixOf(a), now)
}

// Blocked reports whether a must wait before it may try again at now, and
// for how long (Check).
func (t *Throttle) Blocked(a netip.Addr, now time.Time) (time.Duration, bool) {
	v := t.Check(a, now)
	return v.Wait, v.Blocked()
}

// Fail records a failed authentication from a at now (Failure). blocked
// reports that a had no try left for it: the caller answers "wait", not
// "wrong credential", and retry says for how long.
func (t *Throttle) Fail(a netip.Addr, now time.Time) (retry time.Duration, blocked bool) {
	v := t.Failure(a, now)
	return v.Wait, v.Blocked()
}

// RetryAfter is a wait as the Retry-After header gives it: whole seconds,
// rounded up, at least 1.
func RetryAfter(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}

// Len returns how many addresses are tracked.
func (t *Throttle) Len() int { return t.Tracked(Address) }

// Tracked returns how many keys a tier tracks (addresses, prefixes, 1 or 0
// for the total), or for None how many addresses and prefixes are trusted,
// expired ones included until they are pushed out.
func (t *Throttle) Tracked(kind Tier) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kind == None {
		if t.trusted == nil {
			return 0
		}
		return t.trusted.Len()
	}
	for _, tr := range t.tiers {
		if tr.kind == kind {
			return len(tr.keys)
		}
	}
	return 0
}

// hold is one tier's count of a caller: the key it counts under and the
// entry that holds that key's tries (nil: all its tries).
type hold struct {
	tier  *tier
	key   netip.Prefix
	entry *entry
}

// holds returns the tiers that hold a at now. The caller holds t.mu.
func (t *Throttle) holds(a netip.Addr, now time.Time) []hold {
	a = a.Unmap().WithZone("")
	addr := netip.PrefixFrom(a, a.BitLen())
	pfx := PrefixOf(a)
	trustedAddr, trustedPfx := t.trusts(addr, now), t.trusts(pfx, now)
	hs := make([]hold, 0, len(t.tiers))
	for _, tr := range t.tiers {
		var key netip.Prefix
		switch tr.kind {
		case Address:
			key = addr
		case Prefix:
			if trustedAddr {
				continue
			}
			key = pfx
		case Total:
			if trustedAddr || trustedPfx {
				continue
			}
		}
		hs = append(hs, hold{tier: tr, key: key, entry: tr.find(key, now)})
	}
	return hs
}

// trusts reports whether key authenticated less than TrustFor before now.
// The caller holds t.mu.
func (t *Throttle) trusts(key netip.Prefix, now time.Time) bool {
	if t.trusted == nil {
		return false
	}
	last, ok := t.trusted.Peek(key)
	return ok && now.Sub(last) < t.lim.TrustFor
}

// verdict says whether hs have a try each at now. The caller holds t.mu.
func (t *Throttle) verdict(hs []hold, now time.Time) Verdict {
	var v Verdict
	for _, h := range hs {
		if h.entry == nil || h.entry.bucket.TokensAt(now) >= 1 {
			continue
		}
		if v.Tier == None {
			v.Tier = h.tier.kind
		}
		v.Wait = max(v.Wait, h.tier.wait(h.entry, now))
	}
	return v
}

// tier counts failures per key in token buckets of one size.
type tier struct {
	kind  Tier
	burst int
	every rate.Limit
	max   int

	keys  map[netip.Prefix]*entry
	queue fullQueue // the tracked keys by the time their bucket is full again
	spill *entry    // the overflow bucket of keys that found the table full
}

// entry is one bucket of tries.
type entry struct {
	key    netip.Prefix
	bucket *rate.Limiter
	fullAt time.Time // when the bucket is full again: the key may be forgotten then
	index  int       // in the tier's queue
}

func newTier(kind Tier, burst int, window time.Duration, maxKeys int) *tier {
	every := rate.Every(window / time.Duration(burst))
	return &tier{kind: kind, burst: burst, every: every, max: maxKeys, keys: map[netip.Prefix]*entry{},
		spill: &entry{bucket: rate.NewLimiter(every, burst), index: -1}}
}

// forget drops the keys whose bucket is full again at now: they lose
// nothing by it.
func (tr *tier) forget(now time.Time) {
	for len(tr.queue) > 0 && !tr.queue[0].fullAt.After(now) {
		e := heap.Pop(&tr.queue).(*entry)
		delete(tr.keys, e.key)
	}
}

// find returns the entry holding key's tries at now: its own; the overflow
// bucket when it has none and the table is full; nil when it has none and
// could get one (all its tries).
func (tr *tier) find(key netip.Prefix, now time.Time) *entry {
	tr.forget(now)
	if e := tr.keys[key]; e != nil {
		return e
	}
	if len(tr.keys) >= tr.max {
		return tr.spill
	}
	return nil
}

// use takes one try of key, whose entry find returned as e, at now, and
// reports whether that was the bucket's last try.
func (tr *tier) use(key netip.Prefix, e *entry, now time.Time) (emptied bool) {
	tracked := e != nil && e != tr.spill
	if e == nil {
		e = &entry{key: key, bucket: rate.NewLimiter(tr.every, tr.burst)}
	}
	e.bucket.AllowN(now, 1)
	left := e.bucket.TokensAt(now)
	if e == tr.spill {
		return left < 1
	}
	// Rounded up, so that at fullAt the bucket is full to within a
	// nanosecond's worth of a try.
	e.fullAt = now.Add(time.Duration(math.Ceil((float64(tr.burst) - left) / float64(tr.every) * float64(time.Second))))
	if tracked {
		heap.Fix(&tr.queue, e.index)
	} else {
		tr.keys[key] = e
		heap.Push(&tr.queue, e)
	}
	return left < 1
}

// wait is how long until e has a try again at now.
func (tr *tier) wait(e *entry, now time.Time) time.Duration {
	return time.Duration((1 - e.bucket.TokensAt(now)) / float64(tr.every) * float64(time.Second))
}

// fullQueue orders entries by fullAt (container/heap).
type fullQueue []*entry

func (q fullQueue) Len() int           { return len(q) }
func (q fullQueue) Less(i, j int) bool { return q[i].fullAt.Before(q[j].fullAt) }
func (q fullQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}

func (q *fullQueue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}

func (q *fullQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	e.index = -1
	return e
}
