package issuer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// countingStore is the real store, counting the numbers handed out.
type countingStore struct {
	*store.DB
	reserved atomic.Int64
}

func (c *countingStore) Reserve(ctx context.Context, t cfe.Type, today cfe.Date) (*cfe.Reservation, error) {
	return c.ReserveFor(ctx, t, today, nil)
}

func (c *countingStore) ReserveFor(ctx context.Context, t cfe.Type, today cfe.Date, fits cfe.RangeCheck) (*cfe.Reservation, error) {
	r, err := c.DB.ReserveFor(ctx, t, today, fits)
	if err == nil {
		c.reserved.Add(1)
	}
	return r, err
}

// failingSigner signs as cmd/cfe-agent does, but fails every document that
// carries marker: a failure after the number was reserved.
type failingSigner struct {
	signerAdapter
	marker []byte
}

func (f failingSigner) Sign(unsigned []byte) ([]byte, string, error) {
	if bytes.Contains(unsigned, f.marker) {
		return nil, "", errors.New("token de firma desconectado")
	}
	return f.signerAdapter.Sign(unsigned)
}

// issuerOver builds an issuer as newHarness does, over st and sg.
func issuerOver(h *harness, st cfe.IssueStore, sg issuer.Signer) *issuer.Issuer {
	return issuer.New(issuer.Config{
		Store:  st,
		Signer: sg,
		Emisor: func() cfe.Emisor { return testEmisor },
		Tax:    cfe.DefaultTaxConfig(),
		Now:    func() time.Time { return testNow },
		Zone:   h.zone.get,
	})
}

// Reproductions 1 and 5 of the fiscal-integrity issue: a uuid longer than the
// hosted service's 64 characters took a number and failed at commit with 99
// (300 characters) or was signed and then refused for good at delivery (100).
func TestIssuer_UUIDLimitCheckedBeforeNumbering(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, n := range []int{65, 100, 300} {
		id := strings.Repeat("u", n)
		_, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, id)))
		if cfe.RespuestaOf(err) != cfe.RespRechazoValidacion || !hasField(cfe.ErrorFields(err), "uuid") {
			t.Fatalf("uuid of %d characters: got %v (%s), want 01 naming the uuid", n, err, cfe.RespuestaOf(err))
		}
		if _, err := h.db.FindByUUID(context.Background(), id); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatalf("uuid of %d characters was stored: %v", n, err)
		}
	}
	if n := nextNumber(t, h, strings.Repeat("u", cfe.MaxUUIDLen)); n != 1 {
		t.Fatalf("a uuid of exactly %d characters got number %d, want 1: the refusals consumed numbers", cfe.MaxUUIDLen, n)
	}
	// IssueCFE (the sandbox's and the counter-receipts' path) has the same rule.
	doc, err := decode(t, requestJSON(cfe.ETicket, "x")).ToCFE(cfe.IssueParams{Emisor: testEmisor, Tax: cfe.DefaultTaxConfig(), SignedAt: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.iss.IssueCFE(context.Background(), strings.Repeat("v", 65), "hash", doc); !hasField(cfe.ErrorFields(err), "uuid") {
		t.Fatalf("IssueCFE with a long id: %v, want a uuid field error", err)
	}
}

// One client retrying, as it is told, a request the agent refuses must not
// slow the other clients down: a refused request never reserves a number, so
// nothing of it reaches the serie the others are numbered from.
func TestIssuer_RetryingRefusedRequestDoesNotTouchNumbering(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := &countingStore{DB: h.db}
	iss := issuerOver(h, st, signerAdapter{Signer: h.signer})

	bad := []string{
		requestJSON(cfe.ETicket, strings.Repeat("x", 300)), // reproduction 1
		requestJSON(cfe.ETicket, strings.Repeat("y", 100)), // reproduction 5
		`{"uuid":"mala-1","cfe":{"idDoc":{"tipoCfe":111,"formaPago":1},"detalles":[{"indicadorFacturacion":3,"nombreItem":"x","cantidad":1,"precioUnitario":10}]}}`,
	}
	const workers, each = 4, 40
	var refusals atomic.Int64
	loadWithRetrier(t, iss, workers, each, func(i int) bool {
		_, err := iss.Issue(context.Background(), decode(t, bad[i%len(bad)]))
		if code := cfe.RespuestaOf(err); code != cfe.RespRechazoValidacion {
			t.Errorf("the refused request got %q (%v), want 01", code, err)
			return false
		}
		refusals.Add(1)
		return true
	})
	if got := st.reserved.Load(); got != workers*each {
		t.Fatalf("%d numbers were reserved for %d signed CFEs: the %d refusals took numbers", got, workers*each, refusals.Load())
	}
	if refusals.Load() == 0 {
		t.Fatal("the retrying client never ran")
	}
}

// A failure after the reservation (here the signature) gives the number back.
// The CFEs numbered above it must not fail because of it: when nobody takes
// the number again in time, the issuer signs them again with the lowest free
// number instead of answering 99 for another caller's failure.
func TestIssuer_FailureAfterReservationDoesNotFailOthers(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, store.Options{ReclaimTimeout: 100 * time.Millisecond})
	db := h.db
	st := &countingStore{DB: db}
	iss := issuerOver(h, st, signerAdapter{Signer: h.signer})

	// Number 1 is held, as by a request still being signed; the good request
	// takes 2 and waits for 1.
	held, err := db.Reserve(context.Background(), cfe.ETicket, cfe.DateOf(testNow))
	if err != nil || held.Nro != 1 {
		t.Fatalf("reserve: %v, %v", held, err)
	}
	done := make(chan error, 1)
	var got *issuer.Result
	go func() {
		r, err := iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, "buena-1")))
		got = r
		done <- err
	}()
	// The good request holds 2; then the holder of 1 fails: nobody takes 1
	// again.
	waitFor(t, "the good request's reservation", func() bool { return st.reserved.Load() >= 1 })
	db.Release(held)
	if err := outcome(t, done, "the good request's answer"); err != nil {
		t.Fatalf("the good request got %s (%v), want it signed", cfe.RespuestaOf(err), err)
	}
	if got.Issued.Nro != 1 {
		t.Fatalf("the good request was signed as %d, want 1 (the lowest free number)", got.Issued.Nro)
	}
	if n := nextNumber(t, &harness{iss: iss}, "buena-2"); n != 2 {
		t.Fatalf("next number %d, want 2", n)
	}
}

// TestIssuer_RetriedFailingSignatureWithLoad: one client retries a request
// whose signature always fails after its reservation, while others sign; every
// good request is signed, and the numbers stay gap-free.
func TestIssuer_RetriedFailingSignatureWithLoad(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, store.Options{ReclaimTimeout: 50 * time.Millisecond})
	db := h.db
	iss := issuerOver(h, db, failingSigner{signerAdapter{Signer: h.signer}, []byte("FIRMA-FALLA")})
	failing := strings.Replace(requestJSON(cfe.ETicket, "falla-1"), "Yerba mate 1 kg", "FIRMA-FALLA", 1)

	loadWithRetrier(t, iss, 3, 30, func(int) bool {
		if _, err := iss.Issue(context.Background(), decode(t, failing)); cfe.RespuestaOf(err) != cfe.RespCertificado {
			t.Errorf("the failing request got %q (%v), want 06", cfe.RespuestaOf(err), err)
			return false
		}
		return true
	})
}

// loadWithRetrier signs workers×each good e-Tickets through iss from workers
// goroutines while another calls retry(0), retry(1)… (a client retrying a
// failing request) until they are done or retry returns false. Every good
// request must be signed, and their numbers must be 1…workers×each.
func loadWithRetrier(t *testing.T, iss *issuer.Issuer, workers, each int, retry func(i int) bool) {
	t.Helper()
	var (
		wg, retrier sync.WaitGroup
		mu          sync.Mutex
		nums        []int64
		stop        = make(chan struct{})
	)
	retrier.Add(1)
	go func() { // bounded, in case the others never finish
		defer retrier.Done()
		for i := 0; i < 100_000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if !retry(i) {
				return
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res, err := iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, fmt.Sprintf("buena-%d-%d", w, i))))
				if err != nil {
					t.Errorf("a good request got %s: %v", cfe.RespuestaOf(err), err)
					return
				}
				mu.Lock()
				nums = append(nums, res.Issued.Nro)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	retrier.Wait()
	slices.Sort(nums)
	for i, n := range nums {
		if n != int64(i+1) {
			t.Fatalf("numbers are not 1..%d without gaps: %v", workers*each, nums)
		}
	}
}

// A certificate outside its validity refuses the request (06) before a number
// is reserved: the store is not asked for one.
func TestIssuer_ExpiredCertificateRefusedBeforeNumbering(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for name, from := range map[string]time.Time{
		"expired":       testNow.AddDate(-3, 0, 0),
		"not yet valid": testNow.AddDate(0, 0, 1),
	} {
		t.Run(name, func(t *testing.T) {
			creds, err := signer.GenerateTestCertificate(testEmisor.RUCEmisor, testEmisor.RznSoc, from)
			if err != nil {
				t.Fatal(err)
			}
			sg, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return testNow }})
			if err != nil {
				t.Fatal(err)
			}
			st := &countingStore{DB: h.db}
			_, err = issuerOver(h, st, signerAdapter{Signer: sg}).Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, "cert-"+name)))
			if cfe.RespuestaOf(err) != cfe.RespCertificado {
				t.Fatalf("got %v (%s), want 06", err, cfe.RespuestaOf(err))
			}
			if n := st.reserved.Load(); n != 0 {
				t.Fatalf("%d numbers were reserved for a request the certificate refuses", n)
			}
		})
	}
	if n := nextNumber(t, h, "cert-ok"); n != 1 {
		t.Fatalf("next number %d, want 1", n)
	}
}
