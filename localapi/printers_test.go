package localapi_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// printerList answers a fixed listing, or an error.
type printerList struct {
	rep *apitype.PrintersReport
	err error
}

func (p printerList) Printers(context.Context) (*apitype.PrintersReport, error) { return p.rep, p.err }

func TestServer_Printers(t *testing.T) {
	listing := &apitype.PrintersReport{Profile: "caja1",
		Aliases: []apitype.PrinterAlias{
			{Name: "archivo", Backend: "dir", Target: "/var/pdf", Protocol: "pdf"},
			{Name: "mostrador", Backend: "cups", Target: "Star_TSP100", Protocol: "pdf", Default: true,
				State: apitype.PrinterStopped, Reason: "Sin papel"},
		},
		System: apitype.SystemPrinters{Source: "cups", Printers: []apitype.SystemPrinter{{Name: "Star_TSP100",
			Description: "Caja", State: apitype.PrinterStopped, Reason: "Sin papel", AcceptingJobs: true, Default: true}}},
	}
	tests := []struct {
		name    string
		list    localapi.PrinterList
		headers map[string]string
		status  int
		want    map[string]any // top-level keys and, for errors, the message
	}{
		{name: "the listing", list: printerList{rep: listing}, status: http.StatusOK},
		{name: "no listing configured", status: http.StatusServiceUnavailable,
			want: map[string]any{"ok": false, "error": "la lista de impresoras no está disponible en este agente"}},
		{name: "the listing fails", list: printerList{err: cfe.Errorf(cfe.EUNAVAILABLE, "perfil sin impresoras legibles")},
			status: http.StatusServiceUnavailable, want: map[string]any{"ok": false, "error": "perfil sin impresoras legibles"}},
		{name: "an internal failure is not shown", list: printerList{err: errors.New("secreto interno")},
			status: http.StatusInternalServerError},
		{name: "another site's page is refused", list: printerList{rep: listing},
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, status: http.StatusForbidden},
		{name: "a foreign origin is refused", list: printerList{rep: listing},
			headers: map[string]string{"Origin": "https://evil.example"}, status: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, func(c *localapi.ServerConfig) { c.PrinterList = tt.list })
			resp, body := ts.send(t, request{path: "/printers", headers: tt.headers})
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			got := decodeObject(t, body)
			for k, v := range tt.want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			if resp.StatusCode == http.StatusInternalServerError && got["error"] == "secreto interno" {
				t.Error("an internal error reached the client")
			}
			if resp.StatusCode != http.StatusOK {
				return
			}
			if got["ok"] != true || got["profile"] != "caja1" {
				t.Errorf("ok %v profile %v, want true caja1", got["ok"], got["profile"])
			}
			rep, err := ts.client.Printers(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := *listing
			want.OK = true
			if !reflect.DeepEqual(*rep, want) {
				t.Errorf("client read %+v, want %+v", *rep, want)
			}
			// A folder alias has no state: the key is absent, not "".
			alias := got["aliases"].([]any)[0].(map[string]any)
			if _, ok := alias["state"]; ok {
				t.Errorf("folder alias %v carries a state", alias)
			}
		})
	}

	t.Run("empty lists are arrays", func(t *testing.T) {
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.PrinterList = printerList{rep: &apitype.PrintersReport{Profile: "caja1",
				System: apitype.SystemPrinters{Source: "cups", Error: "no se pudo consultar CUPS en localhost:631"}}}
		})
		_, body := ts.send(t, request{path: "/printers"})
		got := decodeObject(t, body)
		sys := got["system"].(map[string]any)
		if a, ok := got["aliases"].([]any); !ok || len(a) != 0 {
			t.Errorf("aliases = %v, want []", got["aliases"])
		}
		if p, ok := sys["printers"].([]any); !ok || len(p) != 0 || sys["error"] != "no se pudo consultar CUPS en localhost:631" {
			t.Errorf("system = %v, want no printers and the error", sys)
		}
	})

	t.Run("POST is not allowed", func(t *testing.T) {
		ts := startServer(t, func(c *localapi.ServerConfig) { c.PrinterList = printerList{rep: listing} })
		resp, _ := ts.send(t, request{method: http.MethodPost, path: "/printers",
			headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody("{}")})
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET" {
			t.Errorf("status %d Allow %q, want 405 GET", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}
