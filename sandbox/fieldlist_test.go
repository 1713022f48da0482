package sandbox_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestEmit_FieldListCapped sends an emission with 60 000 unknown fields: the
// rejection lists 20 of them and one "y 59980 más", in a small body.
func TestEmit_FieldListCapped(t *testing.T) {
	t.Parallel()
	e := start(t)
	var b strings.Builder
	b.WriteString(`{"uuid":"venta-campos","cfe":{`)
	for i := range 60000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"x%05d":0`, i)
	}
	b.WriteString("}}")
	r := e.do("POST", "/api/v1/comprobante/emitir", b.String(), "X-API-Key", keyBeta).expect(t, http.StatusBadRequest)
	if len(r.body) > 4096 {
		t.Fatalf("the answer to a %d-byte request with 60 000 faults is %d bytes, want at most 4 KiB", b.Len(), len(r.body))
	}
	body := r.errBody(t)
	if len(body.Details) != cfe.MaxListedFields+1 {
		t.Fatalf("%d details, want %d", len(body.Details), cfe.MaxListedFields+1)
	}
	if d := body.Details[0]; !strings.HasPrefix(d.Campo, "cfe.x") || d.Mensaje != "campo desconocido" {
		t.Errorf("first detail %+v, want an unknown cfe.x… field", d)
	}
	if d := body.Details[cfe.MaxListedFields]; d.Mensaje != "y 59980 más" {
		t.Errorf("last detail %+v, want \"y 59980 más\"", d)
	}
}
