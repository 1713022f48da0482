package throttle

import (
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 14, 15, 4, 5, 0, time.UTC)

// v4 and v6 build test addresses (documentation ranges).
func v4(b, c, d byte) netip.Addr { return netip.AddrFrom4([4]byte{192, b, c, d}) }

func v6(prefix, host uint16) netip.Addr {
	return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, byte(prefix >> 8), byte(prefix), 14: byte(host >> 8), 15: byte(host)})
}

func TestThrottle_Blocked(t *testing.T) {
	t.Parallel()
	a, b := netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("192.0.2.11")
	th := New(Limits{Failures: 3, Window: time.Minute, MaxAddrs: 10})
	for i := range 3 {
		if _, blocked := th.Blocked(a, t0); blocked {
			t.Fatalf("blocked after %d failures, want only after 3", i)
		}
		th.Fail(a, t0)
	}
	retry, blocked := th.Blocked(a, t0)
	if !blocked || retry != 20*time.Second {
		t.Fatalf("after 3 failures: blocked %v for %v, want blocked for 20s (one try per Window/Failures)", blocked, retry)
	}
	if _, blocked := th.Blocked(b, t0); blocked {
		t.Fatal("another address is blocked by a's failures")
	}
	if _, blocked := th.Blocked(netip.MustParseAddr("::ffff:192.0.2.10"), t0); !blocked {
		t.Fatal("the IPv4-mapped form of a is not blocked")
	}
	if _, blocked := th.Blocked(a, t0.Add(20*time.Second)); blocked {
		t.Fatal("still blocked once a try was earned back")
	}
	th.Fail(a, t0.Add(20*time.Second))
	if retry, blocked := th.Blocked(a, t0.Add(20*time.Second)); !blocked || retry != 20*time.Second {
		t.Fatalf("after the earned try failed: blocked %v for %v, want 20s", blocked, retry)
	}
}

// TestThrottle_Prefix6: the addresses of one IPv6 /64 share its tries;
// another /64 does not pay for them.
func TestThrottle_Prefix6(t *testing.T) {
	t.Parallel()
	th := New(Limits{Failures: 3, PrefixFailures: 5, Window: time.Minute})
	// Five addresses of 2001:db8:0:1::/64 fail once each: the /64 is out.
	for host := range uint16(5) {
		if v := th.Failure(v6(1, host+1), t0); v.Blocked() {
			t.Fatalf("failure %d of the /64 refused: %+v", host+1, v)
		}
	}
	v := th.Check(v6(1, 1000), t0) // an address of the /64 that never failed
	if v.Tier != Prefix || v.Wait != 12*time.Second {
		t.Fatalf("a fresh address of the exhausted /64: %+v, want blocked by the prefix for 12s (60s/5)", v)
	}
	if v := th.Failure(v6(1, 1000), t0); v.Tier != Prefix {
		t.Fatalf("a failure from the exhausted /64 was counted: %+v", v)
	}
	if v := th.Check(v6(2, 1), t0); v.Blocked() {
		t.Fatalf("an address of another /64 is blocked: %+v", v)
	}
	if got := PrefixOf(v6(1, 77)); got != netip.MustParsePrefix("2001:db8:0:1::/64") {
		t.Fatalf("PrefixOf = %v", got)
	}
	if got := PrefixOf(netip.MustParseAddr("fe80::1%eth0")); got != netip.MustParsePrefix("fe80::/64") {
		t.Fatalf("PrefixOf(link-local with zone) = %v", got)
	}
	// 12 s later the /64 has one try, which any of its addresses may use.
	if v := th.Failure(v6(1, 2000), t0.Add(12*time.Second)); v.Blocked() || !v.Emptied.Has(Prefix) || v.Emptied.Has(Address) {
		t.Fatalf("the earned try of the /64: %+v, want counted, emptying the prefix only", v)
	}
}

// TestThrottle_Prefix4: an IPv4 /24 shares its tries, IPv4-mapped IPv6
// addresses included; the address tier still holds each address first.
func TestThrottle_Prefix4(t *testing.T) {
	t.Parallel()
	th := New(Limits{Failures: 2, PrefixFailures: 4, Window: time.Minute})
	th.Failure(v4(0, 2, 1), t0)
	th.Failure(v4(0, 2, 1), t0)
	if v := th.Check(v4(0, 2, 1), t0); v.Tier != Address || v.Wait != 30*time.Second {
		t.Fatalf("the address after its 2 failures: %+v, want blocked by its address for 30s", v)
	}
	if v := th.Check(v4(0, 2, 2), t0); v.Blocked() {
		t.Fatalf("a neighbour with tries left in the /24 is blocked: %+v", v)
	}
	th.Failure(netip.MustParseAddr("::ffff:192.0.2.2"), t0)
	th.Failure(v4(0, 2, 3), t0)
	if v := th.Check(v4(0, 2, 200), t0); v.Tier != Prefix || v.Wait != 15*time.Second {
		t.Fatalf("a fresh address of the exhausted /24: %+v, want blocked by the prefix for 15s", v)
	}
	// The address out of tries is named first, and waits for both tiers.
	if v := th.Check(v4(0, 2, 1), t0); v.Tier != Address || v.Wait != 30*time.Second {
		t.Fatalf("%+v, want the address named and its 30s", v)
	}
	if v := th.Check(v4(0, 3, 1), t0); v.Blocked() {
		t.Fatalf("another /24 is blocked: %+v", v)
	}
}

// TestThrottle_Total: the ceiling holds sources of every prefix together.
func TestThrottle_Total(t *testing.T) {
	t.Parallel()
	const ceiling = 6
	th := New(Limits{Failures: 10, PrefixFailures: 10, TotalFailures: ceiling, Window: time.Minute})
	for i := range ceiling {
		v := th.Failure(v4(0, byte(i), 1), t0) // a new /24 each time
		if v.Blocked() {
			t.Fatalf("failure %d refused: %+v", i+1, v)
		}
		if last := i == ceiling-1; v.Emptied.Has(Total) != last {
			t.Fatalf("failure %d: emptied %v", i+1, v.Emptied)
		}
	}
	for _, a := range []netip.Addr{v4(0, 200, 1), v6(9, 9), v4(0, 0, 1)} {
		if v := th.Failure(a, t0); v.Tier != Total || v.Wait != 10*time.Second {
			t.Fatalf("%v after the ceiling: %+v, want held by the total for 10s (60s/6)", a, v)
		}
	}
	// Over any span, no more than the ceiling plus what it earns back.
	counted := 0
	for s := range 120 {
		now := t0.Add(time.Duration(s) * time.Second)
		for i := range 50 {
			if !th.Failure(v6(uint16(s), uint16(i)), now).Blocked() {
				counted++
			}
		}
	}
	if counted != 11 { // one try earned back every 10 s, at 10 s, 20 s, ... 110 s
		t.Fatalf("%d failures counted in the two minutes after the ceiling, want 11 (one per 10 s)", counted)
	}
}

// TestThrottle_Trust: sources that authenticated are not held by the tiers
// a guesser elsewhere exhausts; their own failures still count for their
// address.
func TestThrottle_Trust(t *testing.T) {
	t.Parallel()
	th := New(Limits{Failures: 2, PrefixFailures: 4, TotalFailures: 3, Window: time.Minute, TrustFor: time.Hour})
	terminal, neighbour := v4(168, 1, 20), v4(168, 1, 21) // 192.168.1.0/24
	th.Success(terminal, t0)
	// A guesser exhausts the total from three other /24s, and the terminal's
	// /24 from inside it.
	for i := range 3 {
		th.Failure(v4(0, byte(i), 1), t0)
	}
	for i := range 4 {
		th.Failure(v4(168, 1, byte(100+i)), t0)
	}
	if v := th.Check(v4(0, 99, 1), t0); v.Tier != Total {
		t.Fatalf("a stranger: %+v, want held by the total", v)
	}
	if v := th.Check(terminal, t0); v.Blocked() {
		t.Fatalf("the trusted terminal: %+v, want free", v)
	}
	if v := th.Check(neighbour, t0); v.Tier != Prefix {
		t.Fatalf("an untrusted address of the trusted /24: %+v, want held by its exhausted prefix (not the total)", v)
	}
	// The terminal's own wrong tries count for its address, and only there.
	for i := range 2 {
		if v := th.Failure(terminal, t0); v.Blocked() {
			t.Fatalf("the terminal's failure %d refused: %+v", i+1, v)
		}
	}
	if v := th.Check(terminal, t0); v.Tier != Address {
		t.Fatalf("the terminal after its own 2 failures: %+v, want held by its address", v)
	}
	// Past TrustFor the terminal is a stranger again.
	late := t0.Add(time.Hour)
	th2 := New(Limits{Failures: 2, TotalFailures: 1, Window: time.Hour, TrustFor: time.Hour})
	th2.Success(terminal, t0)
	th2.Failure(v4(0, 1, 1), t0) // the ceiling: one failure an hour
	if v := th2.Check(terminal, late.Add(-time.Nanosecond)); v.Blocked() {
		t.Fatalf("trusted until TrustFor: %+v", v)
	}
	th2.Failure(v4(0, 1, 2), late) // the try earned back over the hour, used
	if v := th2.Check(terminal, late); v.Tier != Total {
		t.Fatalf("after TrustFor: %+v, want held by the total like any stranger", v)
	}
	// A neighbour in a trusted prefix is free of the total, while trust lasts.
	th3 := New(Limits{Failures: 2, TotalFailures: 1, Window: time.Hour, TrustFor: time.Hour})
	th3.Success(terminal, t0)
	th3.Failure(v4(0, 1, 1), t0)
	if v := th3.Check(neighbour, t0); v.Blocked() {
		t.Fatalf("an address of a trusted /24 while the total is out: %+v, want free", v)
	}
}

// TestThrottle_FullOfBlockedPrefixes: pressure on the prefix table never
// forgives a blocked prefix; new prefixes share one overflow bucket of a
// prefix's tries until tracked ones have all their tries back.
func TestThrottle_FullOfBlockedPrefixes(t *testing.T) {
	t.Parallel()
	th := New(Limits{Failures: 100, PrefixFailures: 2, MaxPrefixes: 2, Window: time.Minute})
	p1, p2 := v6(1, 1), v6(2, 1)
	th.Failure(p1, t0)
	th.Failure(p1, t0) // 2001:db8:0:1::/64 blocked
	th.Failure(p2, t0) // 2001:db8:0:2::/64 has one try left: the table is full
	counted := 0
	for p := range uint16(1000) {
		if !th.Failure(v6(100+p, 1), t0.Add(time.Second)).Blocked() {
			counted++
		}
	}
	if counted != 2 {
		t.Fatalf("1000 new prefixes against a full table: %d failures counted, want 2 (one prefix's tries, shared)", counted)
	}
	if n := th.Tracked(Prefix); n != 2 {
		t.Fatalf("tracking %d prefixes, want the cap 2", n)
	}
	if v := th.Check(p1, t0.Add(time.Second)); v.Tier != Prefix {
		t.Fatalf("the blocked /64 after the flood: %+v, want still blocked", v)
	}
	if v := th.Check(v6(4000, 1), t0.Add(time.Second)); v.Tier != Prefix {
		t.Fatalf("another new /64 while the overflow is out: %+v, want held by it", v)
	}
	// A minute after their last failures the tracked prefixes have all their
	// tries back, are forgotten, and make room.
	later := t0.Add(time.Minute)
	if v := th.Failure(v6(5000, 1), later); v.Blocked() {
		t.Fatalf("a new /64 once the table has room: %+v", v)
	}
	if n := th.Tracked(Prefix); n != 1 {
		t.Fatalf("tracking %d prefixes after the others earned their tries back, want 1", n)
	}
}

// TestThrottle_FullOfBlockedAddresses: the same for addresses, where
// the old table forgot the oldest blocked one (an address blocked got fresh
// tries once others evicted it).
func TestThrottle_FullOfBlockedAddresses(t *testing.T) {
	t.Parallel()
	th := New(Limits{Failures: 2, Window: time.Minute, MaxAddrs: 3})
	for d := range byte(3) {
		th.Failure(v4(0, 2, d), t0)
		th.Failure(v4(0, 2, d), t0)
	}
	counted := 0
	for i := range 10000 {
		if !th.Failure(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), t0.Add(time.Second)).Blocked() {
			counted++
		}
	}
	if counted != 2 || th.Len() != 3 {
		t.Fatalf("10000 new addresses: %d counted, %d tracked; want 2 (the overflow's tries) and 3", counted, th.Len())
	}
	for d := range byte(3) {
		if v := th.Check(v4(0, 2, d), t0.Add(2*time.Second)); v.Tier != Address {
			t.Fatalf("blocked address %d forgiven under pressure: %+v", d, v)
		}
	}
	// A blocked address stays tracked until its bucket is full again: one
	// minute after its last failure, not earlier.
	if v := th.Check(v4(0, 2, 0), t0.Add(59*time.Second)); v.Blocked() {
		t.Fatalf("59 s after two failures at 2 a minute the address has tries again: %+v", v)
	}
	if th.Failure(v4(0, 2, 9), t0.Add(59*time.Second)); th.Len() != 3 {
		t.Fatalf("tracking %d before the buckets are full, want 3", th.Len())
	}
	th.Failure(v4(0, 2, 9), t0.Add(time.Minute))
	if th.Len() != 1 {
		t.Fatalf("tracking %d once the buckets are full again, want only the new address", th.Len())
	}
}

// TestThrottle_ConcurrentOutcomes: failures sent at once from many sources
// are counted no more than the tiers allow, however they interleave.
func TestThrottle_ConcurrentOutcomes(t *testing.T) {
	t.Parallel()
	const ceiling, sources, each = 25, 200, 5
	th := New(Limits{Failures: 3, PrefixFailures: 8, TotalFailures: ceiling, Window: time.Hour})
	var mu sync.Mutex
	counted := map[netip.Prefix]int{}
	total := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for s := range sources {
		wg.Go(func() {
			<-start
			a := v6(uint16(s%10), uint16(s)) // 10 /64s, 20 addresses each
			for range each {
				if th.Check(a, t0).Blocked() {
					continue
				}
				if !th.Failure(a, t0).Blocked() {
					mu.Lock()
					counted[PrefixOf(a)]++
					total++
					mu.Unlock()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if total != ceiling {
		t.Fatalf("%d failures counted, want exactly the ceiling %d", total, ceiling)
	}
	for p, n := range counted {
		if n > 8 {
			t.Errorf("%v: %d failures counted, more than its 8", p, n)
		}
	}
}

// BenchmarkThrottle_Memory fills the address and prefix tables of the LAN's
// limits to their caps and reports the bytes each tracked key costs.
func BenchmarkThrottle_Memory(b *testing.B) {
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		th := New(Limits{Failures: 10, PrefixFailures: 30, TotalFailures: 0, Window: time.Minute,
			MaxAddrs: 4096, MaxPrefixes: 4096, TrustFor: time.Hour, MaxTrusted: 1024})
		for i := range 4096 {
			a := v6(uint16(i), 1)
			th.Failure(a, t0)
			if i < 512 {
				th.Success(a, t0)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		keys := th.Tracked(Address) + th.Tracked(Prefix) + th.Tracked(None)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(keys), "B/key")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc), "B/full-table")
		runtime.KeepAlive(th)
	}
}

// BenchmarkThrottle_Failure is the cost of one counted failure from a new
// address of a busy throttle.
func BenchmarkThrottle_Failure(b *testing.B) {
	th := New(Limits{Failures: 10, PrefixFailures: 30, TotalFailures: 1 << 30, Window: time.Minute})
	i := 0
	for b.Loop() {
		th.Failure(v6(uint16(i>>12), uint16(i)), t0.Add(time.Duration(i)*time.Millisecond))
		i++
	}
}
