package cfe

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/cfe/internal/xsdgen"
)

// TestDGIFacets_generatedFileIsCurrent regenerates the facet table from the
// embedded XSDs and compares it with the committed file.
func TestDGIFacets_generatedFileIsCurrent(t *testing.T) {
	t.Parallel()
	want, err := xsdgen.Generate("../assets/xsd", "cfe")
	if err != nil {
		t.Fatalf("generating from ../assets/xsd: %v", err)
	}
	got, err := os.ReadFile(xsdgen.Generated)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the generator writes from assets/xsd now: run `go generate ./cfe/`", xsdgen.Generated)
	}
}

// TestValidate_dgiCodeLists is issue 14's reproduction 3: codes that pass a
// pattern but are not in DGI's enumerations are refused before numbering,
// naming the request field.
func TestValidate_dgiCodeLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		typ    Type
		mutate func(*Request)
		campo  string
		value  string
	}{
		{"currency ZZZ", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{TipoMoneda: "ZZZ", TipoCambio: decp("40")}
		}, "cfe.totales.tipoMoneda", "ZZZ"},
		{"currency XYZ", EFactura, func(r *Request) {
			r.CFE.Totales = &RequestTotales{TipoMoneda: "XYZ", TipoCambio: decp("40")}
		}, "cfe.totales.tipoMoneda", "XYZ"},
		{"receptor country ZZ", EFactura, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 4, CodigoPais: "ZZ", DocumentoExt: "123456",
				RazonSocial: "Cliente", Direccion: "Calle 1", Ciudad: "Ciudad", Pais: "Zeta"}
		}, "cfe.receptor.codigoPais", "ZZ"},
		{"receptor country ZZ on an e-Ticket", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 4, CodigoPais: "ZZ", DocumentoExt: "123456"}
		}, "cfe.receptor.codigoPais", "ZZ"},
		{"mandante country QQ", ETicketCtaAjena, func(r *Request) {
			r.CFE.ComplementoFiscal = &RequestComplementoFiscal{TipoDocumento: 4, CodigoPais: "QQ",
				Documento: "123456", Nombre: "Mandante SA"}
		}, "cfe.complementoFiscal.codigoPais", "QQ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRequest(tt.typ)
			tt.mutate(r)
			_, err := issue(r)
			wantField(t, err, tt.campo, tt.value)
			if RespuestaOf(err) != RespRechazoValidacion || ErrorCode(err) != EINVALID {
				t.Errorf("codigo_respuesta %q code %q, want %q %q", RespuestaOf(err), ErrorCode(err), RespRechazoValidacion, EINVALID)
			}
		})
	}
}

// TestValidate_everyCodeOfDGIsListsIsAccepted: the check refuses codes
// outside DGI's lists, not codes in them (every currency, every country).
func TestValidate_everyCodeOfDGIsListsIsAccepted(t *testing.T) {
	t.Parallel()
	cur := dgiFacets["eFact/Encabezado/Totales/TpoMoneda"]
	pais := dgiFacets["eFact/Encabezado/Receptor/CodPaisRecep"]
	if cur == nil || pais == nil || len(cur.Enum) < 100 || len(pais.Enum) < 200 {
		t.Fatalf("the generated table has no currency or country list")
	}
	for _, code := range cur.Enum {
		r := validRequest(EFactura)
		r.CFE.Totales = &RequestTotales{TipoMoneda: code}
		if code != "UYU" {
			r.CFE.Totales.TipoCambio = decp("1.5")
		}
		if _, err := issue(r); err != nil {
			t.Errorf("currency %s: %v\n%s", code, err, describeFields(ErrorFields(err)))
		}
	}
	for _, code := range pais.Enum {
		if code == "UY" {
			continue // a foreign document of Uruguay is a rule of Validate's
		}
		r := validRequest(ETicket)
		r.CFE.Receptor = &RequestReceptor{TipoDocumento: 4, CodigoPais: code, DocumentoExt: "X1"}
		if _, err := issue(r); err != nil {
			t.Errorf("country %s: %v\n%s", code, err, describeFields(ErrorFields(err)))
		}
	}
}

// TestFacetType_check exercises each kind of facet on types of the generated
// table, values on both sides of each limit the XSD states.
func TestFacetType_check(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, value string
		fragment    string // "" when valid
	}{
		{"eTck/Encabezado/Totales/TpoMoneda", "USD", ""},
		{"eTck/Encabezado/Totales/TpoMoneda", "usd", "lista de DGI (TipMonType)"},
		{"eTck/Encabezado/Receptor/CodPaisRecep", "99", ""},
		{"eTck/Encabezado/Receptor/CodPaisRecep", "UYU", "exactamente 2 caracteres"},
		{"eTck/Encabezado/IdDoc/FmaPago", "2", ""},
		{"eTck/Encabezado/IdDoc/FmaPago", "3", "debe ser 1 o 2"},
		{"eTck/Encabezado/IdDoc/FmaPago", "02", ""}, // by value
		{"eTck/Encabezado/IdDoc/FmaPago", "x", "número entero"},
		{"eTck/Encabezado/Totales/IVATasaBasica", "22", ""},
		{"eTck/Encabezado/Totales/IVATasaBasica", "22.000", ""},
		{"eTck/Encabezado/Totales/IVATasaBasica", "23", "debe ser 10.000 o 22.000"},
		{"eTck/Encabezado/IdDoc/Serie", "1A", ""},
		{"eTck/Encabezado/IdDoc/Serie", "A1", "formato"},
		{"eTck/Encabezado/Emisor/RUCEmisor", "21999983001X", "formato"},
		{"eTck/Encabezado/Emisor/NomComercial", strings.Repeat("ñ", 30), ""},
		{"eTck/Encabezado/Emisor/NomComercial", strings.Repeat("ñ", 31), "como máximo 30 caracteres (tiene 31)"},
		{"eFact_Exp/Encabezado/Receptor/DocRecepExt", "  " + strings.Repeat("x", 20) + "  ", ""}, // collapse
		{"eFact_Exp/Encabezado/IdDoc/ClauVenta", "N/A", ""},
		{"eFact_Exp/Encabezado/IdDoc/ClauVenta", "F1", "formato"},
		{"eFact_Exp/Encabezado/IdDoc/ClauVenta", "FOBX", "como máximo 3 caracteres"},
		{"eTck/Encabezado/Totales/MntTotal", "999999999999999.99", ""},
		{"eTck/Encabezado/Totales/MntTotal", "1000000000000000", "como máximo 999999999999999.99"},
		{"eTck/Detalle/Item/Cantidad", "-12345678901234.567", ""},
		{"eTck/Detalle/Item/Cantidad", "123456789012345.678", "como máximo 17 dígitos"},
		{"eTck/Encabezado/Totales/MntTotal", "1.005", "como máximo 2 decimales"},
		{"eTck/Encabezado/Totales/MntTotal", "1.500", ""},
		{"eTck/Encabezado/Totales/MntTotal", "-1", "como mínimo 0"},
		{"eTck/Encabezado/Totales/TpoCambio", "0", "como mínimo 0.001"},
		{"eTck/Encabezado/Totales/TpoCambio", "10000", "como máximo 9999.999"},
		{"eTck/Encabezado/Totales/CantLinDet", "700", ""},
		{"eTck/Encabezado/Totales/CantLinDet", "701", "como máximo 700"},
		{"eTck/Encabezado/IdDoc/Nro", "9999999", ""},
		{"eTck/Encabezado/IdDoc/Nro", "10000000", "como máximo 7 dígitos"},
		{"eTck/Encabezado/IdDoc/FchEmis", "2011-10-01", ""},
		{"eTck/Encabezado/IdDoc/FchEmis", "2011-09-30", "desde 2011-10-01"},
		{"eTck/Encabezado/IdDoc/FchEmis", "2051-01-01", "hasta 2050-12-31"},
		{"eTck/Encabezado/IdDoc/FchEmis", "2026-02-30", "fecha AAAA-MM-DD"},
		{"eTck/TmstFirma", "2050-12-31T23:59:59-03:00", ""},
		{"eTck/TmstFirma", "2051-01-01T00:00:00-03:00", "hasta"},
		{"eTck/Detalle/Item/IndFact", "13", "debe ser"}, // 13 is an e-Boleta's only
		{"eBoleta/Detalle/Item/IndFact", "13", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path+"="+tt.value, func(t *testing.T) {
			ft := dgiFacets[tt.path]
			if ft == nil {
				t.Fatalf("no element %s in the generated table", tt.path)
			}
			got := ft.check(tt.value)
			switch {
			case tt.fragment == "" && got != "":
				t.Errorf("refused: %s", got)
			case tt.fragment != "" && !strings.Contains(got, tt.fragment):
				t.Errorf("got %q, want a message containing %q", got, tt.fragment)
			}
		})
	}
}

// TestRequestFields_coverEverySchemaElement: every element of simple content
// DGI's schema allows maps to a request field, except those numbering fills
// in and those the model has no field for (XSD 1.44 additions).
func TestRequestFields_coverEverySchemaElement(t *testing.T) {
	t.Parallel()
	notFromRequest := []string{"TmstFirma", "Encabezado/IdDoc/Nro", "CAEData/CAE_ID", "CAEData/DNro", "CAEData/HNro",
		"CAEData/FecVenc", "CAEData/CAEEspecial", "CAEData/CausalCAEEsp",
		"Referencia/Referencia/MntCFEref", "Referencia/Referencia/TpoMonedaRef", "Referencia/Referencia/TpoCambioRef"}
	for path := range dgiElements {
		_, rest, _ := strings.Cut(path, "/")
		if rest == "Encabezado/Emisor/Telefono" {
			rest += "[]"
		}
		if _, ok := requestFields[rest]; !ok && !slices.Contains(notFromRequest, rest) {
			t.Errorf("element %s maps to no request field", path)
		}
	}
	for key, tmpl := range requestFields {
		// Validate names the serie cfe.idDoc.serie although the request has none.
		if tmpl != "cfe.idDoc.serie" && !requestHasPath(strings.ReplaceAll(tmpl, "[]", "[0]")) {
			t.Errorf("%s maps to %s, which is not a field of the request", key, tmpl)
		}
	}
}

func TestRequestField(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Encabezado/Totales/TpoMoneda", "cfe.totales.tipoMoneda"},
		{"Detalle/Item[3]/CodItem[2]/Cod", "cfe.detalles[2].codigosItem[1].codigo"},
		{"Detalle/Item", "cfe.detalles"},
		{"Encabezado/Emisor/Telefono[2]", "cfe.emisor.telefonos[1]"},
		{"Encabezado/Emisor/Telefono", "cfe.emisor.telefonos"},
		{"CAEData/DNro", "CAEData/DNro"},
		{"Detalle/Item/NomItem", "Detalle/Item/NomItem"}, // a position is missing
	}
	for _, tt := range tests {
		if got := requestField(tt.in); got != tt.want {
			t.Errorf("requestField(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCheckXSDFacets_namesTheLineAndLeavesTheCFEAlone: a failing value in a
// list names its position; the CFE checked is not modified.
func TestCheckXSDFacets_namesTheLineAndLeavesTheCFEAlone(t *testing.T) {
	t.Parallel()
	r := validRequest(ETicket)
	r.CFE.Detalles = append(r.CFE.Detalles, r.CFE.Detalles[0])
	r.CFE.Detalles[1].CodigosItem = []RequestCodigoItem{{Tipo: "INT1", Codigo: "A"}, {Tipo: "INT1", Codigo: strings.Repeat("9", 36)}}
	c, err := r.ToCFE(testParams())
	if err != nil {
		t.Fatal(err)
	}
	before := c.Clone()
	fields := checkXSDFacets(c)
	if len(fields) != 1 || fields[0].Campo != "cfe.detalles[1].codigosItem[1].codigo" || !strings.Contains(fields[0].Mensaje, "35") {
		t.Fatalf("got %s", describeFields(fields))
	}
	if c.IdDoc.Serie != "" || c.IdDoc.Nro != 0 || c.CAEData.CAEID != "" || c.TmstFirma != before.TmstFirma {
		t.Errorf("the check changed the CFE: %+v", c.IdDoc)
	}
}

// TestCheckXSDFacets_seesWhatBuildXMLWrites: the facet walk checks exactly
// the elements of simple content BuildXML writes, with the same text, for a
// receipt of every type (with every optional zone the type admits).
func TestCheckXSDFacets_seesWhatBuildXMLWrites(t *testing.T) {
	t.Parallel()
	for _, typ := range ElectronicTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			r := validRequest(typ)
			info, _ := typ.Info()
			if info.Element == ElemTicket || info.Element == ElemFactura || info.Element == ElemBoleta {
				r.CFE.MediosPago = []RequestMedioPago{{Codigo: 1, Glosa: "Efectivo", Valor: dec("1")}}
				r.CFE.SubTotalesInfo = []RequestSubTotal{{Numero: 1, Glosa: "Subtotal", Valor: dec("1")}}
				r.CFE.Detalles[0].CodigosItem = []RequestCodigoItem{{Tipo: "INT1", Codigo: "A"}, {Tipo: "INT2", Codigo: "B"}}
			}
			c, err := issue(r)
			if err != nil {
				t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
			}
			c.Emisor.Telefono = []string{"29001234", "099123456"}
			var walked []string
			w := facetWalker{key: []byte(info.Element), trace: func(key, text string) { walked = append(walked, key+"="+text) }}
			d := *c
			d.IdDoc.Serie, d.IdDoc.Nro, d.CAEData, d.TmstFirma = "A", 1, placeholderCAEData, placeholderTmstFirma
			visitFacets(&w, cfeContent[info.Element], &d)
			if len(w.st.errs) > 0 {
				t.Fatalf("refused: %s", describeFields(w.st.errs))
			}
			doc, err := BuildXML(&d)
			if err != nil {
				t.Fatal(err)
			}
			var built []string
			var visit func(el *etree.Element, key string)
			visit = func(el *etree.Element, key string) {
				for _, k := range el.ChildElements() {
					if len(k.ChildElements()) == 0 {
						built = append(built, key+"/"+k.Tag+"="+k.Text())
					} else {
						visit(k, key+"/"+k.Tag)
					}
				}
			}
			typeEl := doc.Root().ChildElements()[0]
			visit(typeEl, typeEl.Tag)
			if !slices.Equal(walked, built) {
				t.Fatalf("the walk checked\n%s\nBuildXML wrote\n%s", strings.Join(walked, "\n"), strings.Join(built, "\n"))
			}
			if len(built) < 20 {
				t.Fatalf("only %d elements written", len(built))
			}
		})
	}
}

// TestValidate_xsdFacetsReportCausesNotConsequences: when a line breaks a
// rule the totals depend on, the totals are not computed; the facet check
// does not add their absence to the answer, but still reports codes outside
// DGI's lists.
func TestValidate_xsdFacetsReportCausesNotConsequences(t *testing.T) {
	t.Parallel()
	r := validRequest(ETicket)
	r.CFE.Detalles[0].IndicadorFacturacion = 99
	r.CFE.Totales = &RequestTotales{TipoMoneda: "ZZZ", TipoCambio: decp("40")}
	_, err := issue(r)
	wantField(t, err, "cfe.totales.tipoMoneda", "ZZZ")
	for _, f := range ErrorFields(err) {
		if f.Campo != "cfe.totales.tipoMoneda" && strings.HasPrefix(f.Campo, "cfe.totales.") {
			t.Errorf("consequence reported: %s: %s", f.Campo, f.Mensaje)
		}
	}
	if n := len(ErrorFields(err)); n != 2 {
		t.Errorf("%d field errors, want the line's indicator and the currency:\n%s", n, describeFields(ErrorFields(err)))
	}
}

func TestCanonicalNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		frac bool
		want string
		ok   bool
	}{
		{"12.5", true, "12.5", true},
		{"+.5", true, "0.5", true},
		{"-.50", true, "-0.5", true},
		{"007", false, "7", true},
		{"-0.00", true, "0", true},
		{"5.", true, "5", true},
		{"1.5", false, "", false},
		{"1e3", true, "", false},
	} {
		got, ok := canonicalNumber(tc.in, tc.frac)
		if got != tc.want || ok != tc.ok {
			t.Errorf("canonicalNumber(%q, %v) = %q, %v; want %q, %v", tc.in, tc.frac, got, ok, tc.want, tc.ok)
		}
	}
}
