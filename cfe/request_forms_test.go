package cfe

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// ticketWith is an e-Ticket request body whose only line has the given JSON
// members (written as they are, after nombreItem and indicadorFacturacion),
// and whose cfe object ends with extra members when extra is not empty.
func ticketWith(line, extra string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return `{"uuid": "formas-1", "cfe": {"idDoc": {"tipoCfe": 101, "formaPago": 1},
		"detalles": [{"indicadorFacturacion": 3, "nombreItem": "Yerba", ` + line + `}]` + extra + `}}`
}

// TestDecodeRequest_decimalForms: an amount sent as a JSON string is read
// only in the plain form of the description's pattern; a JSON number in any
// of JSON's forms is read by its exact value. Each refused form names its
// field, and an accepted one reads as the value it writes.
func TestDecodeRequest_decimalForms(t *testing.T) {
	t.Parallel()
	if DecimalPattern != `^-?[0-9]+(\.[0-9]{1,30})?$` || maxNumberLen != 40 || maxExponent != 30 {
		t.Fatalf("DecimalPattern %q changed: the forms below test the old one", DecimalPattern)
	}
	pattern := regexp.MustCompile(DecimalPattern)
	// The places an amount goes: a pointer field, a value field, an alias,
	// a field of the totals and one of a nested list.
	places := []struct {
		campo string
		body  func(v string) string
	}{
		{"cfe.detalles[0].cantidad", func(v string) string { return ticketWith(`"cantidad": `+v+`, "precioUnitario": 1`, "") }},
		{"cfe.detalles[0].precioUnitario", func(v string) string { return ticketWith(`"cantidad": 1, "precioUnitario": `+v, "") }},
		{"cfe.detalles[0].subDescuentos[0].valor", func(v string) string {
			return ticketWith(`"cantidad": 1, "precioUnitario": 1, "subDescuentos": [{"tipo": 1, "valor": `+v+`}]`, "")
		}},
		{"cfe.totales.tipoCambio", func(v string) string {
			return ticketWith(`"cantidad": 1, "precioUnitario": 1`, `"totales": {"tipoCambio": `+v+`}`)
		}},
		{"cfe.mediosPago[0].valorPago", func(v string) string {
			return ticketWith(`"cantidad": 1, "precioUnitario": 1`, `"mediosPago": [{"valorPago": `+v+`}]`)
		}},
	}
	accepted := []struct{ json, value string }{
		{`"152.50"`, "152.5"}, {`"-3"`, "-3"}, {`"007"`, "7"}, {`"0.000"`, "0"}, {`"-0"`, "0"},
		{`152.50`, "152.5"}, {`1e3`, "1000"}, {`1E3`, "1000"}, {`1.5e+2`, "150"}, {`-2.5E-1`, "-0.25"},
		{`-0`, "0"}, {`0.1`, "0.1"}, {`"0.` + strings.Repeat("0", 29) + `1"`, "0." + strings.Repeat("0", 29) + "1"},
	}
	refused := []string{
		`"1e3"`, `"1E3"`, `"1.5e+2"`, `"+5"`, `".5"`, `"-.5"`, `"5."`, `" 5"`, `"5 "`, `"5\n"`, `"\t5"`, `""`,
		`"-"`, `"--1"`, `"1.2.3"`, `"1,5"`, `"0x10"`, `"NaN"`, `"Infinity"`, `"١٢"`, `"５"`,
		`[]`, `{}`, `[1]`, `true`, `false`,
		`"0.` + strings.Repeat("0", 30) + `1"`, `"` + strings.Repeat("9", 41) + `"`, `1e31`, `1e-31`,
	}
	for _, pl := range places {
		for _, a := range accepted {
			req, err := DecodeRequest(strings.NewReader(pl.body(a.json)))
			if err != nil {
				t.Errorf("%s = %s: refused: %v\n%s", pl.campo, a.json, err, describeFields(ErrorFields(err)))
				continue
			}
			if got := amountAt(req, pl.campo); got != a.value {
				t.Errorf("%s = %s: read as %s, want %s", pl.campo, a.json, got, a.value)
			}
		}
		for _, form := range refused {
			_, err := DecodeRequest(strings.NewReader(pl.body(form)))
			if ErrorCode(err) != EINVALID || RespuestaOf(err) != RespRechazoValidacion || !hasField(err, pl.campo) {
				t.Errorf("%s = %s: got %v, want 01 naming the field\n%s", pl.campo, form, err, describeFields(ErrorFields(err)))
			}
			var s string
			if json.Unmarshal([]byte(form), &s) == nil && pattern.MatchString(s) && len(s) <= maxNumberLen {
				t.Errorf("%s matches DecimalPattern: it does not belong with the refused forms", form)
			}
		}
	}
}

// amountAt returns the amount DecodeRequest read at one of the places of
// TestDecodeRequest_decimalForms, as a decimal string.
func amountAt(r *Request, campo string) string {
	rc := r.CFE
	switch campo {
	case "cfe.detalles[0].cantidad":
		return rc.Detalles[0].Cantidad.String()
	case "cfe.detalles[0].precioUnitario":
		return rc.Detalles[0].PrecioUnitario.String()
	case "cfe.detalles[0].subDescuentos[0].valor":
		return rc.Detalles[0].SubDescuentos[0].Valor.String()
	case "cfe.totales.tipoCambio":
		return rc.Totales.TipoCambio.String()
	case "cfe.mediosPago[0].valorPago":
		return rc.MediosPago[0].Valor.String()
	}
	panic("amountAt: " + campo)
}

// hasField reports whether err names campo.
func hasField(err error, campo string) bool {
	for _, f := range ErrorFields(err) {
		if f.Campo == campo {
			return true
		}
	}
	return false
}

// TestDecodeRequest_integerForms: an integer is a JSON number whose value is
// whole, in any of JSON's forms (the description's "integer"); a fraction, a
// string, an out-of-range value or another kind is refused naming the field.
func TestDecodeRequest_integerForms(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		json string
		want int64
	}{
		{`101`, 101}, {`101.0`, 101}, {`1.01e2`, 101}, {`10100E-2`, 101}, {`-0`, 0}, {`1e18`, 1e18},
		{`-9223372036854775808`, -9223372036854775808},
	} {
		req, err := DecodeRequest(strings.NewReader(`{"cfe": {"idDoc": {"tipoCfe": 101}, "referencias": [{"numero": ` + tt.json + `}]}}`))
		if err != nil {
			t.Errorf("numero %s: refused: %v", tt.json, err)
			continue
		}
		if got := req.CFE.Referencias[0].Numero; got != tt.want {
			t.Errorf("numero %s: read as %d, want %d", tt.json, got, tt.want)
		}
	}
	for _, form := range []string{`101.5`, `1.015e2`, `1e-2`, `"101"`, `1e19`, `9223372036854775808`, `1e31`, `[]`, `{}`, `true`} {
		_, err := DecodeRequest(strings.NewReader(`{"cfe": {"idDoc": {"tipoCfe": 101}, "referencias": [{"numero": ` + form + `}]}}`))
		wantField(t, err, "cfe.referencias[0].numero", "número entero")
	}
	// int fields are as wide as int64, and the same forms reach them.
	req, err := DecodeRequest(strings.NewReader(`{"cfe": {"idDoc": {"tipoCfe": 1.11e2, "formaPago": 2.0}}}`))
	if err != nil || req.CFE.IdDoc.TipoCfe != EFactura || req.CFE.IdDoc.FormaPago != 2 {
		t.Errorf("tipoCfe 1.11e2, formaPago 2.0: %+v, %v", req, err)
	}
}

// TestDecodeRequest_kinds: [] stands for an absent optional object (what PHP
// clients send for one); every other value of the wrong JSON kind, [] where
// an object is required, a list's element, an amount or a date included, is
// refused naming the field, as the description's schema does.
func TestDecodeRequest_kinds(t *testing.T) {
	t.Parallel()
	req, err := DecodeRequest(strings.NewReader(`{"cfe": {"idDoc": {"tipoCfe": 101}, "emisor": [], "receptor": [],
		"totales": [], "complementoFiscal": [], "detalles": [], "mediosPago": []}}`))
	if err != nil {
		t.Fatalf("PHP's empty arrays for absent objects: %v\n%s", err, describeFields(ErrorFields(err)))
	}
	if rc := req.CFE; rc.Emisor != nil || rc.Receptor != nil || rc.Totales != nil || rc.ComplementoFiscal != nil ||
		len(rc.Detalles) != 0 || len(rc.MediosPago) != 0 {
		t.Errorf("[] did not read as absent: %+v", rc)
	}
	for _, tt := range []struct{ cfe, campo, fragment string }{
		{`{"idDoc": []}`, "cfe.idDoc", "se espera un objeto"},
		{`{"receptor": "x"}`, "cfe.receptor", "se espera un objeto"},
		{`{"receptor": 5}`, "cfe.receptor", "se espera un objeto"},
		{`{"receptor": true}`, "cfe.receptor", "se espera un objeto"},
		{`{"receptor": [1]}`, "cfe.receptor", "se espera un objeto"},
		{`{"receptor": [{}]}`, "cfe.receptor", "se espera un objeto"},
		{`{"totales": ["x"]}`, "cfe.totales", "se espera un objeto"},
		{`{"detalles": [[]]}`, "cfe.detalles[0]", "se espera un objeto"},
		{`{"detalles": ["x"]}`, "cfe.detalles[0]", "se espera un objeto"},
		{`{"detalles": {}}`, "cfe.detalles", "se espera una lista"},
		{`{"detalles": "x"}`, "cfe.detalles", "se espera una lista"},
		{`{"mediosPago": [[]]}`, "cfe.mediosPago[0]", "se espera un objeto"},
		{`{"emisor": {"telefonos": {}}}`, "cfe.emisor.telefonos", "se espera una lista"},
		{`{"emisor": {"telefonos": [[]]}}`, "cfe.emisor.telefonos[0]", "se espera un texto"},
		{`{"detalles": [{"cantidad": []}]}`, "cfe.detalles[0].cantidad", "se espera un número"},
		{`{"totales": {"montoTotal": []}}`, "cfe.totales.montoTotal", "se espera un número"},
		{`{"totales": {"tipoCambio": {}}}`, "cfe.totales.tipoCambio", "se espera un número"},
		{`{"idDoc": {"fechaEmision": []}}`, "cfe.idDoc.fechaEmision", "AAAA-MM-DD"},
		{`{"idDoc": {"fechaEmision": {}}}`, "cfe.idDoc.fechaEmision", "AAAA-MM-DD"},
		{`{"referencias": [{"fecha": []}]}`, "cfe.referencias[0].fecha", "AAAA-MM-DD"},
		{`{"detalles": [{"nombreItem": []}]}`, "cfe.detalles[0].nombreItem", "se espera un texto"},
	} {
		_, err := DecodeRequest(strings.NewReader(`{"cfe": ` + tt.cfe + `}`))
		wantField(t, err, tt.campo, tt.fragment)
	}
	_, err = DecodeRequest(strings.NewReader(`{"cfe": "x"}`))
	wantField(t, err, "cfe", "se espera un objeto")
}

// TestToCFE_zeroQuantity: a line of quantity 0, in any of its forms, is
// refused naming it on every type whose lines carry a quantity; a free
// delivery (indicator 5, price 0) with its quantity, and a negative quantity
// that removes an item, are signed as before.
func TestToCFE_zeroQuantity(t *testing.T) {
	t.Parallel()
	for _, zero := range []string{`0`, `-0`, `0.000`, `0e5`, `"0"`, `"-0"`, `"0.000"`, `"-0.00"`} {
		for _, typ := range []Type{ETicket, EFactura, EFacturaExp, ERemito, ERemitoExp, EBoleta} {
			r := validRequest(typ)
			body, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var q = regexp.MustCompile(`"cantidad":"2"`)
			if !q.Match(body) {
				t.Fatalf("%s: the request has no quantity 2 to replace: %s", typ, body)
			}
			req, err := DecodeRequest(strings.NewReader(q.ReplaceAllLiteralString(string(body), `"cantidad":`+zero)))
			if err != nil {
				t.Fatalf("%s, cantidad %s: refused by the decoder: %v", typ, zero, err)
			}
			_, err = req.ToCFE(testParams())
			wantField(t, err, "cfe.detalles[0].cantidad", "distinta de 0")
		}
	}
	free := validRequest(ETicket)
	free.CFE.Detalles[0].IndicadorFacturacion, free.CFE.Detalles[0].PrecioUnitario = indGratuito, decp("0")
	c, err := issue(free)
	if err != nil || !c.Items[0].Cantidad.Equal(dec("2")) || !c.Items[0].MontoItem.IsZero() {
		t.Fatalf("a free delivery of 2: %v\n%s", err, describeFields(ErrorFields(err)))
	}
	removed := validRequest(ETicket)
	removed.CFE.Detalles = append(removed.CFE.Detalles, removed.CFE.Detalles[0])
	removed.CFE.Detalles[1].Cantidad = decp("-1")
	if _, err := issue(removed); err != nil {
		t.Fatalf("a line removing one of two items: %v\n%s", err, describeFields(ErrorFields(err)))
	}
}

// TestToCFE_remitoCurrency: an e-Remito, whose totals in DGI's schema carry
// no currency, refuses tipoMoneda and tipoCambio whatever their value instead
// of signing without them; the e-Remito de exportación and the e-Resguardo,
// whose totals have TpoMoneda and TpoCambio, keep them.
func TestToCFE_remitoCurrency(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		totales RequestTotales
		campos  []string
	}{
		{RequestTotales{TipoMoneda: "USD", TipoCambio: decp("40")}, []string{"cfe.totales.tipoMoneda", "cfe.totales.tipoCambio"}},
		{RequestTotales{TipoMoneda: "UYU"}, []string{"cfe.totales.tipoMoneda"}},
		{RequestTotales{TipoCambio: decp("1")}, []string{"cfe.totales.tipoCambio"}},
		{RequestTotales{TipoCambio: decp("0")}, []string{"cfe.totales.tipoCambio"}},
		{RequestTotales{TipoMoneda: "usd"}, []string{"cfe.totales.tipoMoneda"}},
	} {
		r := validRequest(ERemito)
		r.CFE.Totales = &tt.totales
		_, err := r.ToCFE(testParams())
		for _, campo := range tt.campos {
			wantField(t, err, campo, "no corresponde en e-Remito")
		}
		if n := len(ErrorFields(err)); n != len(tt.campos) {
			t.Errorf("%+v: %d field errors, want %d:\n%s", tt.totales, n, len(tt.campos), describeFields(ErrorFields(err)))
		}
	}
	r := validRequest(ERemito)
	r.CFE.Totales = &RequestTotales{CantidadLineasDetalle: 1}
	if _, err := issue(r); err != nil {
		t.Fatalf("an e-Remito with its line count only: %v", err)
	}
	for _, typ := range []Type{ERemitoExp, EResguardo} {
		r := validRequest(typ)
		r.CFE.Totales = &RequestTotales{TipoMoneda: "USD", TipoCambio: decp("40.125")}
		c, err := issue(r)
		if err != nil || c.Totales.TpoMoneda != "USD" || !c.Totales.TpoCambio.Equal(dec("40.125")) {
			t.Fatalf("%s in dollars: %v\n%s", typ, err, describeFields(ErrorFields(err)))
		}
	}
}

// TestToCFE_resguardoLineValues: an e-Resguardo line carries no quantity,
// price or amount; one sent is refused naming it, 0 included (it used to be
// dropped without a word when 0).
func TestToCFE_resguardoLineValues(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0", "1", "-0.000"} {
		for _, set := range []struct {
			campo string
			set   func(*RequestDetalle)
		}{
			{"cfe.detalles[0].cantidad", func(d *RequestDetalle) { d.Cantidad = decp(v) }},
			{"cfe.detalles[0].precioUnitario", func(d *RequestDetalle) { d.PrecioUnitario = decp(v) }},
			{"cfe.detalles[0].montoItem", func(d *RequestDetalle) { d.MontoItem = decp(v) }},
		} {
			r := validRequest(EResguardo)
			set.set(&r.CFE.Detalles[0])
			_, err := r.ToCFE(testParams())
			wantField(t, err, set.campo, "no corresponde en e-Resguardo")
		}
	}
	if _, err := issue(validRequest(EResguardo)); err != nil {
		t.Fatalf("an e-Resguardo without them: %v", err)
	}
}
