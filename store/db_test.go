package store_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// holdMain is a second agent: it opens the store, says "ready", and keeps the
// file until its stdin closes.
func holdMain(path string) int {
	db, err := store.Open(path, store.Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer db.Close()
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

func TestOpen_FileHeldByAnotherProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	child, expired := helperCommand(t, "hold", "CFE_STORE_TEST_PATH="+path)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = child.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v (killed after waiting %v for its ready: %v)", line, err, helperLimit, expired())
	}

	const timeout = 300 * time.Millisecond
	start := time.Now()
	db, err := store.Open(path, store.Options{LockTimeout: timeout})
	elapsed := time.Since(start)
	if err == nil {
		db.Close()
		t.Fatal("a second agent opened a file another process holds")
	}
	ce := wantCode(t, err, cfe.EUNAVAILABLE)
	if want := "ya hay un agente ejecutándose con estos datos (" + path + ")"; ce.Message != want {
		t.Errorf("message = %q, want %q", ce.Message, want)
	}
	// It gave up after the timeout rather than hanging; the bound is generous
	// because the machine is shared.
	if elapsed < timeout/2 || elapsed > timeout+5*time.Second {
		t.Errorf("Open returned after %v with a lock timeout of %v", elapsed, timeout)
	}
}

// bbolt's flock is taken per open file description, so a second Open in the
// same process is refused as well.
func TestOpen_SecondOpenInSameProcess(t *testing.T) {
	t.Parallel()
	_, path := openStore(t, store.Options{})
	db, err := store.Open(path, store.Options{LockTimeout: 100 * time.Millisecond})
	if err == nil {
		db.Close()
		t.Fatal("second Open of the same file succeeded")
	}
	ce := wantCode(t, err, cfe.EUNAVAILABLE)
	if !strings.Contains(ce.Message, "ya hay un agente ejecutándose con estos datos") {
		t.Errorf("message = %q", ce.Message)
	}
}

func TestOpen_ReopenKeepsEverything(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, time.March, 10, 13, 0, 0, 0, cfe.Montevideo)
	opts := store.Options{Now: func() time.Time { return now }}
	db, path := openStore(t, opts)
	rng := newRange(cfe.ETicket, "A", 1, 100, farAway)
	rng.SignedXML = []byte("<CAE>dgi</CAE>")
	putRanges(t, db, rng)
	var docs []*cfe.Issued
	for i := range 3 {
		docs = append(docs, issue(t, db, cfe.ETicket, fmt.Sprintf("reopen-%d", i)))
	}
	if err := db.MarkDelivered(ctx, "reopen-0", 7001); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := db.Reserve(ctx, cfe.ETicket, today)
	wantCode(t, err, cfe.EUNAVAILABLE)
	_, err = db.FindByUUID(ctx, "reopen-0")
	wantCode(t, err, cfe.EUNAVAILABLE)

	db, err = store.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ranges, err := db.Ranges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rng.ID = "101-A-1"
	if len(ranges) != 1 || ranges[0].ID != rng.ID || ranges[0].HNro != 100 ||
		ranges[0].Vencimiento != farAway || string(ranges[0].SignedXML) != "<CAE>dgi</CAE>" {
		t.Fatalf("ranges after reopen = %+v", ranges)
	}
	for _, want := range docs {
		got, err := db.FindByUUID(ctx, want.UUID)
		if err != nil {
			t.Fatal(err)
		}
		sameIssued(t, got, want)
	}
	first, _ := db.FindByUUID(ctx, "reopen-0")
	if first.Delivery.State != cfe.DeliveryAccepted || first.Delivery.HostedID != 7001 {
		t.Errorf("delivery after reopen = %+v", first.Delivery)
	}
	pending, err := db.PendingOutbox(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0].UUID != "reopen-1" || pending[1].UUID != "reopen-2" {
		t.Errorf("pending after reopen = %d entries", len(pending))
	}
	// Numbering continues after the last committed number.
	if r := reserve(t, db, cfe.ETicket); r.Nro != 4 {
		t.Errorf("first number after reopen = %d, want 4", r.Nro)
	}
	events, err := db.AuditEvents(ctx, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	want := []string{store.AuditRangeImported, store.AuditSigned, store.AuditSigned, store.AuditSigned, store.AuditDelivered}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("audit after reopen = %v, want %v", kinds, want)
	}
}

func TestOpen_RefusesNewerSchema(t *testing.T) {
	t.Parallel()
	db, path := openStore(t, store.Options{})
	db.Close()
	raw, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("99")) })
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(path, store.Options{})
	ce := wantCode(t, err, cfe.EINTERNAL)
	if !strings.Contains(ce.Message, "versión más nueva del agente") {
		t.Errorf("message = %q", ce.Message)
	}
}

func TestOpen_NotAStoreFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a bbolt file\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(path, store.Options{})
	// Unavailable, not internal: the message says what to do (damage.go).
	ce := wantCode(t, err, cfe.EUNAVAILABLE)
	if !strings.Contains(ce.Message, path) {
		t.Errorf("message %q does not name the file", ce.Message)
	}
}
