package issuer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// specialRange is testRange with a special CAE (G-C5).
func specialRange(typ cfe.Type, serie string, from, to int64, especial int) cfe.CAERange {
	r := testRange(typ, serie, from, to, cfe.DateOf(testNow).AddDays(300))
	r.CAEEspecial = especial
	return r
}

// ivaMinimoTicket is an e-Ticket of a sale by an IVA mínimo taxpayer
// (indicator 16) with the given montoBruto (0: not sent).
func ivaMinimoTicket(t *testing.T, uuid string, montoBruto int) *cfe.Request {
	idDoc := map[string]any{"tipoCfe": 101, "formaPago": 1}
	if montoBruto != 0 {
		idDoc["montoBruto"] = montoBruto
	}
	b, err := json.Marshal(map[string]any{"uuid": uuid, "cfe": map[string]any{
		"idDoc": idDoc,
		"detalles": []map[string]any{{"indicadorFacturacion": 16, "nombreItem": "Empanada", "cantidad": 4,
			"precioUnitario": "85"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, string(b))
}

// wantRefused fails unless err is a validation rejection (01) naming campo
// with a message containing fragment.
func wantRefused(t *testing.T, err error, campo, fragment string) {
	t.Helper()
	if cfe.RespuestaOf(err) != cfe.RespRechazoValidacion {
		t.Fatalf("want codigo_respuesta 01, got %q: %v", cfe.RespuestaOf(err), err)
	}
	for _, f := range cfe.ErrorFields(err) {
		if f.Campo == campo && strings.Contains(f.Mensaje, fragment) {
			return
		}
	}
	t.Fatalf("no error on %s containing %q: %+v", campo, fragment, cfe.ErrorFields(err))
}

// TestIssuer_CAERules checks V24 A-C10 in both directions and A-C115 through
// the issuer over a real store: each refusal answers 01 naming
// cfe.idDoc.montoBruto, and the next good CFE of the type takes number 1.
func TestIssuer_CAERules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	today := cfe.DateOf(testNow)

	t.Run("MntBruto 3 with an ordinary CAE", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t) // the sandbox ranges are ordinary
		_, err := h.iss.Issue(ctx, ivaMinimoTicket(t, "acl0-1", 3))
		wantRefused(t, err, "cfe.idDoc.montoBruto", "rango CAE especial")
		if n := nextNumber(t, h, "acl0-2"); n != 1 {
			t.Fatalf("the refusal consumed a number: next e-Ticket is %d, want 1", n)
		}
	})

	for _, especial := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("special CAE %d without MntBruto 3", especial), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, specialRange(cfe.ETicket, "A", 1, 100, especial))
			for i, mb := range []int{0, 1} {
				_, err := h.iss.Issue(ctx, ivaMinimoTicket(t, fmt.Sprint("acl0-s-", i), mb))
				wantRefused(t, err, "cfe.idDoc.montoBruto", "debe ser 3")
			}
			// A basic-rate e-Ticket (montoBruto absent) is refused the same way.
			_, err := h.iss.Issue(ctx, decode(t, requestJSON(cfe.ETicket, "acl0-s-c")))
			wantRefused(t, err, "cfe.idDoc.montoBruto", "debe ser 3")
			res, err := h.iss.Issue(ctx, ivaMinimoTicket(t, "acl0-s-ok", 3))
			if err != nil {
				t.Fatalf("montoBruto 3 with a special CAE: %v", err)
			}
			if res.Issued.Nro != 1 || res.Issued.CAE.CAEEspecial != especial {
				t.Fatalf("signed %s-%d with CAEEspecial %d; want A-1 with %d: a refusal consumed a number",
					res.Issued.Serie, res.Issued.Nro, res.Issued.CAE.CAEEspecial, especial)
			}
			parsed, err := cfe.ParseXML(res.Issued.XML)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.IdDoc.MntBruto != 3 || parsed.CAEData.CAEEspecial != especial {
				t.Fatalf("signed XML has MntBruto %d and CAEEspecial %d", parsed.IdDoc.MntBruto, parsed.CAEData.CAEEspecial)
			}
		})
	}

	t.Run("the declared MntBruto selects the range", func(t *testing.T) {
		t.Parallel()
		// An ordinary serie A and an IVA mínimo serie B for e-Tickets: each
		// CFE is numbered from the range its MntBruto agrees with.
		h := newHarness(t, testRange(cfe.ETicket, "A", 1, 100, today.AddDays(300)),
			specialRange(cfe.ETicket, "B", 1, 100, 2))
		special, err := h.iss.Issue(ctx, ivaMinimoTicket(t, "acl0-m-1", 3))
		if err != nil {
			t.Fatal(err)
		}
		ordinary := nextNumber(t, h, "acl0-m-2")
		again, err := h.iss.Issue(ctx, ivaMinimoTicket(t, "acl0-m-3", 3))
		if err != nil {
			t.Fatal(err)
		}
		if special.Issued.Serie != "B" || special.Issued.Nro != 1 || ordinary != 1 || again.Issued.Serie != "B" || again.Issued.Nro != 2 {
			t.Fatalf("numbered %s-%d, A-%d, %s-%d; want B-1, A-1, B-2",
				special.Issued.Serie, special.Issued.Nro, ordinary, again.Issued.Serie, again.Issued.Nro)
		}
	})

	t.Run("IVA en suspenso in an e-Boleta without MntBruto 2", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		boleta := func(uuid string, montoBruto int) *cfe.Request {
			r := decode(t, requestJSON(cfe.EBoleta, uuid))
			r.CFE.Detalles[0].IndicadorFacturacion = 12
			r.CFE.IdDoc.MontoBruto = montoBruto
			return r
		}
		for i, mb := range []int{0, 1} {
			_, err := h.iss.Issue(ctx, boleta(fmt.Sprint("ac115-", i), mb))
			wantRefused(t, err, "cfe.idDoc.montoBruto", "debe ser 2")
		}
		res, err := h.iss.Issue(ctx, boleta("ac115-ok", 2))
		if err != nil {
			t.Fatalf("IVA en suspenso with montoBruto 2: %v", err)
		}
		if res.Issued.Nro != 1 {
			t.Fatalf("e-Boleta numbered %d, want 1: a refusal consumed a number", res.Issued.Nro)
		}
	})
}
