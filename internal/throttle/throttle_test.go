package throttle

import (
	"net/netip"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 14, 15, 4, 5, 0, time.UTC)

func TestThrottle_Blocked(t *testing.T) {
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

func TestThrottle_MaxAddrs(t *testing.T) {
	th := New(Limits{Failures: 2, Window: time.Minute, MaxAddrs: 3})
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}) }
	// 1 is blocked; 2 and 3 failed once, 2 later than 3.
	th.Fail(addr(1), t0)
	th.Fail(addr(1), t0)
	th.Fail(addr(3), t0.Add(time.Second))
	th.Fail(addr(2), t0.Add(2*time.Second))
	th.Fail(addr(4), t0.Add(3*time.Second)) // the table is full: the oldest last failure (1) goes
	if th.Len() != 3 {
		t.Fatalf("tracking %d addresses, want the cap 3", th.Len())
	}
	if _, blocked := th.Blocked(addr(1), t0.Add(3*time.Second)); blocked {
		t.Fatal("address 1 should have been replaced")
	}
	// Two minutes later every bucket is full again: all are forgotten at once.
	th.Fail(addr(5), t0.Add(2*time.Minute))
	if th.Len() != 1 {
		t.Fatalf("tracking %d addresses after they all earned their tries back, want 1", th.Len())
	}
	for i := range 10000 {
		th.Fail(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), t0.Add(3*time.Minute))
	}
	if th.Len() > 3 {
		t.Fatalf("tracking %d addresses, want at most 3", th.Len())
	}
}
