package issuer_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
)

// keyedJSON is requestJSON for a paper contingency form of type typ keyed
// in: its serie, number and the date written on it; edit changes the body.
func keyedJSON(t testing.TB, typ cfe.Type, uuid, serie string, nro int64, fecha string, edit func(body, idDoc map[string]any)) string {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal([]byte(requestJSON(typ, uuid)), &body); err != nil {
		t.Fatal(err)
	}
	idDoc := cfeOf(body)["idDoc"].(map[string]any)
	idDoc["serie"], idDoc["numero"], idDoc["fechaEmision"] = serie, nro, fecha
	if info, _ := typ.Info(); info.Base == 231 || info.Base == 241 { // on behalf of others: the mandante
		cfeOf(body)["complementoFiscal"] = map[string]any{"tipoDocumento": 2, "codigoPais": "UY",
			"documento": "214844360018", "nombre": "Mandante SA"}
	}
	if edit != nil {
		edit(body, idDoc)
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newKeyedHarness is a harness with the sandbox's electronic and
// contingency ranges (the latter authorized a year before testNow).
func newKeyedHarness(t testing.TB) *harness {
	t.Helper()
	today := cfe.DateOf(testNow)
	ranges := append(signer.SandboxRanges(testEmisor.RUCEmisor, today), signer.SandboxContingencyRanges(testEmisor.RUCEmisor, today)...)
	return newHarness(t, ranges...)
}

// TestIssuer_KeyedEveryContingencyType keys in a paper form of every
// contingency type (201–282) with the serie, number and date printed on
// it: signed with its range's CAE under that number, xmllint-valid against
// CFEDGI.xsd and verified by xmlsec1; the same uuid again answers the
// stored CFE.
func TestIssuer_KeyedEveryContingencyType(t *testing.T) {
	t.Parallel()
	h := newKeyedHarness(t)
	xsd := testtool.XSD(t, "CFEDGI.xsd")
	yesterday := cfe.DateOf(testNow.AddDate(0, 0, -1)).String()
	for _, typ := range cfe.Types() {
		if info, _ := typ.Info(); !info.Contingency {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			t.Parallel()
			body := keyedJSON(t, typ, uuidFor(typ, 1), "A", 42, yesterday, nil)
			res, err := h.iss.Issue(context.Background(), decode(t, body))
			if err != nil {
				t.Fatalf("Issue: %v (%s) %+v", err, cfe.RespuestaOf(err), cfe.ErrorFields(err))
			}
			got := res.Issued
			if got.Type != typ || got.Serie != "A" || got.Nro != 42 || got.RangeID != cfe.RangeID(typ, "A", 1) {
				t.Fatalf("stored %d %s-%d in %s, want %d A-42 in its contingency range", got.Type, got.Serie, got.Nro, got.RangeID, typ)
			}
			testtool.MustValidateXSD(t, xsd, got.XML)
			if out, ok := testtool.XMLSecVerify(t, got.XML, ""); !ok {
				t.Fatalf("xmlsec1 rejects the signed CFC:\n%s", out)
			}
			parsed, err := cfe.ParseXML(got.XML)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.IdDoc.TipoCFE != typ || parsed.IdDoc.FchEmis.String() != yesterday || parsed.CAEData.HNro != signer.SandboxContingencySize ||
				parsed.CAEData.CAEID != got.CAE.CAEID {
				t.Errorf("signed IdDoc %+v, CAEData %+v", parsed.IdDoc, parsed.CAEData)
			}
			again, err := h.iss.Issue(context.Background(), decode(t, body))
			if err != nil || !again.Replayed || again.Issued.UUID != got.UUID {
				t.Errorf("same uuid again: %+v, %v; want the stored CFE", again, err)
			}
		})
	}
}

// TestIssuer_KeyedRefusals: each refusal is 01 naming the field, and
// nothing is stored (the number stays free and the range's use unchanged).
func TestIssuer_KeyedRefusals(t *testing.T) {
	t.Parallel()
	h := newKeyedHarness(t)
	ctx := context.Background()
	yesterday := cfe.DateOf(testNow.AddDate(0, 0, -1)).String()
	first := keyedJSON(t, 211, "form-211-9", "A", 9, yesterday, nil)
	if _, err := h.iss.Issue(ctx, decode(t, first)); err != nil {
		t.Fatalf("first key-in: %v %+v", err, cfe.ErrorFields(err))
	}
	tests := []struct {
		name, body, campo, fragment string
	}{
		{"number outside the ranges", keyedJSON(t, 211, "r1", "A", signer.SandboxContingencySize+1, yesterday, nil),
			"cfe.idDoc.numero", "no está en los rangos CAE"},
		{"serie without a range", keyedJSON(t, 211, "r2", "XB", 9, yesterday, nil),
			"cfe.idDoc.serie", "no hay un rango CAE de contingencia"},
		{"number keyed twice", keyedJSON(t, 211, "r3", "A", 9, yesterday, nil),
			"cfe.idDoc.numero", "ya fue ingresado con el uuid form-211-9"},
		{"future date", keyedJSON(t, 211, "r4", "A", 10, cfe.DateOf(testNow.AddDate(0, 0, 1)).String(), nil),
			"cfe.idDoc.fechaEmision", "no puede ser posterior a la de su ingreso"},
		{"date before the range's authorization", keyedJSON(t, 211, "r5", "A", 10, cfe.DateOf(testNow.AddDate(-2, 0, 0)).String(), nil),
			"cfe.idDoc.fechaEmision", "anterior a la autorización de su rango CAE"},
		{"no date", keyedJSON(t, 211, "r6", "A", 10, "", func(_, id map[string]any) { delete(id, "fechaEmision") }),
			"cfe.idDoc.fechaEmision", "obligatoria"},
		{"no number", keyedJSON(t, 211, "r7", "A", 0, yesterday, nil), "cfe.idDoc.numero", "obligatorio"},
		// e-Factura's own required fields: the receptor, the payment form.
		{"e-Factura Contingencia without a receptor", keyedJSON(t, 211, "r8", "A", 10, yesterday, func(b, _ map[string]any) { delete(cfeOf(b), "receptor") }),
			"cfe.receptor", "obligatori"},
		{"e-Factura Contingencia without formaPago", keyedJSON(t, 211, "r9", "A", 10, yesterday, func(_, id map[string]any) { delete(id, "formaPago") }),
			"cfe.idDoc.formaPago", "obligatoria"},
		{"e-Remito Contingencia without tipoTraslado", keyedJSON(t, 281, "r10", "A", 10, yesterday, func(_, id map[string]any) { delete(id, "tipoTraslado") }),
			"cfe.idDoc.tipoTraslado", "obligatorio"},
		{"correcting a CFC DGI did not observe", keyedJSON(t, 211, "r11", "A", 9, yesterday, func(b, _ map[string]any) { b["corrige"] = "form-211-9" }),
			"corrige", "DGI no observó"},
		{"serie on an e-Ticket", strings.Replace(requestJSON(cfe.ETicket, "r12"), `"tipoCfe":101`, `"tipoCfe":101,"serie":"A"`, 1),
			"cfe.idDoc.serie", "solo corresponde a un comprobante de contingencia"},
		{"numero on an e-Factura", strings.Replace(requestJSON(cfe.EFactura, "r13"), `"tipoCfe":111`, `"tipoCfe":111,"numero":5`, 1),
			"cfe.idDoc.numero", "solo corresponde a un comprobante de contingencia"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := h.db.RangeStatus(ctx, cfe.DateOf(testNow))
			if err != nil {
				t.Fatal(err)
			}
			committed := h.db.Committed()
			_, err = h.iss.Issue(ctx, decode(t, tt.body))
			if cfe.RespuestaOf(err) != cfe.RespRechazoValidacion {
				t.Fatalf("got %v (%q), want a refusal 01", err, cfe.RespuestaOf(err))
			}
			found := false
			for _, f := range cfe.ErrorFields(err) {
				found = found || (f.Campo == tt.campo && strings.Contains(f.Mensaje, tt.fragment))
			}
			if !found {
				t.Errorf("fields %+v: want %s with %q", cfe.ErrorFields(err), tt.campo, tt.fragment)
			}
			after, err := h.db.RangeStatus(ctx, cfe.DateOf(testNow))
			if err != nil {
				t.Fatal(err)
			}
			for i := range before {
				if before[i].Used != after[i].Used || before[i].Remaining != after[i].Remaining {
					t.Errorf("range %s changed: %+v → %+v", before[i].Range.ID, before[i], after[i])
				}
			}
			if h.db.Committed() != committed {
				t.Error("a refused key-in stored a CFE")
			}
		})
	}
	// The number refused as keyed twice is still the first uuid's.
	got, err := h.db.FindByNumber(ctx, 211, "A", 9)
	if err != nil || got.UUID != "form-211-9" {
		t.Errorf("211 A-9 = %+v, %v", got, err)
	}
	// The electronic numbering is untouched: the next e-Factura is A-1.
	res, err := h.iss.Issue(ctx, decode(t, requestJSON(cfe.EFactura, "e-fact-1")))
	if err != nil || res.Issued.Nro != 1 {
		t.Errorf("next e-Factura: %+v, %v", res, err)
	}
}

// TestIssuer_IssueKeyedBatch: a batch is signed and stored all or nothing;
// a refused line names itself and nothing of the batch is stored.
func TestIssuer_IssueKeyedBatch(t *testing.T) {
	t.Parallel()
	h := newKeyedHarness(t)
	ctx := context.Background()
	yesterday := cfe.DateOf(testNow.AddDate(0, 0, -1)).String()
	req := func(typ cfe.Type, uuid string, nro int64, fecha string) *cfe.Request {
		return decode(t, keyedJSON(t, typ, uuid, "A", nro, fecha, nil))
	}
	bad := []*cfe.Request{req(201, "b1", 1, yesterday), req(211, "b2", 2, cfe.DateOf(testNow.AddDate(0, 0, 2)).String()), req(201, "b3", 1, yesterday)}
	lines, err := h.iss.IssueKeyedBatch(ctx, bad)
	if cfe.ErrorCode(err) != cfe.EINVALID || len(lines) != 3 {
		t.Fatalf("bad batch: %v, %d lines", err, len(lines))
	}
	if lines[0].Err != nil || lines[0].Issued != nil {
		t.Errorf("line 1 is good and must be neither refused nor stored: %+v", lines[0])
	}
	if !errField(lines[1].Err, "cfe.idDoc.fechaEmision") || !errField(lines[2].Err, "cfe.idDoc.numero") {
		t.Errorf("lines 2 and 3: %v / %v", lines[1].Err, lines[2].Err)
	}
	if h.db.Committed() != 0 {
		t.Fatalf("a refused batch stored %d CFEs", h.db.Committed())
	}

	good := []*cfe.Request{req(201, "g1", 1, yesterday), req(211, "g2", 2, yesterday), req(281, "g3", 3, yesterday)}
	lines, err = h.iss.IssueKeyedBatch(ctx, good)
	if err != nil {
		t.Fatalf("good batch: %v", err)
	}
	for i, l := range lines {
		if l.Err != nil || l.Issued == nil || l.Issued.Nro != int64(i+1) {
			t.Errorf("line %d: %+v", i+1, l)
		}
	}
	if h.db.Committed() != 3 {
		t.Errorf("committed %d, want 3", h.db.Committed())
	}
	// Run again: every line is answered from the store, nothing stored twice.
	lines, err = h.iss.IssueKeyedBatch(ctx, good)
	if err != nil || !lines[0].Replayed || !lines[2].Replayed || h.db.Committed() != 3 {
		t.Errorf("same batch again: %v, %+v, committed %d", err, lines, h.db.Committed())
	}
}

func errField(err error, campo string) bool {
	for _, f := range cfe.ErrorFields(err) {
		if f.Campo == campo {
			return true
		}
	}
	return false
}
