package hosted_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestDeliverer_UnreadableCFE is issue 28 item 3 at the deliverer: 20
// e-Tickets signed with the service down, then one bit flipped in the stored
// XML of A-8 while the agent is stopped. The deliverer delivers the 19
// others to the real sandbox, each once and in number order, and A-8 waits
// in the quarantine instead of blocking them. Put back from a copy of the
// file taken before the damage, A-8 is delivered too: after A-20, the order
// the quarantine documents.
func TestDeliverer_UnreadableCFE(t *testing.T) {
	t.Parallel()
	c := newClock()
	p := newPeer(t, c) // not started: the service is down while the shop sells
	path := filepath.Join(t.TempDir(), "agent.db")
	l := openLocal(t, path, c)
	uuids := l.sign(t, "caja", 20)
	l.close(t)
	copyBefore := filepath.Join(t.TempDir(), "copia.db")
	testtool.CopyFile(t, path, copyBefore)
	testtool.DamageStoredCFE(t, path, uuids[7], testtool.StoredXML)

	p.start()
	l = openLocal(t, path, c)
	defer l.close(t)
	cl := newClient(t, p, hosted.Config{APIKey: keyAgent, MaxAttempts: 2})
	r := runDeliverer(t, l, cl)
	waitDrained(t, l)
	r.stop()

	others := slices.Delete(slices.Clone(uuids), 7, 8)
	checkReceived(t, p.received(), others)
	if st := r.d.Status(); st.Delivered != 19 || st.LastError != "" {
		t.Errorf("deliverer status %+v, want 19 delivered and no error", st)
	}
	ctx := context.Background()
	q, err := l.db.Quarantined(ctx)
	if err != nil || len(q) != 1 || q[0].UUID != uuids[7] || q[0].Name() != "e-Ticket A-8" {
		t.Fatalf("quarantine %+v, %v; want A-8 alone", q, err)
	}

	verify := func(is *cfe.Issued) error {
		_, err := signer.Verify(is.XML, signer.VerifyOptions{})
		return err
	}
	res, err := l.db.Repair(ctx, uuids[7], store.RepairSource{Backup: copyBefore, Verify: verify})
	if err != nil || !res.Requeued {
		t.Fatalf("Repair = %+v, %v", res, err)
	}
	r = runDeliverer(t, l, cl)
	waitDrained(t, l)
	r.stop()
	got := p.received()
	if len(got) != 20 || got[19].UUID != uuids[7] || got[19].Nro != 8 {
		t.Fatalf("after the repair the sandbox holds %d CFEs, the last %+v; want 20 with A-8 last", len(got), got[len(got)-1])
	}
	doc, err := l.db.FindByUUID(ctx, uuids[7])
	if err != nil || doc.Delivery.State != cfe.DeliveryAccepted || doc.Delivery.HostedID != got[19].ID {
		t.Errorf("A-8 after its delivery: %+v, %v", doc, err)
	}
}
