package cfe

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sdkBody is shaped like the public PHP SDK's emission example: hosted-only
// top-level fields, PHP's empty arrays for omitted objects, nulls.
const sdkBody = `{
  "idEmpresa": 9, "codComercio": "Blue001", "codTerminal": "BT001", "adenda": "Mesa 4",
  "uuid": "b3c0e1a2-0000-4000-8000-000000000001", "destinatariosPdf": "", "origen": "3",
  "esAppMovil": 0, "idComprobanteGuardado": 0, "idVendedor": 0, "idCaja": null,
  "cfe": {
    "idDoc": {"tipoCfe": 111, "fechaEmision": "2026-02-12", "formaPago": 1},
    "emisor": [], "totales": [], "complementoFiscal": [],
    "receptor": {"tipoDocumento": 2, "documento": "214844360018", "documentoExt": null, "codigoPais": "UY",
      "razonSocial": "Cliente de Prueba", "direccion": "Avenida Siempre Viva 742", "ciudad": "Montevideo",
      "departamento": "Montevideo", "pais": "Uruguay", "codigoPostal": null,
      "informacionAdicional": "Informacion adicional del receptor", "lugarEntrega": "GLN123", "idCompraCliente": "12345"},
    "detalles": [{"numeroLineaDetalle": 1, "indicadorFacturacion": 3, "nombreItem": "Servicio",
      "unidadMedida": "N/A", "cantidad": 1, "precioUnitario": 122, "montoItem": 122}],
    "referencias": [], "descuentosRecargosGlobales": [], "mediosPago": [], "subTotalesInfo": []
  }
}`

func TestDecodeRequest_hostedBody(t *testing.T) {
	req, err := DecodeRequest(strings.NewReader(sdkBody))
	if err != nil {
		t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
	}
	if req.UUID != "b3c0e1a2-0000-4000-8000-000000000001" || req.Adenda != "Mesa 4" {
		t.Errorf("uuid %q adenda %q", req.UUID, req.Adenda)
	}
	rc := req.CFE
	if rc.Emisor != nil || rc.Totales != nil || rc.ComplementoFiscal != nil {
		t.Errorf("PHP empty arrays must read as absent objects: emisor %v totales %v complemento %v", rc.Emisor, rc.Totales, rc.ComplementoFiscal)
	}
	if rc.IdDoc.TipoCfe != EFactura || rc.IdDoc.FechaEmision.String() != "2026-02-12" || rc.IdDoc.FormaPago != 1 {
		t.Errorf("idDoc %+v", rc.IdDoc)
	}
	if rc.Receptor.Documento != "214844360018" || rc.Receptor.IdCompraCliente != "12345" || rc.Receptor.DocumentoExt != "" {
		t.Errorf("receptor %+v", rc.Receptor)
	}
	if d := rc.Detalles[0]; !d.PrecioUnitario.Equal(dec("122")) || !d.MontoItem.Equal(dec("122")) || d.UnidadMedida != "N/A" {
		t.Errorf("line %+v", d)
	}
	// Priced without IVA (no montoBruto): 122.00 net at 22 % → 26.84; total 148.84.
	c, err := req.ToCFE(testParams())
	if err != nil {
		t.Fatal(err)
	}
	if !c.Totales.MntTotal.Equal(dec("148.84")) || c.Adenda != "Mesa 4" {
		t.Errorf("total %s adenda %q", c.Totales.MntTotal, c.Adenda)
	}
	if err := Validate(c, DefaultTaxConfig()); err != nil {
		t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
	}
}

func TestDecodeRequest_amountsAreExact(t *testing.T) {
	body := `{"cfe": {"idDoc": {"tipoCfe": 101}, "detalles": [
	  {"cantidad": 0.1, "precioUnitario": 1234567890.123456},
	  {"cantidad": "3.333", "precioUnitario": "0.000001", "descuentoMonto": -1.5e1}]}}`
	req, err := DecodeRequest(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// Through float64 1234567890.123456 would read 1234567890.1234560013; 0.1 would not be 1/10.
	for _, c := range []struct{ got, want string }{
		{req.CFE.Detalles[0].PrecioUnitario.String(), "1234567890.123456"},
		{req.CFE.Detalles[0].Cantidad.Mul(dec("10")).String(), "1"},
		{req.CFE.Detalles[1].Cantidad.String(), "3.333"},
		{req.CFE.Detalles[1].PrecioUnitario.String(), "0.000001"},
		{req.CFE.Detalles[1].DescuentoMonto.String(), "-15"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestDecodeRequest_malformed(t *testing.T) {
	tests := []struct{ name, body, fragment string }{
		{"empty", "", "vacío"},
		{"truncated", `{"cfe": {"idDoc": `, "incompleto"},
		{"syntax", `{"cfe": x}`, "no es un JSON válido (error cerca del byte 9)"},
		{"array", `[]`, "debe ser un objeto JSON"},
		{"two objects", `{"cfe": {}} {}`, "único objeto JSON"},
		{"trailing garbage", `{"cfe": {}} x`, "único objeto JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(tt.body))
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tt.fragment) {
				t.Fatalf("got %v, want EINVALID with %q", err, tt.fragment)
			}
			if RespuestaOf(err) != RespRechazoValidacion {
				t.Errorf("codigo_respuesta %q", RespuestaOf(err))
			}
		})
	}
}

func TestDecodeRequest_fieldErrors(t *testing.T) {
	tests := []struct{ name, cfe, campo, fragment string }{
		{"type as text", `{"idDoc": {"tipoCfe": "111"}}`, "cfe.idDoc.tipoCfe", "número entero"},
		{"fractional integer", `{"idDoc": {"tipoCfe": 101.5}}`, "cfe.idDoc.tipoCfe", "número entero"},
		{"object expected", `{"idDoc": 5}`, "cfe.idDoc", "se espera un objeto"},
		{"list expected", `{"detalles": {}}`, "cfe.detalles", "se espera una lista"},
		{"text expected", `{"detalles": [{"nombreItem": 5}]}`, "cfe.detalles[0].nombreItem", "se espera un texto"},
		{"number expected", `{"detalles": [{}, {"cantidad": true}]}`, "cfe.detalles[1].cantidad", "se espera un número"},
		{"not a number", `{"detalles": [{"precioUnitario": "12,50"}]}`, "cfe.detalles[0].precioUnitario", "por ejemplo 1234.56"},
		{"huge exponent", `{"detalles": [{"cantidad": 1e31}]}`, "cfe.detalles[0].cantidad", "fuera de rango"},
		{"too many digits", `{"detalles": [{"cantidad": "` + strings.Repeat("9", 41) + `"}]}`, "cfe.detalles[0].cantidad", "fuera de rango"},
		{"date format", `{"idDoc": {"fechaEmision": "12/02/2026"}}`, "cfe.idDoc.fechaEmision", "AAAA-MM-DD"},
		{"impossible date", `{"idDoc": {"fechaEmision": "2026-02-30"}}`, "cfe.idDoc.fechaEmision", "AAAA-MM-DD"},
		{"unknown field in a line", `{"detalles": [{"precio": 10}]}`, "cfe.detalles[0].precio", "campo desconocido"},
		{"unknown field in cfe", `{"serie": "A"}`, "cfe.serie", "campo desconocido"},
		{"unknown nested field", `{"totales": {"retencionesPercepciones": [{"codigo": "1", "monto": 1}]}}`,
			"cfe.totales.retencionesPercepciones[0].monto", "campo desconocido"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(`{"cfe": ` + tt.cfe + `}`))
			wantField(t, err, tt.campo, tt.fragment)
		})
	}
}

func TestDecodeRequest_topLevel(t *testing.T) {
	_, err := DecodeRequest(strings.NewReader(`{"uuid": "x", "foo": 1}`))
	wantField(t, err, "cfe", "obligatorio")
	wantField(t, err, "foo", "campo desconocido")
	_, err = DecodeRequest(strings.NewReader(`{"cfe": []}`))
	wantField(t, err, "cfe", "obligatorio")
	// Several faults are reported together.
	_, err = DecodeRequest(strings.NewReader(`{"uuid": 5, "cfe": {"idDoc": {"tipoCfe": "x"}, "detalles": [{"cantidad": "y"}]}}`))
	for _, campo := range []string{"uuid", "cfe.idDoc.tipoCfe", "cfe.detalles[0].cantidad"} {
		wantField(t, err, campo, "se espera")
	}
}

// A request that json.Marshal writes from the Go shape reads back the same.
func TestDecodeRequest_roundTrip(t *testing.T) {
	for _, typ := range ElectronicTypes() {
		r := validRequest(typ)
		r.CFE.Detalles[0].CodigosItem = []RequestCodigoItem{{Tipo: "GTIN13", Codigo: "4006381333931"}}
		r.CFE.MediosPago = []RequestMedioPago{{NumeroLinea: 1, Codigo: 1, Glosa: "Efectivo", Valor: dec("300")}}
		body, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRequest(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v\n%s", typ, err, describeFields(ErrorFields(err)))
		}
		again, _ := json.Marshal(back)
		if !bytes.Equal(body, again) {
			t.Errorf("%s: round trip changed the request:\n%s\n%s", typ, body, again)
		}
	}
}

func TestRequest_ToCFE(t *testing.T) {
	t.Run("numbers lines and derives amounts", func(t *testing.T) {
		r := validRequest(ETicket)
		r.CFE.Detalles = []RequestDetalle{
			{IndicadorFacturacion: 3, NombreItem: "a", Cantidad: decp("3"), PrecioUnitario: decp("10"), DescuentoPorcentaje: decp("10")},
			{IndicadorFacturacion: 3, NombreItem: "b", Cantidad: decp("1"), PrecioUnitario: decp("20"), RecargoPorcentaje: decp("5"), UnidadMedida: "kg"},
		}
		r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 1, Glosa: "x", Valor: dec("1"), IndicadorFacturacion: 3}}
		r.CFE.MediosPago = []RequestMedioPago{{Glosa: "Efectivo", Valor: dec("50")}, {Glosa: "Tarjeta", Valor: dec("4")}}
		c, err := issue(r)
		if err != nil {
			t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
		}
		a, b := c.Items[0], c.Items[1]
		// 10 % of 3 × 10.00 = 3.00 → 27.00; 5 % of 20.00 = 1.00 → 21.00.
		if a.NroLinDet != 1 || b.NroLinDet != 2 || !a.DescuentoMonto.Equal(dec("3")) || !a.MontoItem.Equal(dec("27")) ||
			!b.RecargoMnt.Equal(dec("1")) || !b.MontoItem.Equal(dec("21")) {
			t.Errorf("lines %+v %+v", a, b)
		}
		if a.UniMed != "N/A" || b.UniMed != "kg" {
			t.Errorf("units %q %q", a.UniMed, b.UniMed)
		}
		if c.DscRcgGlobal[0].NroLinDR != 1 || c.MediosPago[1].NroLinMP != 2 {
			t.Errorf("zone D/E numbering %+v %+v", c.DscRcgGlobal, c.MediosPago)
		}
		// (27 + 21 − 1) = 47.00 net → IVA 10.34 → 57.34.
		if !c.Totales.MntPagar.Equal(dec("57.34")) || c.Totales.TpoMoneda != "UYU" || c.Totales.CantLinDet != 2 {
			t.Errorf("totals %+v", c.Totales)
		}
	})
	t.Run("issue date and signature time", func(t *testing.T) {
		r := validRequest(ETicket)
		r.CFE.IdDoc.FechaEmision = nil
		p := testParams()
		p.SignedAt = time.Date(2026, 11, 24, 1, 30, 0, 0, time.UTC) // 22:30 on the 23rd in Montevideo
		c, err := r.ToCFE(p)
		if err != nil {
			t.Fatal(err)
		}
		if c.IdDoc.FchEmis.String() != "2026-11-23" || !c.TmstFirma.Equal(p.SignedAt) {
			t.Errorf("FchEmis %s TmstFirma %s", c.IdDoc.FchEmis, c.TmstFirma)
		}
	})
	t.Run("emitter from the profile", func(t *testing.T) {
		r := validRequest(ETicket)
		r.CFE.Emisor = &RequestEmisor{RUC: testEmisor.RUCEmisor, CodigoSucursal: 1, NombreComercial: "Almacén Central",
			Telefonos: []string{"2400 1234"}, RazonSocial: testEmisor.RznSoc}
		c, err := issue(r)
		if err != nil {
			t.Fatal(err)
		}
		if c.Emisor.RUCEmisor != testEmisor.RUCEmisor || c.Emisor.NomComercial != "Almacén Central" ||
			c.Emisor.DomFiscal != testEmisor.DomFiscal || !reflect.DeepEqual(c.Emisor.Telefono, []string{"2400 1234"}) {
			t.Errorf("emisor %+v", c.Emisor)
		}
		r.CFE.Emisor = &RequestEmisor{CodigoSucursal: 7, Ciudad: "Salto"}
		_, err = r.ToCFE(testParams())
		wantField(t, err, "cfe.emisor.codigoSucursal", "no coincide con la empresa configurada en el agente (1)")
		wantField(t, err, "cfe.emisor.ciudad", "(Montevideo)")
	})
	t.Run("complemento fiscal takes the company's RUC", func(t *testing.T) {
		r := validRequest(EFacturaCtaAjena)
		c, err := issue(r)
		if err != nil {
			t.Fatal(err)
		}
		if c.ComplFiscal.RUCEmisor != testEmisor.RUCEmisor {
			t.Errorf("complemento RUC %q", c.ComplFiscal.RUCEmisor)
		}
		r.CFE.ComplementoFiscal.RUCEmisor = "214844360018"
		_, err = r.ToCFE(testParams())
		wantField(t, err, "cfe.complementoFiscal.rucEmisor", "219999830019")
	})
	t.Run("declared totals", func(t *testing.T) {
		// validRequest(ETicket): 2 × 150.00 basic → 300.00 + 66.00 IVA = 366.00.
		r := validRequest(ETicket)
		r.CFE.Totales = &RequestTotales{TipoMoneda: "UYU", MontoNetoIvaTasaBasica: decp("300"), TasaIvaBasica: decp("22.000"),
			MontoIvaTasaBasica: decp("66"), MontoTotal: decp("366.00"), MontoPagar: decp("366"), CantidadLineasDetalle: 1,
			MontoNoGravado: decp("0")}
		if _, err := issue(r); err != nil {
			t.Fatalf("agreeing totals: %v", err)
		}
		r.CFE.Totales = &RequestTotales{MontoIvaTasaBasica: decp("65.99"), MontoNoGravado: decp("1"), MontoPagar: decp("366")}
		_, err := r.ToCFE(testParams())
		wantField(t, err, "cfe.totales.montoIvaTasaBasica", "(66.00)")
		wantField(t, err, "cfe.totales.montoNoGravado", "no corresponde")
		if n := len(ErrorFields(err)); n != 2 {
			t.Errorf("%d field errors, want 2:\n%s", n, describeFields(ErrorFields(err)))
		}
	})
	t.Run("zero to pay when the sum is negative", func(t *testing.T) {
		r := validRequest(ETicket)
		r.CFE.IdDoc.IndicadorCobranzaPropia = 1
		r.CFE.Detalles[0].IndicadorFacturacion = indNoFactNeg
		r.CFE.Referencias = lineRefs(1)
		r.CFE.Totales = &RequestTotales{MontoPagar: decp("0"), MontoNoFacturable: decp("-300")}
		c, err := issue(r)
		if err != nil {
			t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
		}
		if !c.Totales.MntPagar.Equal(dec("-300")) {
			t.Errorf("MntPagar %s", c.Totales.MntPagar)
		}
	})
	t.Run("required quantities", func(t *testing.T) {
		r := validRequest(ETicket)
		r.CFE.Detalles[0].Cantidad, r.CFE.Detalles[0].PrecioUnitario = nil, nil
		_, err := r.ToCFE(testParams())
		wantField(t, err, "cfe.detalles[0].cantidad", "obligatoria")
		wantField(t, err, "cfe.detalles[0].precioUnitario", "obligatorio")
		_, err = (&Request{}).ToCFE(testParams())
		wantField(t, err, "cfe", "obligatorio")
		r = validRequest(ETicket)
		r.CFE.IdDoc.TipoCfe = 0
		_, err = r.ToCFE(testParams())
		wantField(t, err, "cfe.idDoc.tipoCfe", "obligatorio")
	})
	t.Run("model shares no memory with the request", func(t *testing.T) {
		r := validRequest(ETicket)
		r.CFE.Detalles[0].DescuentoPorcentaje = decp("10")
		r.CFE.IdDoc.PeriodoDesde = datep("2026-11-01")
		c, err := r.ToCFE(testParams())
		if err != nil {
			t.Fatal(err)
		}
		*r.CFE.Detalles[0].DescuentoPorcentaje = dec("50")
		*r.CFE.IdDoc.PeriodoDesde = Date{2020, 1, 1}
		if !c.Items[0].DescuentoPct.Equal(dec("10")) || c.IdDoc.PeriodoDesde.String() != "2026-11-01" {
			t.Errorf("the CFE changed with the request: %s %s", c.Items[0].DescuentoPct, c.IdDoc.PeriodoDesde)
		}
	})
	t.Run("e-Remito has no currency", func(t *testing.T) {
		c, err := issue(validRequest(ERemito))
		if err != nil {
			t.Fatal(err)
		}
		if c.Totales.TpoMoneda != "" || c.Totales.MntTotal != nil || c.Totales.CantLinDet != 1 {
			t.Errorf("totals %+v", c.Totales)
		}
	})
}

// requestHasPath reports whether path (cfe.detalles[2].cantidad) names a field
// of the request shape: every Campo must be something the caller can find.
func requestHasPath(path string) bool {
	typ := reflect.TypeFor[Request]()
	for _, seg := range strings.Split(path, ".") {
		name, _, indexed := strings.Cut(seg, "[")
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			return false
		}
		f, ok := jsonFields(typ).byName[name]
		if !ok || f.ignored {
			return false
		}
		typ = typ.Field(f.index).Type
		if indexed {
			if typ.Kind() != reflect.Slice {
				return false
			}
			typ = typ.Elem()
		}
	}
	return true
}

func TestValidate_fieldPathsNameRequestFields(t *testing.T) {
	// Serie and number are assigned by the issuer, not sent.
	issuerAssigned := map[string]bool{"cfe.idDoc.serie": true, "cfe.idDoc.numero": true}
	r := validRequest(EFacturaExp)
	r.CFE.IdDoc.ClausulaVenta, r.CFE.Receptor.Pais = "", ""
	r.CFE.Detalles[0].IndicadorFacturacion = 3
	r.CFE.Detalles[0].CodigosItem = []RequestCodigoItem{{Tipo: "EAN", Codigo: ""}}
	r.CFE.Detalles[0].RetencionesPercepciones = []RequestRetencion{{Codigo: "x"}}
	r.CFE.Referencias = []RequestReferencia{{IndicadorGlobal: 2, Serie: "a"}}
	r.CFE.SubTotalesInfo = []RequestSubTotal{{Numero: 30}}
	r.CFE.MediosPago = []RequestMedioPago{{Orden: 100}}
	r.CFE.ComplementoFiscal = &RequestComplementoFiscal{}
	c, err := r.ToCFE(testParams())
	if err == nil {
		c.IdDoc.Serie = "ñ"
		err = Validate(c, DefaultTaxConfig())
	}
	fields := ErrorFields(err)
	if len(fields) < 10 {
		t.Fatalf("want many field errors, got:\n%s", describeFields(fields))
	}
	for _, f := range fields {
		if !issuerAssigned[f.Campo] && !requestHasPath(f.Campo) {
			t.Errorf("Campo %q is not a field of the request (%s)", f.Campo, f.Mensaje)
		}
	}
	for _, p := range []string{"cfe.detalles[3].cantidad", "cfe.totales.montoPagar", "cfe.receptor.documentoExt"} {
		if !requestHasPath(p) {
			t.Errorf("requestHasPath(%q) = false", p)
		}
	}
	for _, p := range []string{"cfe.detalles.cantidad[0]", "cfe.totales.MntPagar", "cfe.idDoc.Serie"} {
		if requestHasPath(p) {
			t.Errorf("requestHasPath(%q) = true", p)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, typ := range ElectronicTypes() {
		body, err := json.Marshal(validRequest(typ))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Add([]byte(sdkBody))
	f.Add([]byte(`{"cfe": {"idDoc": {"tipoCfe": 101, "montoBruto": 1}, "detalles": [{"indicadorFacturacion": 3, "cantidad": "1e3", "precioUnitario": -1}]}}`))
	f.Add([]byte(`{"cfe": []}`))
	f.Add([]byte(`{"cfe": {"idDoc": {"tipoCfe": 1.01e2}, "receptor": [], "detalles": [{"cantidad": "+5", "precioUnitario": ".5", "montoItem": "5."}]}}`))
	f.Add([]byte(`{"cfe": {"idDoc": [], "detalles": [[], {"cantidad": "-0", "precioUnitario": " 1"}], "totales": {"montoTotal": []}}}`))
	f.Add([]byte(`{"cfe": {"idDoc": {"tipoCfe": 181}, "totales": {"tipoMoneda": "USD", "tipoCambio": "40"}, "detalles": [{"nombreItem": "x", "cantidad": 0.000}]}}`))
	f.Add([]byte(`[{"cfe": null}]`))
	f.Add([]byte(`{"uuid":"x","adenda":"\ud800","cfe":{}}`))
	f.Add([]byte("{\"cfe\":{\"detalles\":[{\"nombreItem\":\"Caf\xe9\"}]}}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRequest(bytes.NewReader(body))
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("DecodeRequest: %v (code %s), want EINVALID", err, ErrorCode(err))
			}
			return
		}
		// Nothing the caller sent was replaced: a U+FFFD in the request must
		// have been in the body already, literally or as an escape.
		decoded, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(decoded, []byte("\uFFFD")) && !bytes.Contains(body, []byte("\uFFFD")) &&
			!bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`)) {
			t.Fatalf("text was silently replaced by U+FFFD: %q decoded as %s", body, decoded)
		}
		c, err := req.ToCFE(testParams())
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("ToCFE: %v (code %s), want EINVALID", err, ErrorCode(err))
			}
			return
		}
		if err := Validate(c, DefaultTaxConfig()); err != nil && ErrorCode(err) != EINVALID {
			t.Fatalf("Validate: %v (code %s), want EINVALID", err, ErrorCode(err))
		}
	})
}
