package localapi_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/printing"
)

// TestPDF_UnreadableCFE: the stored XML of e-Ticket A-1 had a bit flipped
// while the agent was stopped. POST /pdf for it, by uuid or by number,
// answers 503 {ok:false,error} saying that the stored receipt is damaged
// and how to recover it, instead of a 500; a repeated /sign-cfe of its uuid
// answers the same reason (codigo_respuesta 99, as every functional outcome
// with 200) and signs nothing; A-2 still prints and the
// next sale gets A-3. (Not parallel: it sets TZ, as startServer does.)
func TestPDF_UnreadableCFE(t *testing.T) {
	t.Setenv("TZ", "America/Montevideo") // the issuer's zone check; startServer sets it too
	path := filepath.Join(t.TempDir(), "agent.db")
	db, iss := signingPartsAt(t, path, now.AddDate(0, -1, 0))
	for _, u := range []string{"venta-0001", "venta-0002"} {
		req, err := cfe.DecodeRequest(strings.NewReader(ticket(u)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := iss.Issue(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	testtool.DamageStoredCFE(t, path, "venta-0001", testtool.StoredXML)

	db, iss = signingPartsAt(t, path, now.AddDate(0, -1, 0))
	dir := t.TempDir()
	printers, err := printer.NewManager(printer.Config{Printers: map[string]printer.PrinterConfig{
		"mostrador": {Backend: printer.BackendDir, Dir: dir}}})
	if err != nil {
		t.Fatal(err)
	}
	templates, err := pdf.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := printing.New(printing.Config{Store: db, Templates: templates, Printers: printers, DefaultTemplate: "Rollo"})
	ts := startServer(t, func(c *localapi.ServerConfig) { c.Issuer, c.Printing = iss, svc })
	a := &printAgent{agent: &agent{testServer: ts, db: db}, dirs: map[string]string{"mostrador": dir}}

	for _, body := range []string{
		`{"uuid":"venta-0001","impresora":"mostrador"}`,
		`{"tipo_cfe":101,"serie":"a","numero":1,"impresora":"mostrador"}`,
	} {
		resp, b := a.print(t, body)
		wantError(t, resp, b, http.StatusServiceUnavailable, "el comprobante e-Ticket A-1", "está dañado",
			"copia de seguridad", "cfe-agent recuperar venta-0001")
	}
	if files := a.files(t, "mostrador"); len(files) != 0 {
		t.Fatalf("a damaged CFE printed %v", files)
	}
	if _, _, added := a.printed(t, "mostrador", `{"uuid":"venta-0002","impresora":"mostrador"}`); len(added) != 1 {
		t.Fatalf("the intact A-2 printed %v", added)
	}

	status, b := a.sign(t, ticket("venta-0001"))
	r := signResponse(t, b)
	if status != http.StatusOK || r.CodigoRespuesta != cfe.RespErrorInterno ||
		!strings.Contains(r.MensajeRespuesta, "e-Ticket A-1") || !strings.Contains(r.MensajeRespuesta, "está dañado") {
		t.Fatalf("a repeated uuid of the damaged CFE: %d %s", status, b)
	}
	if status, b := a.sign(t, ticket("venta-0003")); status != http.StatusOK || signResponse(t, b).Numero != 3 {
		t.Fatalf("the next sale: %d %s, want A-3", status, b)
	}
}
