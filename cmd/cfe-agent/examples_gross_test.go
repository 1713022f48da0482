package main_test

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// sameAmounts reports whether got and want hold the same amounts, read as
// decimals ("305" is "305.00"; "" only matches "").
func sameAmounts(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] == "" || want[i] == "" {
			if got[i] != want[i] {
				return false
			}
			continue
		}
		g, err1 := decimal.NewFromString(got[i])
		w, err2 := decimal.NewFromString(want[i])
		if err1 != nil || err2 != nil || !g.Equal(w) {
			return false
		}
	}
	return true
}

// grossTotals are the totals of a signed CFE an integrator checks against
// the shelf prices.
type grossTotals struct {
	MntBruto int `xml:"Encabezado>IdDoc>MntBruto"`
	Totales  struct {
		MntNetoIVATasaMin    string `xml:"MntNetoIvaTasaMin"`
		MntNetoIVATasaBasica string `xml:"MntNetoIVATasaBasica"`
		MntIVATasaMin        string `xml:"MntIVATasaMin"`
		MntIVATasaBasica     string `xml:"MntIVATasaBasica"`
		MntTotal             string `xml:"MntTotal"`
		MntPagar             string `xml:"MntPagar"`
	} `xml:"Encabezado>Totales"`
	Items []struct {
		MontoItem string `xml:"MontoItem"`
	} `xml:"Detalle>Item"`
}

// TestExamples_GrossPrices signs the two examples whose prices include IVA
// (montoBruto 1, the usual case at a till) through a real agent and checks
// the totals an integrator expects from the shelf prices: 2 × 152,50 is
// charged 305,00 (IVA taken out of it, not added: 372,10), in the signed
// XML and in the agent's last receipts.
func TestExamples_GrossPrices(t *testing.T) {
	t.Parallel()
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")
	cases := []struct {
		file                  string
		items                 []string
		netBasic, ivaBasic    string
		netMin, ivaMin, total string
	}{
		{"e-ticket-precios-con-iva.json", []string{"305.00"}, "250.00", "55.00", "", "", "305.00"},
		{"e-factura-precios-con-iva.json", []string{"305.00", "220.00"}, "250.00", "55.00", "200.00", "20.00", "525.00"},
	}
	for _, c := range cases {
		res := signCFE(t, p.baseURL, example(t, c.file))
		if res["codigo_respuesta"] != "00" {
			t.Fatalf("%s: %v %v", c.file, res["codigo_respuesta"], res["mensaje_respuesta"])
		}
		signed, _ := res["xml_firmado"].(string)
		// The CFE's one child (eTck, eFact) holds the document.
		start := strings.Index(signed, "<Encabezado>")
		end := strings.LastIndex(signed, "</Detalle>")
		if start < 0 || end < 0 {
			t.Fatalf("%s: no Encabezado and Detalle in the signed XML:\n%.800s", c.file, signed)
		}
		var got grossTotals
		if err := xml.Unmarshal([]byte("<doc>"+signed[start:end]+"</Detalle></doc>"), &got); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if got.MntBruto != 1 {
			t.Errorf("%s: MntBruto %d, want 1 (prices with IVA included)", c.file, got.MntBruto)
		}
		var items []string
		for _, it := range got.Items {
			items = append(items, it.MontoItem)
		}
		if !sameAmounts(items, c.items) {
			t.Errorf("%s: line amounts %v, want %v (quantity × shelf price)", c.file, items, c.items)
		}
		tt := got.Totales
		for _, f := range []struct{ name, got, want string }{
			{"MntNetoIVATasaBasica", tt.MntNetoIVATasaBasica, c.netBasic},
			{"MntIVATasaBasica", tt.MntIVATasaBasica, c.ivaBasic},
			{"MntNetoIVATasaMin", tt.MntNetoIVATasaMin, c.netMin},
			{"MntIVATasaMin", tt.MntIVATasaMin, c.ivaMin},
			{"MntTotal", tt.MntTotal, c.total},
			{"MntPagar", tt.MntPagar, c.total},
		} {
			if !sameAmounts([]string{f.got}, []string{f.want}) {
				t.Errorf("%s: %s %q, want %q", c.file, f.name, f.got, f.want)
			}
		}
		if qr, _ := res["datos_qr"].(string); !strings.Contains(qr, ","+c.total+",") {
			t.Errorf("%s: the QR data do not carry the total %s: %s", c.file, c.total, qr)
		}
	}
	st, err := p.client().State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	totals := map[int]string{}
	for _, r := range st.Receipts.Recent {
		totals[int(r.TipoCFE)] = r.Total.StringFixed(2)
	}
	if totals[101] != "305.00" || totals[111] != "525.00" {
		t.Errorf("the agent's last receipts show totals %v, want e-Ticket 305.00 and e-Factura 525.00", totals)
	}
}

// TestSign_MessageAgrees: mensaje_respuesta agrees with the document's
// gender: "e-Ticket A-1 firmado", but "e-Factura A-1 firmada" and "Nota de
// Crédito de e-Ticket A-1 firmada".
func TestSign_MessageAgrees(t *testing.T) {
	t.Parallel()
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")
	for file, want := range map[string]string{
		"e-ticket.json":              "e-Ticket A-1 firmado",
		"e-factura.json":             "e-Factura A-1 firmada",
		"nota-credito-e-ticket.json": "Nota de Crédito de e-Ticket A-1 firmada",
		"nota-debito-e-factura.json": "Nota de Débito de e-Factura A-1 firmada",
		"e-boleta.json":              "e-Boleta de entrada A-1 firmada",
		"e-remito.json":              "e-Remito A-1 firmado",
	} {
		res := signCFE(t, p.baseURL, example(t, file))
		if res["mensaje_respuesta"] != want {
			t.Errorf("%s: mensaje_respuesta %q, want %q", file, res["mensaje_respuesta"], want)
		}
	}
}
