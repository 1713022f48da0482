package localapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/printing"
)

// cierreDocsApp is the application side of the close's documents in these
// tests: it counts how often the routes reached it.
type cierreDocsApp struct {
	Caja
	calls atomic.Int32
}

func (a *cierreDocsApp) CierrePDF(context.Context, cfe.Date, string) ([]byte, error) {
	a.calls.Add(1)
	return []byte("%PDF-1.4"), nil
}

func (a *cierreDocsApp) ImprimirCierre(context.Context, cfe.Date, string) (printing.PrintResult, error) {
	a.calls.Add(1)
	return printing.PrintResult{Printer: "termica", Format: printing.FormatESCPOS}, nil
}

// TestCierreDocs_refused: GET /cierre/pdf and POST /cierre/imprimir refuse
// a missing or bad date with 400 and a Spanish reason, and the print refuses a
// request that is not from a /caja page this module served (403), all
// before the application is asked anything; a good request reaches it.
func TestCierreDocs_refused(t *testing.T) {
	t.Parallel()
	app := &cierreDocsApp{}
	s := NewServer(ServerConfig{Listen: "127.0.0.1:0", Issuer: noIssuer{}, State: emptyState{}, Caja: app})
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	do := func(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://127.0.0.1:18787"+path, strings.NewReader(body))
		req.RemoteAddr = "127.0.0.1:50000"
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, req)
		return rec
	}
	page := do(http.MethodGet, "/caja", "", nil)
	m := regexp.MustCompile(`data-pagina="([^"]+)"`).FindStringSubmatch(page.Body.String())
	if page.Code != http.StatusOK || m == nil {
		t.Fatalf("GET /caja: %d, no page token", page.Code)
	}
	fromPage := map[string]string{"Origin": "http://127.0.0.1:18787", "Sec-Fetch-Site": "same-origin", headerPageToken: m[1]}
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
		says                     string // in the Spanish message
	}{
		{"pdf without a date", http.MethodGet, "/cierre/pdf", "", nil, http.StatusBadRequest, "la fecha del cierre"},
		{"pdf with a bad date", http.MethodGet, "/cierre/pdf?fecha=2026-02-30", "", nil, http.StatusBadRequest, "la fecha del cierre"},
		{"pdf with a date in another format", http.MethodGet, "/cierre/pdf?fecha=28/11/2026", "", nil, http.StatusBadRequest, "la fecha del cierre"},
		{"print with a bad date", http.MethodPost, "/cierre/imprimir", `{"fecha":"2026-13-01"}`, fromPage, http.StatusBadRequest, "la fecha del cierre"},
		{"print without a date", http.MethodPost, "/cierre/imprimir", `{"impresora":"termica"}`, fromPage, http.StatusBadRequest, "la fecha del cierre"},
		{"print with an unknown field", http.MethodPost, "/cierre/imprimir", `{"fecha":"2026-11-28","copias":2}`, fromPage, http.StatusBadRequest, "copias"},
		{"print not from the page", http.MethodPost, "/cierre/imprimir", `{"fecha":"2026-11-28"}`, nil, http.StatusForbidden, "solo la página de caja"},
		{"print with a forged page token", http.MethodPost, "/cierre/imprimir", `{"fecha":"2026-11-28"}`,
			map[string]string{"Origin": "http://127.0.0.1:18787", headerPageToken: "1.x"}, http.StatusForbidden, "recárguela"},
	} {
		rec := do(tc.method, tc.path, tc.body, tc.hdr)
		if rec.Code != tc.want {
			t.Fatalf("%s: %d, want %d: %s", tc.name, rec.Code, tc.want, rec.Body)
		}
		if !strings.Contains(rec.Body.String(), tc.says) {
			t.Fatalf("%s: the answer does not say %q: %s", tc.name, tc.says, rec.Body)
		}
	}
	if n := app.calls.Load(); n != 0 {
		t.Fatalf("refused requests reached the application %d times", n)
	}
	if rec := do(http.MethodGet, "/cierre/pdf?fecha=2026-11-28", "", nil); rec.Code != http.StatusOK ||
		rec.Header().Get("Content-Type") != "application/pdf" {
		t.Fatalf("a good PDF request: %d %v", rec.Code, rec.Header())
	}
	rec := do(http.MethodPost, "/cierre/imprimir", `{"fecha":"2026-11-28"}`, fromPage)
	var got CierreImpreso
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil || !got.Impreso || got.Formato != "escpos" {
		t.Fatalf("a good print request: %d %s", rec.Code, rec.Body)
	}
	if n := app.calls.Load(); n != 2 {
		t.Fatalf("the good requests reached the application %d times, want 2", n)
	}
}
