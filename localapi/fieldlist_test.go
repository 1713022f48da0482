package localapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// manyUnknownFields is a signing request whose cfe object has n fields the
// request shape does not know.
func manyUnknownFields(n int) string {
	var b strings.Builder
	b.WriteString(`{"uuid":"venta-campos","cfe":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"x%05d":0`, i)
	}
	b.WriteString("}}")
	return b.String()
}

// TestServer_SignCFE_FieldListCapped sends 60 000 unknown fields over real
// HTTP: the rejection lists 20 of them and one "y 59980 más", in a body a
// few kilobytes long instead of megabytes.
func TestServer_SignCFE_FieldListCapped(t *testing.T) {
	ts := startServer(t, nil)
	body := manyUnknownFields(60000)
	resp, raw := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(body)})
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400\n%.500s", resp.StatusCode, raw)
	}
	if len(raw) > 4096 {
		t.Fatalf("the answer to a %d-byte request with 60 000 faults is %d bytes, want at most 4 KiB", len(body), len(raw))
	}
	m := decodeObject(t, raw)
	errs, _ := m["errores"].([]any)
	if m["codigo_respuesta"] != "01" || len(errs) != cfe.MaxListedFields+1 {
		t.Fatalf("codigo %v with %d errores, want 01 with %d", m["codigo_respuesta"], len(errs), cfe.MaxListedFields+1)
	}
	first, _ := errs[0].(map[string]any)
	if !strings.HasPrefix(fmt.Sprint(first["campo"]), "cfe.x") || first["mensaje"] != "campo desconocido" {
		t.Errorf("first entry %v, want an unknown cfe.x… field", first)
	}
	last, _ := errs[len(errs)-1].(map[string]any)
	if last["mensaje"] != "y 59980 más" {
		t.Errorf("last entry %v, want \"y 59980 más\"", last)
	}
}
