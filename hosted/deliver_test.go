package hosted_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox"
)

// running is a deliverer in its own goroutine.
type running struct {
	d      *hosted.Deliverer
	cancel context.CancelFunc
	done   chan struct{}
}

func runDeliverer(t testing.TB, l *local, c *hosted.Client) *running {
	t.Helper()
	d := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: c, Poll: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); d.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func (r *running) stop() {
	r.cancel()
	<-r.done
}

// waitDrained waits (real time, at most a minute) until the outbox is empty.
func waitDrained(t *testing.T, l *local) {
	t.Helper()
	if !testtool.WaitUntil(t, time.Minute, func() bool { return l.pending(t) == 0 }) {
		t.Fatalf("outbox not drained within a minute: %d pending", l.pending(t))
	}
}

// checkReceived verifies, on the sandbox's side, that it holds each of uuids
// exactly once, that no (type, serie, number) appears twice, and that within
// each type and serie the numbers arrived in increasing order.
func checkReceived(t *testing.T, got []sandbox.IssuedSummary, uuids []string) {
	t.Helper()
	if len(got) != len(uuids) {
		t.Errorf("the sandbox holds %d agent CFEs, want %d", len(got), len(uuids))
	}
	byUUID := map[string]int{}
	type folio struct {
		tipo  int
		serie string
		nro   int64
	}
	byFolio := map[folio]int{}
	type serie struct {
		tipo  int
		serie string
	}
	last := map[serie]int64{}
	for _, s := range got { // in the sandbox's id order, that is, arrival order
		byUUID[s.UUID]++
		byFolio[folio{s.TipoCfe, s.Serie, s.Nro}]++
		key := serie{s.TipoCfe, s.Serie}
		if s.Nro <= last[key] {
			t.Errorf("%d-%s-%d arrived after %d of the same serie", s.TipoCfe, s.Serie, s.Nro, last[key])
		}
		last[key] = s.Nro
	}
	for _, u := range uuids {
		if byUUID[u] != 1 {
			t.Errorf("uuid %s recorded %d times", u, byUUID[u])
		}
	}
	for f, n := range byFolio {
		if n != 1 {
			t.Errorf("number %v recorded %d times", f, n)
		}
	}
}

// TestDeliverer_Outage signs 200 CFEs while the service is stopped, with a
// restart of the agent in the middle, then starts the service: every CFE must
// reach it exactly once and in order per type and serie.
func TestDeliverer_Outage(t *testing.T) {
	c := newClock()
	p := newPeer(t, c) // not started: the service is down
	path := filepath.Join(t.TempDir(), "agent.db")

	l := openLocal(t, path, c)
	cl := newClient(t, p, hosted.Config{APIKey: keyAgent, MaxAttempts: 2})
	r := runDeliverer(t, l, cl)
	uuids := l.sign(t, "antes", 100)
	// The deliverer fails against the stopped service: wait for its error.
	waitUntil(t, "the deliverer's error with the service down", func() bool { return r.d.Status().LastError != "" })
	if st := r.d.Status(); st.LastError == "" || st.Delivered != 0 {
		t.Errorf("with the service down: status %+v, want an error and nothing delivered", st)
	}
	if got := cl.Status(); got.Reachable {
		t.Error("client reports the stopped service as reachable")
	}

	// Restart the agent: stop the deliverer, close the store, open both again.
	r.stop()
	l.close(t)
	l = openLocal(t, path, c)
	defer l.close(t)
	if n := l.pending(t); n != 100 {
		t.Fatalf("after the restart %d pending, want 100", n)
	}
	cl = newClient(t, p, hosted.Config{APIKey: keyAgent, MaxAttempts: 2})
	r = runDeliverer(t, l, cl)
	uuids = append(uuids, l.sign(t, "despues", 100)...) // numbers A-101..A-120, then serie B

	p.start()
	waitDrained(t, l)
	r.stop()

	checkReceived(t, p.received(), uuids)
	if st := r.d.Status(); st.Delivered != 200 || st.Rejected != 0 || st.LastError != "" {
		t.Errorf("status %+v, want 200 delivered and no error", st)
	}
	stats, err := l.db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Pending != 0 || stats.Rejected != 0 {
		t.Errorf("store: %d pending, %d rejected", stats.Pending, stats.Rejected)
	}
	t.Run("each stored CFE carries its hosted id", func(t *testing.T) {
		ids := map[string]int64{}
		for _, s := range p.received() {
			ids[s.UUID] = s.ID
		}
		for _, u := range []string{uuids[0], uuids[99], uuids[199]} {
			doc, err := l.db.FindByUUID(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Delivery.State != cfe.DeliveryAccepted || doc.Delivery.HostedID != ids[u] || ids[u] == 0 {
				t.Errorf("%s: delivery %+v, want accepted under %d", u, doc.Delivery, ids[u])
			}
		}
	})
}

// TestDeliverer_RateLimit drains a backlog of 100 with a key limited to 30
// requests a minute: nothing is dropped, and the key exceeds its limit at most
// once per minute window.
func TestDeliverer_RateLimit(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	l := openLocal(t, filepath.Join(t.TempDir(), "agent.db"), c)
	defer l.close(t)
	uuids := l.sign(t, "lote", 100)

	cl := newClient(t, p, hosted.Config{APIKey: keyTight})
	d := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: cl, Batch: 40})
	start := c.Now()
	for l.pending(t) > 0 {
		if _, err := d.Pass(context.Background()); err != nil {
			t.Fatalf("pass: %v", err)
		}
		if c.Now().Sub(start) > time.Hour {
			t.Fatal("still pending after an hour of test time")
		}
	}
	checkReceived(t, p.received(), uuids)

	// 100 requests at 30 a minute need four windows: the first from 10:00:10
	// and three more. Pacing on X-RateLimit-Remaining-Minute waits for each
	// new window, so the drain ends in the fourth.
	if elapsed := c.Now().Sub(start.Truncate(time.Minute)); elapsed < 3*time.Minute || elapsed >= 4*time.Minute+time.Second {
		t.Errorf("drained %s after the first window began, want within the fourth window", elapsed)
	}
	p.limitedMu.Lock()
	defer p.limitedMu.Unlock()
	for w, n := range p.limited {
		if n > 1 {
			t.Errorf("window %s: %d requests refused with 429, want at most 1", w.Format(time.TimeOnly), n)
		}
	}
	st := cl.Status()
	if st.RateLimit == nil || st.RateLimit.LimitMinute != 30 || st.RateLimit.LimitHour != 1000 ||
		st.RateLimit.RemainingHour != 1000-100 || st.RateLimit.RemainingMinute != 30-10 {
		t.Errorf("rate limit %+v, want 30/min with 20 left and 1000/h with 900 left", st.RateLimit)
	}
}

// TestDeliverer_RateLimit429 starts with the key's window already used up by
// someone else (the proxy, another terminal): the deliverer meets one 429,
// waits for its Retry-After and delivers everything.
func TestDeliverer_RateLimit429(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	l := openLocal(t, filepath.Join(t.TempDir(), "agent.db"), c)
	defer l.close(t)
	uuids := l.sign(t, "tarde", 5)

	other := newClient(t, p, hosted.Config{APIKey: keyTight, MaxAttempts: 1})
	for range 30 {
		if _, err := other.Comprobante(context.Background(), 1); err != nil && cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatal(err)
		}
	}
	cl := newClient(t, p, hosted.Config{APIKey: keyTight})
	d := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: cl})
	before := c.Now()
	if n, err := d.Pass(context.Background()); err != nil || n != 5 {
		t.Fatalf("pass: %d, %v", n, err)
	}
	checkReceived(t, p.received(), uuids)
	if got := c.Now(); got.Before(before.Truncate(time.Minute).Add(time.Minute)) {
		t.Errorf("delivered at %s, before the window of %s ended", got, before)
	}
	p.limitedMu.Lock()
	defer p.limitedMu.Unlock()
	if n := p.limited[before.Truncate(time.Minute)]; n != 1 {
		t.Errorf("%d 429 answers in the used-up window, want exactly 1", n)
	}
}

// TestDeliverer_Rejected: a CFE the service refuses for good (its number is
// already recorded under another uuid) leaves the outbox for the rejected
// list with the service's reason, is not sent again, and does not hold back
// the CFEs after it.
func TestDeliverer_Rejected(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	first := openLocal(t, filepath.Join(t.TempDir(), "first.db"), c)
	defer first.close(t)
	first.sign(t, "primero", 2)
	cl := newClient(t, p, hosted.Config{APIKey: keyAgent})
	if n, err := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: first.db, Client: cl}).Pass(context.Background()); err != nil || n != 2 {
		t.Fatalf("first agent: %d, %v", n, err)
	}

	// A second store with the same ranges numbers A-1.. again under other
	// uuids: clash, A-3 is new.
	second := openLocal(t, filepath.Join(t.TempDir(), "second.db"), c)
	defer second.close(t)
	uuids := second.sign(t, "segundo", 3)
	d := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: second.db, Client: cl})
	if n, err := d.Pass(context.Background()); err != nil || n != 3 {
		t.Fatalf("second agent: %d, %v", n, err)
	}
	rejected, err := second.db.Rejected(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rejected) != 2 || rejected[0].UUID != uuids[0] || rejected[1].UUID != uuids[1] {
		t.Fatalf("rejected %d CFEs, want %s and %s", len(rejected), uuids[0], uuids[1])
	}
	for _, r := range rejected {
		if r.Delivery.State != cfe.DeliveryRejected || !strings.Contains(r.Delivery.Reason, "A-") {
			t.Errorf("%s: delivery %+v, want rejected with the service's reason naming the number", r.UUID, r.Delivery)
		}
	}
	accepted, err := second.db.FindByUUID(context.Background(), uuids[2])
	if err != nil {
		t.Fatal(err)
	}
	if accepted.Delivery.State != cfe.DeliveryAccepted {
		t.Errorf("%s: %+v, want accepted", uuids[2], accepted.Delivery)
	}
	if st := d.Status(); st.Rejected != 2 || st.Delivered != 1 {
		t.Errorf("status %+v", st)
	}
	if n, err := d.Pass(context.Background()); err != nil || n != 0 {
		t.Errorf("a later pass sent %d (%v); refused CFEs must not be retried", n, err)
	}
}

// TestDeliverer_Redelivery: when the answer to a delivery is lost, the CFE is
// sent again with the same uuid and the service answers the same record, so
// it is recorded once under one id.
func TestDeliverer_Redelivery(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	l := openLocal(t, filepath.Join(t.TempDir(), "agent.db"), c)
	defer l.close(t)
	uuids := l.sign(t, "perdida", 3)

	// Deliver the first CFE behind the agent's back, as if the agent had
	// crashed after sending it and before recording the answer.
	cl := newClient(t, p, hosted.Config{APIKey: keyAgent})
	doc, err := l.db.FindByUUID(context.Background(), uuids[0])
	if err != nil {
		t.Fatal(err)
	}
	first, err := cl.Deliver(context.Background(), hosted.SignedCFE{UUID: doc.UUID, XmlFirmado: string(doc.XML), Adenda: doc.Adenda})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: cl}).Pass(context.Background()); err != nil || n != 3 {
		t.Fatalf("pass: %d, %v", n, err)
	}
	checkReceived(t, p.received(), uuids)
	doc, err = l.db.FindByUUID(context.Background(), uuids[0])
	if err != nil {
		t.Fatal(err)
	}
	if doc.Delivery.HostedID != first.ID {
		t.Errorf("hosted id %d, want the first answer's %d", doc.Delivery.HostedID, first.ID)
	}
}

// BenchmarkDeliverer measures delivery throughput with no rate limit: one
// op is one CFE sent, verified and recorded by the sandbox, and marked
// delivered in the agent's store.
func BenchmarkDeliverer(b *testing.B) {
	c := newClock()
	p := startPeer(b, c)
	l := openLocal(b, filepath.Join(b.TempDir(), "agent.db"), c)
	defer l.close(b)
	l.sign(b, "bench", b.N)
	cl := newClient(b, p, hosted.Config{APIKey: keyInspector})
	d := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: cl})
	b.ResetTimer()
	total := 0
	for total < b.N {
		n, err := d.Pass(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cfe/s")
}

// waitUntil waits, at most a minute, until cond holds, checking it every
// 10 ms.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// TestDeliverer_WakeOnCommit: an idle deliverer that would poll again only
// in an hour sends a CFE as soon as the store commits it, woken by the
// store's commit notification (no Kick); a replayed request, which commits
// nothing, notifies nothing.
func TestDeliverer_WakeOnCommit(t *testing.T) {
	t.Parallel()
	c := newClock()
	p := startPeer(t, c)
	l := openLocal(t, filepath.Join(t.TempDir(), "agent.db"), c)
	defer l.close(t)
	cl := newClient(t, p, hosted.Config{APIKey: keyAgent})
	wake, stop := l.db.WatchCommits()
	defer stop()
	seen, stopSeen := l.db.WatchCommits() // what the deliverer's channel got
	defer stopSeen()
	d := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: cl, Poll: time.Hour, Wake: wake})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// Idle: the first pass found the outbox empty, and the deliverer probed
	// the service just before it waits.
	waitUntil(t, "the idle deliverer probes the service", func() bool { return p.requestsTo("/api/v1/usuario/empresas") > 0 })
	uuids := l.sign(t, "despertar", 1)
	waitUntil(t, "the signed CFE is delivered", func() bool { return l.pending(t) == 0 })
	if st := d.Status(); st.Delivered != 1 {
		t.Fatalf("deliverer status %+v, want 1 delivered", st)
	}
	checkReceived(t, p.received(), uuids)
	select {
	case <-seen:
	default:
		t.Fatal("the commit raised no notification")
	}

	// The same request again is answered from the store: nothing committed,
	// nothing to wake the deliverer for.
	l.sign(t, "despertar", 1)
	select {
	case <-seen:
		t.Fatal("a replayed request raised a commit notification")
	default:
	}
	if n := l.db.Committed(); n != 1 {
		t.Fatalf("%d CFEs committed, want 1 (the replay commits nothing)", n)
	}
}
