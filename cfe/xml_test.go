package cfe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/shopspring/decimal"
)

// dgiSamples returns the standalone CFEs DGI signed (its example envelope).
func dgiSamples(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe", "*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no DGI sample CFE found: %v", err)
	}
	return files
}

// sameModel fails when two models differ. Decimals compare by value (1.50
// equals 1.5), which is what a round trip through XML keeps.
func sameModel(t testing.TB, want, got *cfe.CFE) {
	t.Helper()
	w, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(w, g) {
		return
	}
	wl, gl := strings.Split(string(w), "\n"), strings.Split(string(g), "\n")
	for i := range min(len(wl), len(gl)) {
		if wl[i] != gl[i] {
			t.Fatalf("models differ at JSON line %d:\nwant %s\ngot  %s", i+1, wl[i], gl[i])
		}
	}
	t.Fatalf("models differ in length:\nwant %d lines\ngot  %d lines", len(wl), len(gl))
}

// xpath evaluates an XPath 1.0 string expression on a file with xmllint, an
// implementation independent of ours.
func xpath(t testing.TB, file, expr string) string {
	t.Helper()
	bin := testtool.Require(t, "xmllint")
	out, err := exec.Command(bin, "--xpath", expr, file).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint --xpath %q %s: %v\n%s", expr, file, err, out)
	}
	return strings.TrimSuffix(string(out), "\n")
}

func mustMarshal(t testing.TB, c *cfe.CFE) []byte {
	t.Helper()
	b, err := cfe.MarshalXML(c)
	if err != nil {
		t.Fatalf("MarshalXML: %v", err)
	}
	return b
}

func TestParseXML_DGISamples(t *testing.T) {
	t.Parallel()
	for _, file := range dgiSamples(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			c, err := cfe.ParseXML(b)
			if err != nil {
				t.Fatalf("ParseXML: %v", err)
			}

			// Key fields, read from the file by xmllint in one XPath expression.
			field := func(name string) string {
				return fmt.Sprintf("normalize-space((//*[local-name()='%s'])[1])", name)
			}
			names := []string{"TipoCFE", "Serie", "Nro", "FchEmis", "TmstFirma", "RUCEmisor", "CdgDGISucur",
				"CantLinDet", "NomItem", "CAE_ID", "FecVenc", "MntTotal", "MntPagar", "MntTotRetenido", "DigestValue"}
			exprs := make([]string, 0, 2*len(names)+1)
			for _, n := range names {
				exprs = append(exprs, field(n), "'|'")
			}
			exprs = append(exprs, "count(//*[local-name()='Detalle']/*[local-name()='Item'])")
			values := strings.Split(xpath(t, file, "concat("+strings.Join(exprs, ",")+")"), "|")
			want := make(map[string]string, len(names))
			for i, n := range names {
				want[n] = values[i]
			}

			var firstItem string
			if len(c.Items) > 0 {
				firstItem = c.Items[0].NomItem
			}
			got := map[string]string{
				"TipoCFE":     c.IdDoc.TipoCFE.String(),
				"Serie":       c.IdDoc.Serie,
				"Nro":         fmt.Sprint(c.IdDoc.Nro),
				"FchEmis":     c.IdDoc.FchEmis.String(),
				"TmstFirma":   c.TmstFirma.Format(time.RFC3339),
				"RUCEmisor":   c.Emisor.RUCEmisor,
				"CdgDGISucur": fmt.Sprint(c.Emisor.CdgDGISucur),
				"CantLinDet":  fmt.Sprint(c.Totales.CantLinDet),
				"NomItem":     firstItem,
				"CAE_ID":      c.CAEData.CAEID,
				"FecVenc":     c.CAEData.FecVenc.String(),
			}
			for k, v := range got {
				if want[k] != v {
					t.Errorf("%s = %q, xmllint reads %q", k, v, want[k])
				}
			}
			for name, amount := range map[string]string{"MntTotal": decString(c.Totales.MntTotal),
				"MntPagar": decString(c.Totales.MntPagar), "MntTotRetenido": decString(c.Totales.MntTotRetenido)} {
				if want[name] == "" && amount == "" {
					continue
				}
				if want[name] == "" || amount == "" || !num(want[name]).Equal(num(amount)) {
					t.Errorf("%s = %q, xmllint reads %q", name, amount, want[name])
				}
			}
			if items := values[len(values)-1]; fmt.Sprint(len(c.Items)) != items {
				t.Errorf("%d items, xmllint counts %s", len(c.Items), items)
			}
			dv, err := cfe.DigestValue(b)
			if err != nil || dv != want["DigestValue"] {
				t.Errorf("DigestValue = %q, %v; xmllint reads %q", dv, err, want["DigestValue"])
			}

			// Round trip: what we build from the sample reads back the same.
			again, err := cfe.ParseXML(mustMarshal(t, c))
			if err != nil {
				t.Fatalf("ParseXML(MarshalXML(sample)): %v", err)
			}
			sameModel(t, c, again)
		})
	}
}

func decString(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.String()
}

// TestBuildXML_EveryType builds, for every CFE type, a document with only the
// required elements and one with every optional element the type allows, and
// validates both against DGI's CFEDGI.xsd with xmllint.
func TestBuildXML_EveryType(t *testing.T) {
	t.Parallel()
	xsd := testtool.XSD(t, "CFEDGI.xsd")
	fixtures := map[string]func(cfe.Type) *cfe.CFE{"minimal": minimalCFE, "full": fullCFE}
	for _, typ := range cfe.Types() {
		for kind, fixture := range fixtures {
			t.Run(fmt.Sprintf("%d/%s", typ, kind), func(t *testing.T) {
				c := fixture(typ)
				before, _ := json.Marshal(c)
				doc, err := cfe.BuildXML(c)
				if err != nil {
					t.Fatalf("BuildXML: %v", err)
				}
				if after, _ := json.Marshal(c); !bytes.Equal(before, after) {
					t.Fatal("BuildXML changed its input")
				}
				testtool.MustValidateXSD(t, xsd, withTestSignature(t, doc))

				info, _ := typ.Info()
				if got := doc.Root().ChildElements()[0].Tag; got != string(info.Element) {
					t.Errorf("type element %s, want %s", got, info.Element)
				}
				b, err := doc.WriteToBytes()
				if err != nil {
					t.Fatal(err)
				}
				again, err := cfe.ParseXML(b)
				if err != nil {
					t.Fatalf("ParseXML: %v", err)
				}
				sameModel(t, c, again)
			})
		}
	}
}

func TestBuildXML_Form(t *testing.T) {
	t.Parallel()
	c := fullCFE(cfe.ETicket)
	// 13:30 UTC is 10:30 in Montevideo; the nanoseconds are not written.
	c.TmstFirma = time.Date(2026, time.March, 14, 13, 30, 0, 999, time.UTC)
	c.Items[0].PrecioUnitario = num("0.123456")
	c.Items[0].Cantidad = num("1.500")
	c.Totales.IVATasaBasica = numP("22.000")
	c.Totales.MntTotal = numP("137704.90")
	c.Totales.MntPagar = numP("-12.5")
	c.Totales.TpoCambio = numP("39.500")
	doc, err := cfe.BuildXML(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("values", func(t *testing.T) {
		for path, want := range map[string]string{
			"./eTck/TmstFirma":                           "2026-03-14T10:30:00-03:00",
			"./eTck/Encabezado/IdDoc/FchEmis":            "2026-03-14",
			"./eTck/Encabezado/IdDoc/Nro":                "42",
			"./eTck/Detalle/Item[1]/PrecioUnitario":      "0.123456",
			"./eTck/Detalle/Item[1]/Cantidad":            "1.5",
			"./eTck/Encabezado/Totales/IVATasaBasica":    "22",
			"./eTck/Encabezado/Totales/MntTotal":         "137704.9",
			"./eTck/Encabezado/Totales/MntPagar":         "-12.5",
			"./eTck/Encabezado/Totales/TpoCambio":        "39.5",
			"./eTck/Encabezado/Totales/MntIVATasaBasica": "5.94",
			"./eTck/Encabezado/Totales/MntNoGrv":         "0",
		} {
			el := doc.Root().FindElement(path)
			if el == nil {
				t.Errorf("%s is missing", path)
			} else if el.Text() != want {
				t.Errorf("%s = %q, want %q", path, el.Text(), want)
			}
		}
	})
	t.Run("root, namespace and no declaration", func(t *testing.T) {
		const head = `<CFE xmlns="http://cfe.dgi.gub.uy" version="1.0"><eTck><TmstFirma>`
		if !bytes.HasPrefix(b, []byte(head)) {
			t.Errorf("document starts %q, want %q", b[:min(len(b), 80)], head)
		}
		if !bytes.HasSuffix(b, []byte("</eTck></CFE>")) {
			t.Errorf("document ends %q", b[max(0, len(b)-40):])
		}
	})
	t.Run("compact and canonical", func(t *testing.T) {
		if loc := regexp.MustCompile(`>\s+<`).FindIndex(b); loc != nil {
			t.Errorf("white space between elements at byte %d: %q", loc[0], b[loc[0]:loc[1]])
		}
		// Inclusive C14N of the document (by xmllint) is the document itself,
		// so what is signed is exactly what is stored.
		f := filepath.Join(t.TempDir(), "cfe.xml")
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(testtool.Require(t, "xmllint"), "--c14n", f).Output()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, b) {
			t.Errorf("C14N form differs from the document:\nc14n %s\ndoc  %s", out, b)
		}
	})
	t.Run("text is escaped", func(t *testing.T) {
		c := minimalCFE(cfe.ETicket)
		c.Items[0].NomItem = `Café "Oro" & <Cía> 'x'`
		b := mustMarshal(t, c)
		if !bytes.Contains(b, []byte(`<NomItem>Café "Oro" &amp; &lt;Cía&gt; 'x'</NomItem>`)) {
			t.Errorf("NomItem not written as C14N writes it: %s", b)
		}
		again, err := cfe.ParseXML(b)
		if err != nil || again.Items[0].NomItem != c.Items[0].NomItem {
			t.Errorf("NomItem reads back as %q, %v", again.Items[0].NomItem, err)
		}
	})
}

// TestBuildXML_OnlyWhatTheTypeAllows sets, on types whose schema lacks them,
// fields that other types carry: they are not written, and the document is
// still valid.
func TestBuildXML_OnlyWhatTheTypeAllows(t *testing.T) {
	t.Parallel()
	xsd := testtool.XSD(t, "CFEDGI.xsd")
	cases := []struct {
		name    string
		typ     cfe.Type
		add     func(c *cfe.CFE)
		absents []string // element paths that must not be written
	}{
		{"remito has no prices, payment or amounts", cfe.ERemito, func(c *cfe.CFE) {
			c.IdDoc.FmaPago, c.IdDoc.MntBruto, c.IdDoc.FchVenc, c.IdDoc.ClauVenta = 1, 1, dateP(2026, 4, 1), "FOB"
			c.Items[0].PrecioUnitario, c.Items[0].MontoItem = num("10"), num("400")
			c.Items[0].DescuentoMonto, c.Items[0].IndAgenteResp = numP("1"), "R"
			c.Totales.TpoMoneda, c.Totales.MntTotal, c.Totales.MntPagar = "UYU", numP("400"), numP("400")
			c.DscRcgGlobal = []cfe.GlobalAdjust{{NroLinDR: 1, TpoMovDR: "D", TpoDR: 1, GlosaDR: "x", ValorDR: num("1"), IndFactDR: 3}}
			c.MediosPago = []cfe.MedioPago{{NroLinMP: 1, GlosaMP: "Efectivo", ValorPago: num("400")}}
			c.ComplFiscal = fullComplFiscal()
		}, []string{"//FmaPago", "//MntBruto", "//FchVenc", "//ClauVenta", "//PrecioUnitario", "//MontoItem",
			"//DescuentoMonto", "//IndAgenteResp", "//TpoMoneda", "//MntTotal", "//MntPagar", "//DscRcgGlobal",
			"//MediosPago", "//Compl_Fiscal"}},
		{"resguardo receptor has no delivery data", cfe.EResguardo, func(c *cfe.CFE) {
			c.Receptor = &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018",
				LugarDestEnt: "Depósito", CompraID: "OC-1"}
			c.Items[0].NomItem, c.Items[0].Cantidad = "Honorarios", num("1")
		}, []string{"//LugarDestEnt", "//CompraID", "//NomItem", "//Cantidad"}},
		{"e-Factura receptor has no foreign document", cfe.EFactura, func(c *cfe.CFE) {
			c.Receptor = &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018", DocRecepExt: "X-1"}
		}, []string{"//DocRecepExt"}},
		{"export invoice has no zone K nor IVA totals", cfe.EFacturaExp, func(c *cfe.CFE) {
			c.ComplFiscal = fullComplFiscal()
			c.Totales.MntNetoIVATasaBasica, c.Totales.IVATasaBasica = numP("10"), numP("22")
			c.IdDoc.IndCobPropia = 1
		}, []string{"//Compl_Fiscal", "//MntNetoIVATasaBasica", "//IVATasaBasica", "//IndCobPropia"}},
		{"the Adenda is never part of the CFE", cfe.ETicket, func(c *cfe.CFE) {
			c.Adenda = "Gracias por su compra"
		}, []string{"//Adenda"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := minimalCFE(tc.typ)
			tc.add(c)
			doc, err := cfe.BuildXML(c)
			if err != nil {
				t.Fatalf("BuildXML: %v", err)
			}
			for _, p := range tc.absents {
				if doc.FindElement(p) != nil {
					t.Errorf("%s is written", p)
				}
			}
			b := withTestSignature(t, doc)
			testtool.MustValidateXSD(t, xsd, b)
			if bytes.Contains(b, []byte("Gracias")) {
				t.Error("the Adenda's text is in the document")
			}
		})
	}
}

func TestBuildXML_Errors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		typ    cfe.Type
		change func(c *cfe.CFE)
		want   []cfe.FieldError // Mensaje is matched as a substring
	}{
		{"unknown type", cfe.ETicket, func(c *cfe.CFE) { c.IdDoc.TipoCFE = 104 },
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/TipoCFE", Mensaje: "104 no existe"}}},
		{"no signature time", cfe.ETicket, func(c *cfe.CFE) { c.TmstFirma = time.Time{} },
			[]cfe.FieldError{{Campo: "TmstFirma", Mensaje: "obligatorio"}}},
		{"no issue date", cfe.ETicket, func(c *cfe.CFE) { c.IdDoc.FchEmis = cfe.Date{} },
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/FchEmis", Mensaje: "obligatorio"}}},
		{"every missing field is named", cfe.ETicket, func(c *cfe.CFE) {
			c.Totales.MntPagar = nil
			c.Items[1].IndFact = 0
			c.Emisor.RznSoc = ""
		}, []cfe.FieldError{
			{Campo: "Encabezado/Emisor/RznSoc", Mensaje: "obligatorio"},
			{Campo: "Encabezado/Totales/MntPagar", Mensaje: "obligatorio"},
			{Campo: "Detalle/Item[2]/IndFact", Mensaje: "obligatorio"},
		}},
		{"no lines", cfe.ETicket, func(c *cfe.CFE) { c.Items = nil },
			[]cfe.FieldError{{Campo: "Detalle/Item", Mensaje: "obligatorio"}}},
		{"more than 700 lines in an e-Ticket", cfe.ETicket, func(c *cfe.CFE) {
			c.Items = make([]cfe.Item, 701)
		}, []cfe.FieldError{{Campo: "Detalle/Item", Mensaje: "máximo 700"}}},
		{"more than 200 lines in an e-Factura", cfe.EFactura, func(c *cfe.CFE) {
			c.Items = make([]cfe.Item, 201)
		}, []cfe.FieldError{{Campo: "Detalle/Item", Mensaje: "máximo 200"}}},
		{"money with 3 decimals", cfe.ETicket, func(c *cfe.CFE) { c.Items[0].MontoItem = num("32.945") },
			[]cfe.FieldError{{Campo: "Detalle/Item[1]/MontoItem", Mensaje: "máximo 2 decimales"}}},
		{"price with 7 decimals", cfe.ETicket, func(c *cfe.CFE) { c.Items[0].PrecioUnitario = num("0.1234567") },
			[]cfe.FieldError{{Campo: "Detalle/Item[1]/PrecioUnitario", Mensaje: "máximo 6 decimales"}}},
		{"quantity with 4 decimals", cfe.ETicket, func(c *cfe.CFE) { c.Items[0].Cantidad = num("1.0005") },
			[]cfe.FieldError{{Campo: "Detalle/Item[1]/Cantidad", Mensaje: "máximo 3 decimales"}}},
		{"exchange rate too large", cfe.ETicket, func(c *cfe.CFE) { c.Totales.TpoCambio = numP("12345.678") },
			[]cfe.FieldError{{Campo: "Encabezado/Totales/TpoCambio", Mensaje: "máximo 7 dígitos"}}},
		{"money too large", cfe.ETicket, func(c *cfe.CFE) { c.Totales.MntTotal = numP("1234567890123456.78") },
			[]cfe.FieldError{{Campo: "Encabezado/Totales/MntTotal", Mensaje: "máximo 17 dígitos"}}},
		{"three phone numbers", cfe.ETicket, func(c *cfe.CFE) { c.Emisor.Telefono = []string{"1", "2", "3"} },
			[]cfe.FieldError{{Campo: "Encabezado/Emisor/Telefono", Mensaje: "máximo 2"}}},
		{"empty phone number", cfe.ETicket, func(c *cfe.CFE) { c.Emisor.Telefono = []string{""} },
			[]cfe.FieldError{{Campo: "Encabezado/Emisor/Telefono[1]", Mensaje: "obligatorio"}}},
		{"both receptor documents", cfe.ETicket, func(c *cfe.CFE) { c.Receptor.DocRecepExt = "AR-1" },
			[]cfe.FieldError{{Campo: "Encabezado/Receptor/DocRecep|DocRecepExt", Mensaje: "excluyentes"}}},
		{"control character in a name", cfe.ETicket, func(c *cfe.CFE) { c.Items[0].NomItem = "Yerba\x01" },
			[]cfe.FieldError{{Campo: "Detalle/Item[1]/NomItem", Mensaje: "caracteres"}}},
		{"invalid UTF-8 in a name", cfe.ETicket, func(c *cfe.CFE) { c.Emisor.Ciudad = "Montevid\xffeo" },
			[]cfe.FieldError{{Campo: "Encabezado/Emisor/Ciudad", Mensaje: "caracteres"}}},
		{"CAE number with letters", cfe.ETicket, func(c *cfe.CFE) { c.CAEData.CAEID = "90A" },
			[]cfe.FieldError{{Campo: "CAEData/CAE_ID", Mensaje: "dígitos"}}},
		{"export invoice without sale clause", cfe.EFacturaExp, func(c *cfe.CFE) { c.IdDoc.ClauVenta = "" },
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/ClauVenta", Mensaje: "obligatorio"}}},
		{"remito without kind of transfer", cfe.ERemito, func(c *cfe.CFE) { c.IdDoc.TipoTraslado = 0 },
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/TipoTraslado", Mensaje: "obligatorio"}}},
		{"remito receptor without address", cfe.ERemito, func(c *cfe.CFE) { c.Receptor.DirRecep = "" },
			[]cfe.FieldError{{Campo: "Encabezado/Receptor/DirRecep", Mensaje: "obligatorio"}}},
		{"resguardo without retention totals", cfe.EResguardo, func(c *cfe.CFE) { c.Totales.RetencPercep = nil },
			[]cfe.FieldError{{Campo: "Encabezado/Totales/RetencPercep", Mensaje: "obligatorio"}}},
		{"resguardo line without taxable base", cfe.EResguardo, func(c *cfe.CFE) {
			c.Items[0].RetencPercep[0].MntSujetoaRet = nil
		}, []cfe.FieldError{{Campo: "Detalle/Item[1]/RetencPercep[1]/MntSujetoaRet", Mensaje: "obligatorio"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fullCFE(tc.typ)
			tc.change(c)
			doc, err := cfe.BuildXML(c)
			if err == nil {
				t.Fatalf("BuildXML accepted it:\n%s", mustWrite(t, doc))
			}
			checkFieldErrors(t, err, tc.want)
		})
	}
	t.Run("nil CFE", func(t *testing.T) {
		_, err := cfe.BuildXML(nil)
		checkFieldErrors(t, err, []cfe.FieldError{{Campo: "CFE", Mensaje: "obligatorio"}})
	})
}

func mustWrite(t testing.TB, doc *etree.Document) string {
	s, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkFieldErrors checks that err is EINVALID naming exactly the fields of
// want, in order, each message containing want's Mensaje.
func checkFieldErrors(t *testing.T, err error, want []cfe.FieldError) {
	t.Helper()
	var e *cfe.Error
	if !errors.As(err, &e) || e.Code != cfe.EINVALID {
		t.Fatalf("error %v, want a *cfe.Error with code %s", err, cfe.EINVALID)
	}
	got := cfe.ErrorFields(err)
	if len(got) != len(want) {
		t.Fatalf("fields %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Campo != want[i].Campo || !strings.Contains(got[i].Mensaje, want[i].Mensaje) {
			t.Errorf("field %d = %+v, want campo %q with %q", i, got[i], want[i].Campo, want[i].Mensaje)
		}
	}
}

func TestParseXML_Errors(t *testing.T) {
	t.Parallel()
	valid := string(mustMarshal(t, fullCFE(cfe.ETicket)))
	// replace changes the first occurrence of each old, new pair in valid.
	replace := func(pairs ...string) string {
		doc := valid
		for i := 0; i < len(pairs); i += 2 {
			if !strings.Contains(doc, pairs[i]) {
				t.Fatalf("fixture has no %q", pairs[i])
			}
			doc = strings.Replace(doc, pairs[i], pairs[i+1], 1)
		}
		return doc
	}
	malformed := []cfe.FieldError(nil)
	cases := []struct {
		name string
		doc  string
		want []cfe.FieldError // nil: not a CFE at all (malformed or foreign)
	}{
		{"empty", "", malformed},
		{"not XML", "factura", malformed},
		{"truncated", valid[:len(valid)/2], malformed},
		{"two roots", valid + valid, malformed},
		{"text after the root", valid + "x", malformed},
		{"mismatched tags", replace("</Serie>", "</Nro>"), malformed},
		{"unsupported encoding", `<?xml version="1.0" encoding="EBCDIC-US"?>` + valid, malformed},
		{"another root", `<Factura xmlns="http://cfe.dgi.gub.uy"/>`, malformed},
		{"another namespace", replace(`xmlns="http://cfe.dgi.gub.uy"`, `xmlns="urn:otro"`), malformed},
		{"no type element", `<CFE xmlns="http://cfe.dgi.gub.uy" version="1.0"></CFE>`,
			[]cfe.FieldError{{Campo: "eTck|eFact|eFact_Exp|eRem|eRem_Exp|eResg|eBoleta", Mensaje: "obligatorio"}}},
		{"two type elements", replace("</eTck>", "</eTck><eFact></eFact>"),
			[]cfe.FieldError{{Campo: "eFact", Mensaje: "un solo elemento"}}},
		{"wrong version", replace(`version="1.0"`, `version="2.0"`),
			[]cfe.FieldError{{Campo: "version", Mensaje: "1.0"}}},
		{"type of another element", replace("<TipoCFE>101<", "<TipoCFE>111<"),
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/TipoCFE", Mensaje: "no corresponde al elemento eTck"}}},
		{"decimal comma", replace("<MntPagar>52.05<", "<MntPagar>52,05<"),
			[]cfe.FieldError{{Campo: "Encabezado/Totales/MntPagar", Mensaje: "número decimal"}}},
		{"exponent", replace("<MntPagar>52.05<", "<MntPagar>5205e-2<"),
			[]cfe.FieldError{{Campo: "Encabezado/Totales/MntPagar", Mensaje: "número decimal"}}},
		{"huge exponent", replace("<MntPagar>52.05<", "<MntPagar>1e999999999<"),
			[]cfe.FieldError{{Campo: "Encabezado/Totales/MntPagar", Mensaje: "número decimal"}}},
		{"too many decimals", replace("<MntPagar>52.05<", "<MntPagar>52.051<"),
			[]cfe.FieldError{{Campo: "Encabezado/Totales/MntPagar", Mensaje: "máximo 2 decimales"}}},
		{"missing required amount", replace("<MntPagar>52.05</MntPagar>", ""),
			[]cfe.FieldError{{Campo: "Encabezado/Totales/MntPagar", Mensaje: "obligatorio"}}},
		{"empty required text", replace("<NomItem>Pan flauta<", "<NomItem><"),
			[]cfe.FieldError{{Campo: "Detalle/Item[2]/NomItem", Mensaje: "obligatorio"}}},
		{"repeated element", replace("<Serie>A</Serie>", "<Serie>A</Serie><Serie>B</Serie>"),
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/Serie", Mensaje: "más de una vez"}}},
		{"date in another form", replace("<FchEmis>2026-03-14<", "<FchEmis>14/03/2026<"),
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/FchEmis", Mensaje: "AAAA-MM-DD"}}},
		{"bad timestamp", replace("<TmstFirma>2026-03-14T10:30:00-03:00<", "<TmstFirma>2026-03-14 10:30<"),
			[]cfe.FieldError{{Campo: "TmstFirma", Mensaje: "fecha y hora"}}},
		{"number that is not a number", replace("<Nro>42<", "<Nro>cuarenta<"),
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/Nro", Mensaje: "entero"}}},
		{"number beyond int64", replace("<Nro>42<", "<Nro>99999999999999999999<"),
			[]cfe.FieldError{{Campo: "Encabezado/IdDoc/Nro", Mensaje: "entero"}}},
		{"too many phones", replace("<Telefono>29001234</Telefono>", "<Telefono>1</Telefono><Telefono>2</Telefono>"),
			[]cfe.FieldError{{Campo: "Encabezado/Emisor/Telefono", Mensaje: "máximo 2"}}},
		{"both receptor documents", replace("<DocRecep>12345672</DocRecep>", "<DocRecep>12345672</DocRecep><DocRecepExt>X</DocRecepExt>"),
			[]cfe.FieldError{{Campo: "Encabezado/Receptor/DocRecep|DocRecepExt", Mensaje: "excluyentes"}}},
		{"missing header", replace("<Encabezado>", "<Cabecera>", "</Encabezado>", "</Cabecera>"),
			[]cfe.FieldError{
				{Campo: "Encabezado/IdDoc", Mensaje: "obligatorio"},
				{Campo: "Encabezado/Emisor", Mensaje: "obligatorio"},
				{Campo: "Encabezado/Totales", Mensaje: "obligatorio"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cfe.ParseXML([]byte(tc.doc))
			if err == nil {
				t.Fatalf("ParseXML accepted it: %+v", c)
			}
			if tc.want == nil {
				if cfe.ErrorCode(err) != cfe.EINVALID || len(cfe.ErrorFields(err)) != 0 {
					t.Fatalf("error %v, want EINVALID without fields", err)
				}
				return
			}
			checkFieldErrors(t, err, tc.want)
		})
	}
}

func TestParseXML_Forms(t *testing.T) {
	t.Parallel()
	c := fullCFE(cfe.EFactura)
	utf8Doc := mustMarshal(t, c)

	t.Run("ISO-8859-1", func(t *testing.T) {
		// DGI's example envelope is ISO-8859-1: each character below U+0100 is one byte.
		latin1 := []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n")
		for _, r := range string(utf8Doc) {
			if r > 0xFF {
				t.Fatalf("fixture has %q, outside ISO-8859-1", r)
			}
			latin1 = append(latin1, byte(r))
		}
		if bytes.Contains(latin1, []byte("Almacén")) || !bytes.Contains(latin1, []byte("Almac\xe9n")) {
			t.Fatal("the test document is not ISO-8859-1")
		}
		got, err := cfe.ParseXML(latin1)
		if err != nil {
			t.Fatal(err)
		}
		sameModel(t, c, got)
	})
	t.Run("any prefix, white space and a signature", func(t *testing.T) {
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(utf8Doc); err != nil {
			t.Fatal(err)
		}
		for _, el := range append([]*etree.Element{doc.Root()}, doc.Root().FindElements("//*")...) {
			el.Space = "dgi"
		}
		doc.Root().RemoveAttr("xmlns")
		doc.Root().CreateAttr("xmlns:dgi", cfe.NamespaceCFE)
		doc.Indent(2)
		b := withTestSignature(t, doc)
		if !bytes.Contains(b, []byte("<dgi:NomItem>")) || !bytes.Contains(b, []byte("\n")) {
			t.Fatalf("test document not prefixed and indented:\n%s", b)
		}
		got, err := cfe.ParseXML(b)
		if err != nil {
			t.Fatal(err)
		}
		sameModel(t, c, got)
	})
}

func TestDigestValue(t *testing.T) {
	t.Parallel()
	// The DGI samples are checked against xmllint in TestParseXML_DGISamples.
	doc, err := cfe.BuildXML(minimalCFE(cfe.ETicket))
	if err != nil {
		t.Fatal(err)
	}
	signed := string(withTestSignature(t, doc))
	t.Run("dummy signature", func(t *testing.T) {
		got, err := cfe.DigestValue([]byte(signed))
		if err != nil || got != "AAECAwQFBgcICQoLDA0ODxAREhM=" {
			t.Errorf("DigestValue = %q, %v", got, err)
		}
	})
	t.Run("wrapped base64", func(t *testing.T) {
		b := strings.Replace(signed, "AAECAwQFBgcICQoLDA0ODxAREhM=", "AAECAwQFBgcI\n  CQoLDA0ODxAREhM=", 1)
		got, err := cfe.DigestValue([]byte(b))
		if err != nil || got != "AAECAwQFBgcICQoLDA0ODxAREhM=" {
			t.Errorf("DigestValue = %q, %v", got, err)
		}
	})
	for name, b := range map[string]string{
		"unsigned":      string(mustMarshal(t, minimalCFE(cfe.ETicket))),
		"not base64":    strings.Replace(signed, "AAECAwQFBgcICQoLDA0ODxAREhM=", "no es base64!", 1),
		"empty digest":  strings.Replace(signed, "AAECAwQFBgcICQoLDA0ODxAREhM=", "", 1),
		"no CFE":        `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"/>`,
		"wrong dsig ns": strings.Replace(signed, "http://www.w3.org/2000/09/xmldsig#", "urn:x", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := cfe.DigestValue([]byte(b)); cfe.ErrorCode(err) != cfe.EINVALID {
				t.Errorf("DigestValue = %q, %v; want EINVALID", got, err)
			}
		})
	}
}

// FuzzParseXML checks that ParseXML never panics, fails only with EINVALID,
// and that whatever it accepts builds again and reads back the same.
func FuzzParseXML(f *testing.F) {
	for _, file := range dgiSamples(f) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, typ := range []cfe.Type{cfe.ETicket, cfe.EFactura, cfe.EFacturaExp, cfe.ERemitoExp, cfe.EResguardo, cfe.EBoleta} {
		f.Add(mustMarshal(f, fullCFE(typ)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := cfe.ParseXML(b)
		if err != nil {
			if cfe.ErrorCode(err) != cfe.EINVALID {
				t.Fatalf("error with code %s: %v", cfe.ErrorCode(err), err)
			}
			return
		}
		out, err := cfe.MarshalXML(c)
		if err != nil {
			t.Fatalf("a parsed document does not build again: %v", err)
		}
		again, err := cfe.ParseXML(out)
		if err != nil {
			t.Fatalf("a rebuilt document does not parse: %v\n%s", err, out)
		}
		sameModel(t, c, again)
	})
}
