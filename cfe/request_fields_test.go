package cfe

import (
	"encoding/json"
	"strings"
	"testing"
)

// bodyWith builds a request body that holds path ("cfe.detalles[].cantidad")
// with a null value, the decoder's "absent".
func bodyWith(path string) []byte {
	var v any // the value at the end of the path
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		name, list := strings.CutSuffix(parts[i], "[]")
		if i < len(parts)-1 && list {
			v = []any{v}
		}
		v = map[string]any{name: v}
	}
	b, _ := json.Marshal(v)
	return b
}

// unknownField reports whether DecodeRequest refuses body's field campo as unknown.
func unknownField(body []byte, campo string) bool {
	_, err := DecodeRequest(strings.NewReader(string(body)))
	for _, f := range ErrorFields(err) {
		if f.Mensaje == "campo desconocido" && strings.Contains(f.Campo, campo) {
			return true
		}
	}
	return false
}

// TestRequestFields lists what the decoder accepts: each name it reports is
// accepted by DecodeRequest, and the list holds the fields, the hosted
// integrations' aliases and the ignored names documented in README.
func TestRequestFields(t *testing.T) {
	fields := RequestFields()
	byPath := map[string]RequestField{}
	for _, f := range fields {
		if _, dup := byPath[f.Path]; dup {
			t.Errorf("%s listed twice", f.Path)
		}
		byPath[f.Path] = f
		last := f.Path[strings.LastIndex(f.Path, ".")+1:]
		if unknownField(bodyWith(f.Path), last) {
			t.Errorf("RequestFields lists %s, but DecodeRequest refuses it as unknown", f.Path)
		}
	}
	if !unknownField(bodyWith("cfe.detalles[].precioUnitari"), "precioUnitari") {
		t.Fatal("DecodeRequest accepts a misspelt field: the check above proves nothing")
	}
	for _, want := range []RequestField{
		{Path: "uuid", Kind: FieldCanonical},
		{Path: "cfe.idDoc.tipoCfe", Kind: FieldCanonical},
		{Path: "cfe.detalles[].precioUnitario", Kind: FieldCanonical},
		{Path: "cfe.detalles[].retencionesPercepciones[].montoSujeto", Kind: FieldCanonical},
		{Path: "cfe.mediosPago[].valorPago", Kind: FieldAlias, Of: "cfe.mediosPago[].valor"},
		{Path: "cfe.referencias[].tipoDocumentoReferencia", Kind: FieldAlias, Of: "cfe.referencias[].tipoCfe"},
		{Path: "cfe.mediosPago[].proveedorPos", Kind: FieldIgnored},
		{Path: "cfe.referencias[].tipoMonedaCfeReferencia", Kind: FieldIgnored},
		{Path: "idEmpresa", Kind: FieldIgnored},
	} {
		if got := byPath[want.Path]; got != want {
			t.Errorf("%s: got %+v, want %+v", want.Path, got, want)
		}
	}
}
