package issuer_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
)

// TestIssuer_EveryType signs a request of every electronic type end to end and
// has the independent tools check the result: xmllint against DGI's CFEDGI.xsd
// and xmlsec1 with the certificate embedded in KeyInfo.
func TestIssuer_EveryType(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	xsd := testtool.XSD(t, "CFEDGI.xsd")
	for _, typ := range cfe.ElectronicTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			t.Parallel()
			res, err := h.iss.Issue(context.Background(), decode(t, requestJSON(typ, uuidFor(typ, 1))))
			if err != nil {
				t.Fatalf("Issue: %v (%s)", err, cfe.RespuestaOf(err))
			}
			got := res.Issued
			if got.Type != typ || got.Serie != "A" || got.Nro != 1 || res.Replayed {
				t.Fatalf("numbered %d %s-%d (replayed %v), want %d A-1", got.Type, got.Serie, got.Nro, res.Replayed, typ)
			}
			testtool.MustValidateXSD(t, xsd, got.XML)
			if out, ok := testtool.XMLSecVerify(t, got.XML, ""); !ok {
				t.Fatalf("xmlsec1 rejects the signed CFE:\n%s", out)
			}
			v, err := signer.Verify(got.XML, signer.VerifyOptions{})
			if err != nil {
				t.Fatalf("signer.Verify: %v", err)
			}
			// The security code is the first 6 characters of the DigestValue,
			// read back from the signed document, and the QR names it in full.
			if got.CodSeguridad != v.DigestValue[:6] {
				t.Errorf("security code %q, want the first 6 characters of %q", got.CodSeguridad, v.DigestValue)
			}
			parsed, err := cfe.ParseXML(got.XML)
			if err != nil {
				t.Fatal(err)
			}
			wantQR := fmt.Sprintf("https://www.efactura.dgi.gub.uy/consultaQR/cfe?219999830019,%d,A,1,%s,22/11/2026,%s",
				typ, cfe.QRAmount(parsed).StringFixed(2), qrEscape(v.DigestValue))
			if got.DatosQR != wantQR {
				t.Errorf("QR\n got %s\nwant %s", got.DatosQR, wantQR)
			}
			if parsed.CAEData.CAEID == "" || parsed.CAEData.DNro != 1 || parsed.TmstFirma.Format("2006-01-02T15:04:05-07:00") != "2026-11-22T12:00:00-03:00" {
				t.Errorf("CAEData %+v, TmstFirma %s", parsed.CAEData, parsed.TmstFirma)
			}
			stored, err := h.db.FindByUUID(context.Background(), uuidFor(typ, 1))
			if err != nil || !bytes.Equal(stored.XML, got.XML) || stored.Adenda != "Gracias por su compra" {
				t.Fatalf("stored copy differs from the answer (err %v)", err)
			}
		})
	}
}

// qrEscape percent-encodes a base64 digest as DGI's QR asks (+ / =).
func qrEscape(s string) string {
	return strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(s)
}

// TestIssuer_TamperedCopyRejected changes one amount of a signed CFE: xmlsec1
// and signer.Verify must both reject it.
func TestIssuer_TamperedCopyRejected(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.EFactura, "tamper-1")))
	if err != nil {
		t.Fatal(err)
	}
	signed := res.Issued.XML
	i := bytes.Index(signed, []byte("<MntPagar>"))
	if i < 0 {
		t.Fatal("no MntPagar in the signed CFE")
	}
	tampered := append([]byte{}, signed...)
	j := i + len("<MntPagar>")
	if tampered[j] == '9' {
		tampered[j] = '8'
	} else {
		tampered[j]++
	}
	if bytes.Equal(tampered, signed) {
		t.Fatal("tampering did not change the document")
	}
	if out, ok := testtool.XMLSecVerify(t, tampered, ""); ok {
		t.Fatalf("xmlsec1 accepts a tampered CFE:\n%s", out)
	}
	if _, err := signer.Verify(tampered, signer.VerifyOptions{}); err == nil {
		t.Fatal("signer.Verify accepts a tampered CFE")
	}
}

// nextNumber signs a plain e-Ticket and returns its number: the way the tests
// check that a failed request consumed nothing.
func nextNumber(t *testing.T, h *harness, uuid string) int64 {
	t.Helper()
	res, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, uuid)))
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return res.Issued.Nro
}

func TestIssuer_IdempotentRetry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	body := requestJSON(cfe.ETicket, "retry-1")
	first, err := h.iss.Issue(context.Background(), decode(t, body))
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.iss.Issue(context.Background(), decode(t, body))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Issued.Nro != first.Issued.Nro || !bytes.Equal(again.Issued.XML, first.Issued.XML) ||
		again.Issued.DatosQR != first.Issued.DatosQR {
		t.Fatalf("retry got %s-%d replayed=%v, want the identical stored answer %s-%d",
			again.Issued.Serie, again.Issued.Nro, again.Replayed, first.Issued.Serie, first.Issued.Nro)
	}
	if n := nextNumber(t, h, "retry-2"); n != first.Issued.Nro+1 {
		t.Fatalf("after a retry the next number is %d, want %d", n, first.Issued.Nro+1)
	}
}

// TestIssuer_ConcurrentRetries sends the same uuid from 8 goroutines at once:
// one number, one stored CFE, the same answer to all.
func TestIssuer_ConcurrentRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	body := requestJSON(cfe.ETicket, "same-uuid")
	var wg sync.WaitGroup
	xmls := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := h.iss.Issue(context.Background(), decode(t, body))
			errs[i] = err
			if err == nil {
				xmls[i] = r.Issued.XML
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		if errs[i] != nil || !bytes.Equal(xmls[i], xmls[0]) {
			t.Fatalf("caller %d: err %v or a different answer", i, errs[i])
		}
	}
	if n := nextNumber(t, h, "other"); n != 2 {
		t.Fatalf("next number %d, want 2: the retries consumed numbers", n)
	}
}

func TestIssuer_UUIDConflict(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, "dup"))); err != nil {
		t.Fatal(err)
	}
	_, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.EFactura, "dup")))
	if cfe.ErrorCode(err) != cfe.ECONFLICT || cfe.RespuestaOf(err) != cfe.RespConflictoUUID ||
		!strings.Contains(cfe.ErrorMessage(err), "dup") {
		t.Fatalf("want ECONFLICT/02 naming the uuid, got %v (%s)", err, cfe.RespuestaOf(err))
	}
	if n := nextNumber(t, h, "after-conflict"); n != 2 {
		t.Fatalf("the conflict consumed a number: next e-Ticket is %d, want 2", n)
	}
	res, _ := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.EFactura, "first-factura")))
	if res == nil || res.Issued.Nro != 1 {
		t.Fatalf("the conflicting e-Factura consumed a number")
	}
}

func TestIssuer_TimeZone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		zone string
		off  int
	}{
		{"wrong zone name", "America/Argentina/Buenos_Aires", -3 * 3600},
		{"wrong offset", "America/Montevideo", -2 * 3600},
		{"utc", "UTC", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.zone.set(issuerZone(tc.zone, tc.off))
			_, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, "tz-1")))
			if cfe.RespuestaOf(err) != cfe.RespZonaHoraria {
				t.Fatalf("want codigo 96, got %v (%s)", err, cfe.RespuestaOf(err))
			}
			msg := cfe.ErrorMessage(err)
			if !strings.Contains(msg, tc.zone) || !strings.Contains(msg, "America/Montevideo con desfase -03:00") {
				t.Errorf("message %q does not say what was found and what is required", msg)
			}
			if _, err := h.db.FindByUUID(context.Background(), "tz-1"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
				t.Fatalf("a rejected request was stored: %v", err)
			}
			h.zone.set(montevideo)
			if n := nextNumber(t, h, "tz-2"); n != 1 {
				t.Fatalf("the rejection consumed a number: next is %d, want 1", n)
			}
		})
	}
}

// TestIssuer_NoZoneReader: an issuer wired without a zone reader
// (Config.Zone nil) cannot tell the machine's zone, and signs nothing: 96,
// nothing stored, no number taken.
func TestIssuer_NoZoneReader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	blind := issuer.New(issuer.Config{
		Store:  h.db,
		Signer: signerAdapter{Signer: h.signer},
		Emisor: func() cfe.Emisor { return testEmisor },
		Tax:    cfe.DefaultTaxConfig(),
		Now:    func() time.Time { return testNow },
	})
	_, err := blind.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, "nozone-1")))
	if cfe.RespuestaOf(err) != cfe.RespZonaHoraria || !strings.Contains(cfe.ErrorMessage(err), "desconocida") {
		t.Fatalf("want codigo 96 for an unknown zone, got %v (%s)", err, cfe.RespuestaOf(err))
	}
	if _, err := h.db.FindByUUID(context.Background(), "nozone-1"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Fatalf("a rejected request was stored: %v", err)
	}
	if n := nextNumber(t, h, "nozone-2"); n != 1 {
		t.Fatalf("the rejection consumed a number: next is %d, want 1", n)
	}
}

func TestIssuer_ValidationRejectionConsumesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// An e-Factura without a receptor breaks DGI's rules.
	_, err := h.iss.Issue(context.Background(), decode(t,
		`{"uuid":"bad-1","cfe":{"idDoc":{"tipoCfe":111,"formaPago":1},"detalles":[{"indicadorFacturacion":3,"nombreItem":"x","cantidad":1,"precioUnitario":10}]}}`))
	if cfe.RespuestaOf(err) != cfe.RespRechazoValidacion || len(cfe.ErrorFields(err)) == 0 {
		t.Fatalf("want a validation rejection with fields, got %v", err)
	}
	if !hasField(cfe.ErrorFields(err), "cfe.receptor") {
		t.Fatalf("the rejection does not name the receptor: %+v", cfe.ErrorFields(err))
	}
	res, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.EFactura, "good-1")))
	if err != nil || res.Issued.Nro != 1 {
		t.Fatalf("after a rejection the first e-Factura is %v, err %v; want number 1", res, err)
	}
}

func hasField(fs []cfe.FieldError, prefix string) bool {
	for _, f := range fs {
		if strings.HasPrefix(f.Campo, prefix) {
			return true
		}
	}
	return false
}

func TestIssuer_RangeRollOverAndExhaustion(t *testing.T) {
	t.Parallel()
	today := cfe.DateOf(testNow)
	a := testRange(cfe.ETicket, "A", 1, 2, today.AddDays(30))
	b := testRange(cfe.ETicket, "B", 10, 11, today.AddDays(300))
	h := newHarness(t, a, b)
	var got []string
	for i := range 4 {
		res, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, fmt.Sprint("roll-", i))))
		if err != nil {
			t.Fatalf("CFE %d: %v", i, err)
		}
		got = append(got, fmt.Sprintf("%s-%d", res.Issued.Serie, res.Issued.Nro))
		if res.Issued.CAE.DNro != map[string]int64{"A": 1, "B": 10}[res.Issued.Serie] {
			t.Errorf("%s carries CAE data of another range: %+v", got[i], res.Issued.CAE)
		}
	}
	if strings.Join(got, " ") != "A-1 A-2 B-10 B-11" {
		t.Fatalf("numbers %v, want A-1 A-2 B-10 B-11 (roll-over to the next range)", got)
	}
	_, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, "roll-x")))
	if cfe.RespuestaOf(err) != cfe.RespSinRangoCAE {
		t.Fatalf("all ranges used up: want codigo 05, got %v", err)
	}
}

func TestIssuer_ExpiredRangeNeverUsed(t *testing.T) {
	t.Parallel()
	today := cfe.DateOf(testNow)
	h := newHarness(t, testRange(cfe.ETicket, "A", 1, 100, today.AddDays(-1)))
	_, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, "exp-1")))
	if cfe.RespuestaOf(err) != cfe.RespSinRangoCAE {
		t.Fatalf("expired range: want codigo 05, got %v", err)
	}
}

// TestIssuer_Concurrent signs from 8 goroutines: distinct, consecutive numbers.
func TestIssuer_Concurrent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const workers, each = 8, 15
	var mu sync.Mutex
	var nums []int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res, err := h.iss.Issue(context.Background(), decode(t, requestJSON(cfe.ETicket, fmt.Sprintf("c-%d-%d", w, i))))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				nums = append(nums, res.Issued.Nro)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	for i, n := range nums {
		if n != int64(i+1) {
			t.Fatalf("numbers are not 1..%d without gaps or repeats: %v", workers*each, nums)
		}
	}
}

func testRange(typ cfe.Type, serie string, from, to int64, expires cfe.Date) cfe.CAERange {
	return cfe.CAERange{ID: cfe.RangeID(typ, serie, from), RUC: testEmisor.RUCEmisor, Type: typ, Serie: serie,
		DNro: from, HNro: to, CAEID: "90269999990", Autorizado: cfe.DateOf(testNow).AddDays(-400),
		Vencimiento: expires, Source: "manual"}
}

// TestIssuer_IssueCFE signs the counter-receipt of an issued e-Ticket: it is
// numbered from the e-Ticket credit-note range, references the original, and
// is idempotent on its id like a request.
func TestIssuer_IssueCFE(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	orig, err := h.iss.Issue(ctx, decode(t, requestJSON(cfe.ETicket, "orig")))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := cfe.ParseXML(orig.Issued.XML)
	if err != nil {
		t.Fatal(err)
	}
	counter, err := cfe.CounterReceipt(parsed, cfe.DateOf(testNow))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.iss.IssueCFE(ctx, "anular-1", "hash-1", counter)
	if err != nil {
		t.Fatalf("IssueCFE: %v", err)
	}
	got, err := cfe.ParseXML(res.Issued.XML)
	if err != nil {
		t.Fatal(err)
	}
	if res.Issued.Type != cfe.ETicketNC || res.Issued.Nro != 1 || len(got.Referencias) != 1 ||
		got.Referencias[0].NroCFERef != orig.Issued.Nro || got.Referencias[0].TpoDocRef != cfe.ETicket {
		t.Fatalf("counter-receipt %d %s-%d, references %+v", res.Issued.Type, res.Issued.Serie, res.Issued.Nro, got.Referencias)
	}
	if counter.IdDoc.Nro != 0 || !counter.TmstFirma.IsZero() {
		t.Error("IssueCFE modified the caller's document")
	}
	if _, err := signer.Verify(res.Issued.XML, signer.VerifyOptions{}); err != nil {
		t.Errorf("signature: %v", err)
	}
	again, err := h.iss.IssueCFE(ctx, "anular-1", "hash-1", counter)
	if err != nil || !again.Replayed || again.Issued.Nro != res.Issued.Nro {
		t.Fatalf("retry: %+v, %v", again, err)
	}
	if _, err := h.iss.IssueCFE(ctx, "anular-1", "hash-2", counter); cfe.RespuestaOf(err) != cfe.RespConflictoUUID {
		t.Fatalf("same id, other content: %v, want RespConflictoUUID", err)
	}
}
