package localapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestServer_StateStorage checks the disk policy over HTTP: the free-space
// thresholds (error under 20 MB; degraded under 200 MB, or under 5 % of the
// filesystem capped at 1 GB) and a failed last commit (error until one
// succeeds).
func TestServer_StateStorage(t *testing.T) {
	const mb, gb = 1 << 20, 1 << 30
	const dir = "/datos/store/caja1"
	failed := time.Date(2026, 5, 14, 18, 1, 2, 0, time.UTC)
	space := func(free, total uint64) *cfe.Storage {
		return &cfe.Storage{Dir: dir, FreeBytes: free, TotalBytes: total}
	}
	tests := []struct {
		name       string
		storage    *cfe.Storage
		wantStatus string
		wantWarn   string // the one warning; "" for none
		wantJSON   string
	}{
		{"not reported", nil, apitype.HealthOK, "", `"storage":null`},
		{"plenty", space(10*gb, 100*gb), apitype.HealthOK, "",
			`"storage":{"status":"ok","dir":"/datos/store/caja1","free_bytes":10737418240,"total_bytes":107374182400,"warnings":[]}`},
		{"large disk at the 1 GB cap", space(1*gb, 100*gb), apitype.HealthOK, "", ""},
		{"large disk under the 1 GB cap", space(1*gb-1, 100*gb), apitype.HealthDegraded,
			"quedan 1024,0 MB libres de 100,0 GB en el disco de los datos (/datos/store/caja1): libere espacio pronto", ""},
		{"small disk under 5 %", space(800*mb, 16*gb), apitype.HealthDegraded,
			"quedan 800,0 MB libres de 16,0 GB en el disco de los datos (/datos/store/caja1): libere espacio pronto", ""},
		{"small disk over 5 %", space(820*mb, 16*gb), apitype.HealthOK, "", ""},
		{"at 200 MB", space(200*mb, 1*gb), apitype.HealthOK, "", ""},
		{"under 200 MB", space(200*mb-1, 1*gb), apitype.HealthDegraded,
			"quedan 200,0 MB libres de 1,0 GB en el disco de los datos (/datos/store/caja1): libere espacio pronto", ""},
		{"at 20 MB", space(20*mb, 1*gb), apitype.HealthDegraded,
			"quedan 20,0 MB libres de 1,0 GB en el disco de los datos (/datos/store/caja1): libere espacio pronto", ""},
		{"under 20 MB", space(20*mb-1, 1*gb), apitype.HealthError,
			"quedan 20,0 MB libres de 1,0 GB en el disco de los datos (/datos/store/caja1): no alcanza para guardar comprobantes; libere espacio", ""},
		{"full", space(0, 256*mb), apitype.HealthError,
			"quedan 0 KB libres de 256,0 MB en el disco de los datos (/datos/store/caja1): no alcanza para guardar comprobantes; libere espacio", ""},
		{"space unknown", &cfe.Storage{Dir: dir, SpaceError: "no se pudo leer el espacio libre del disco de los datos"},
			apitype.HealthOK, "",
			`"storage":{"status":"ok","dir":"/datos/store/caja1","free_bytes":0,"total_bytes":0,"space_error":"no se pudo leer el espacio libre del disco de los datos","warnings":[]}`},
		{"last commit failed", &cfe.Storage{Dir: dir, FreeBytes: 10 * gb, TotalBytes: 100 * gb,
			LastWriteError: "error de entrada/salida del disco", LastWriteErrorAt: failed}, apitype.HealthError,
			"no se pudo guardar el último comprobante (14/05 15:01:02): error de entrada/salida del disco; " +
				"los comprobantes no se firman hasta que se pueda escribir en /datos/store/caja1",
			`"last_write_error":"error de entrada/salida del disco","last_write_error_at":"2026-05-14T15:01:02-03:00","warnings":["no se pudo guardar`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := healthyState()
			st.Storage = tc.storage
			ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
			resp, body := ts.send(t, request{path: "/health"})
			if want := map[bool]int{true: http.StatusOK, false: http.StatusServiceUnavailable}[tc.wantStatus != apitype.HealthError]; resp.StatusCode != want {
				t.Fatalf("/health: HTTP %d, want %d: %s", resp.StatusCode, want, body)
			}
			rep, err := ts.client.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if tc.wantWarn != "" {
				want = []string{tc.wantWarn}
			}
			if rep.Status != tc.wantStatus || rep.OK != (tc.wantStatus != apitype.HealthError) || !slices.Equal(rep.Warnings, want) {
				t.Fatalf("status %s (ok %v), warnings %q; want %s, %q", rep.Status, rep.OK, rep.Warnings, tc.wantStatus, want)
			}
			if tc.storage != nil && (rep.Storage == nil || rep.Storage.Status != tc.wantStatus || !slices.Equal(rep.Storage.Warnings, want)) {
				t.Fatalf("storage report %+v; want status %s, warnings %q", rep.Storage, tc.wantStatus, want)
			}
			if tc.wantJSON != "" {
				_, body := ts.send(t, request{path: "/state"})
				if !strings.Contains(string(body), tc.wantJSON) {
					t.Fatalf("/state lacks %s:\n%s", tc.wantJSON, body)
				}
			}
		})
	}
}

// TestServer_SignStorageFault checks that /sign-cfe shows the cashier the
// message of a failure that carries RespErrorInterno itself (the store's
// failed commit), and keeps the generic text for any other failure.
func TestServer_SignStorageFault(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantMsg string
	}{
		{"failed commit", &cfe.Error{Code: cfe.EUNAVAILABLE, Respuesta: cfe.RespErrorInterno, Err: syscall.ENOSPC,
			Message: "no se pudo guardar el comprobante: el disco está lleno (/d). No se firmó ni se consumió ningún número"},
			"no se pudo guardar el comprobante: el disco está lleno (/d). No se firmó ni se consumió ningún número"},
		{"unavailable without a code", &cfe.Error{Code: cfe.EUNAVAILABLE, Message: "otra cosa", Err: syscall.ENOSPC},
			"error interno del agente: no se firmó el comprobante."},
		{"internal with the code", &cfe.Error{Code: cfe.EINTERNAL, Respuesta: cfe.RespErrorInterno, Message: "detalle interno"},
			"error interno del agente: no se firmó el comprobante."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, func(c *localapi.ServerConfig) {
				c.Issuer = funcIssuer(func(context.Context, *cfe.Request) (*issuer.Result, error) { return nil, tc.err })
			})
			resp, body := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
				headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(ticket("u-1"))})
			res := signResponse(t, body)
			if resp.StatusCode != http.StatusOK || res.CodigoRespuesta != cfe.RespErrorInterno ||
				!strings.HasPrefix(res.MensajeRespuesta, tc.wantMsg) || strings.Contains(res.MensajeRespuesta, "no space left") {
				t.Fatalf("HTTP %d, %s %q", resp.StatusCode, res.CodigoRespuesta, res.MensajeRespuesta)
			}
		})
	}
}
