package cfe_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
)

// TestReadIssuedTotal_DGISamples: the currency and total of each CFE DGI
// signed in its example envelope, as the files say (read by hand): every
// one in pesos, the e-Remitos (181, and 281 in contingency) without
// TpoMoneda and so in UYU by the rule, the e-Resguardo (182) with a currency
// and no MntTotal.
func TestReadIssuedTotal_DGISamples(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		tpoMoneda bool // the file has a TpoMoneda
		total     string
	}{
		"Sob_Ej_Mod_19072016__CFE_101_A1.xml":       {true, "168816"},
		"Sob_Ej_Mod_19072016__CFE_102_A1.xml":       {true, "82500"},
		"Sob_Ej_Mod_19072016__CFE_103_A1.xml":       {true, "30244"},
		"Sob_Ej_Mod_19072016__CFE_111_A1.xml":       {true, "24400"},
		"Sob_Ej_Mod_19072016__CFE_112_A1.xml":       {true, "165000"},
		"Sob_Ej_Mod_19072016__CFE_181_A1.xml":       {false, "0"},
		"Sob_Ej_Mod_19072016__CFE_182_A1.xml":       {true, "0"},
		"Sob_Ej_Mod_19072016__CFE_281_XA953001.xml": {false, "0"},
	}
	files := dgiSamples(t)
	if len(files) != len(want) {
		t.Fatalf("%d DGI sample CFEs, the table has %d: give each its line", len(files), len(want))
	}
	for _, f := range files {
		w, ok := want[filepath.Base(f)]
		if !ok {
			t.Fatalf("no line for the sample %s", filepath.Base(f))
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(b, []byte("TpoMoneda>")); got != w.tpoMoneda {
				t.Fatalf("the sample has TpoMoneda: %v, the table says %v", got, w.tpoMoneda)
			}
			got, err := cfe.ReadIssuedTotal(b)
			if err != nil {
				t.Fatal(err)
			}
			if got.Currency != "UYU" || !got.MntTotal.Equal(decimal.RequireFromString(w.total)) {
				t.Errorf("ReadIssuedTotal = %s %s, want UYU %s", got.Currency, got.MntTotal, w.total)
			}
			// The parsed document's rule agrees with the streaming read.
			c, err := cfe.ParseXML(b)
			if err != nil {
				t.Fatal(err)
			}
			if c.Totales.Currency() != got.Currency {
				t.Errorf("Totales.Currency() = %s, ReadIssuedTotal %s", c.Totales.Currency(), got.Currency)
			}
		})
	}
}

// TestReadIssuedTotal_Examples signs each of the README's example requests
// (examples/*.json) and reads its currency and total back: the currency is
// the request's totales.tipoMoneda, UYU when it names none (the e-Remito
// among them), and the total is MntTotal as the full parser reads the
// signed document (zero without one).
func TestReadIssuedTotal_Examples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	now := time.Date(2026, time.March, 14, 10, 30, 0, 0, cfe.Montevideo)
	creds, err := signer.GenerateTestCertificate("219999830019", "Almacén La Esquina S.A.", now.AddDate(0, -1, 0))
	if err != nil {
		t.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	emisor := cfe.Emisor{RUCEmisor: "219999830019", RznSoc: "Almacén La Esquina S.A.", CdgDGISucur: 1,
		DomFiscal: "Av. 18 de Julio 1234", Ciudad: "Montevideo", Departamento: "Montevideo"}
	currencies := map[string]bool{}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var named struct {
			CFE struct {
				Totales struct {
					TipoMoneda string `json:"tipoMoneda"`
				} `json:"totales"`
			} `json:"cfe"`
		}
		if err := json.Unmarshal(body, &named); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		wantCurrency := named.CFE.Totales.TipoMoneda
		if wantCurrency == "" {
			wantCurrency = "UYU"
		}
		currencies[wantCurrency] = true
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			req, err := cfe.DecodeRequest(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := req.ToCFE(cfe.IssueParams{Emisor: emisor, Tax: cfe.DefaultTaxConfig(), SignedAt: now})
			if err != nil {
				t.Fatal(err)
			}
			// The number and its CAE range, as the store gives them.
			doc.IdDoc.Serie, doc.IdDoc.Nro = "A", 1
			doc.CAEData = cfe.CAEData{CAEID: "90260000123", DNro: 1, HNro: 1000,
				FecVenc: cfe.Date{Year: 2028, Month: time.March, Day: 1}}
			unsigned, err := cfe.MarshalXML(doc)
			if err != nil {
				t.Fatal(err)
			}
			signed, err := sg.Sign(unsigned)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfe.ReadIssuedTotal(signed.XML)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := cfe.ParseXML(signed.XML)
			if err != nil {
				t.Fatal(err)
			}
			wantTotal := decimal.Zero
			if parsed.Totales.MntTotal != nil {
				wantTotal = *parsed.Totales.MntTotal
			}
			if got.Currency != wantCurrency || !got.MntTotal.Equal(wantTotal) {
				t.Errorf("ReadIssuedTotal = %s %s, want %s %s", got.Currency, got.MntTotal, wantCurrency, wantTotal)
			}
			if parsed.Totales.Currency() != wantCurrency {
				t.Errorf("Totales.Currency() of the parsed CFE = %s, want %s", parsed.Totales.Currency(), wantCurrency)
			}
		})
	}
	if !currencies["USD"] || !currencies["UYU"] {
		t.Errorf("the examples name the currencies %v: the table should hold pesos and another currency", currencies)
	}
}

// TestReadIssuedTotal_Forms: documents built here, one per case the rule
// and the reader must tell apart.
func TestReadIssuedTotal_Forms(t *testing.T) {
	t.Parallel()
	usd := fullCFE(cfe.ETicket) // in dollars, with every optional element
	usdXML, err := cfe.MarshalXML(usd)
	if err != nil {
		t.Fatal(err)
	}
	remito, err := cfe.MarshalXML(minimalCFE(cfe.ERemito))
	if err != nil {
		t.Fatal(err)
	}
	const totales = `<CFE><eTck><Encabezado><Totales>%s</Totales></Encabezado><Detalle/></eTck></CFE>`
	form := func(inner string) []byte { return []byte(strings.Replace(totales, "%s", inner, 1)) }
	tests := []struct {
		name     string
		doc      []byte
		currency string
		total    string
		err      string // a part of the error's message, when it fails
	}{
		{"a CFE in dollars", usdXML, "USD", usd.Totales.MntTotal.String(), ""},
		{"an e-Remito names no currency", remito, "UYU", "0", ""},
		{"white space around the values", form("<TpoMoneda> EUR </TpoMoneda><MntTotal>\n12.50\n</MntTotal>"), "EUR", "12.5", ""},
		{"an empty TpoMoneda", form("<TpoMoneda></TpoMoneda><MntTotal>1</MntTotal>"), "UYU", "1", ""},
		{"a prefixed namespace", []byte(`<ns0:CFE xmlns:ns0="http://cfe.dgi.gub.uy"><ns0:eFact><ns0:Encabezado>` +
			`<ns0:Totales><ns0:TpoMoneda>BRL</ns0:TpoMoneda><ns0:MntTotal>7</ns0:MntTotal></ns0:Totales>` +
			`</ns0:Encabezado></ns0:eFact></ns0:CFE>`), "BRL", "7", ""},
		{"a TpoMoneda outside Totales is not the CFE's", []byte(`<CFE><eTck><Encabezado><IdDoc><TpoMoneda>USD</TpoMoneda>` +
			`</IdDoc><Totales><MntTotal>3</MntTotal></Totales></Encabezado></eTck></CFE>`), "UYU", "3", ""},
		{"the lines after Totales are not read", []byte(`<CFE><eTck><Encabezado><Totales><TpoMoneda>UYU</TpoMoneda>` +
			`</Totales></Encabezado><Detalle><Item>&undefined;</Item></Detalle></eTck></CFE>`), "UYU", "0", ""},
		{"no Totales", []byte(`<CFE><eTck><Encabezado><IdDoc/></Encabezado></eTck></CFE>`), "", "", "Encabezado/Totales"},
		{"not XML", []byte("{}"), "", "", "Encabezado/Totales"},
		{"a MntTotal that is no number", form("<TpoMoneda>UYU</TpoMoneda><MntTotal>mil</MntTotal>"), "", "", `"mil"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := cfe.ReadIssuedTotal(tc.doc)
			if tc.err != "" {
				if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), tc.err) {
					t.Fatalf("ReadIssuedTotal = %+v, %v; want an EINVALID error saying %s", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Currency != tc.currency || !got.MntTotal.Equal(decimal.RequireFromString(tc.total)) {
				t.Errorf("ReadIssuedTotal = %s %s, want %s %s", got.Currency, got.MntTotal, tc.currency, tc.total)
			}
		})
	}
}

// TestTotales_Currency: the rule on the model.
func TestTotales_Currency(t *testing.T) {
	t.Parallel()
	for tpo, want := range map[string]string{"": "UYU", "UYU": "UYU", "USD": "USD", "UYI": "UYI", " EUR ": "EUR", "  ": "UYU"} {
		if got := (cfe.Totales{TpoMoneda: tpo}).Currency(); got != want {
			t.Errorf("Totales{TpoMoneda: %q}.Currency() = %q, want %q", tpo, got, want)
		}
	}
}

// BenchmarkReadIssuedTotal reads the currency and total of a signed CFE
// with every optional element (what a chart does per stored CFE), beside
// the full parse it replaces.
// Run: go test -run '^$' -bench ReadIssuedTotal ./cfe/
func BenchmarkReadIssuedTotal(b *testing.B) {
	doc, err := cfe.MarshalXML(fullCFE(cfe.EFactura))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("stream", func(b *testing.B) {
		for b.Loop() {
			if _, err := cfe.ReadIssuedTotal(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ParseXML", func(b *testing.B) {
		for b.Loop() {
			if _, err := cfe.ParseXML(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
