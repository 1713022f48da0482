package health_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestReport: the whole report from the identity, the zone and the facts;
// a wrong zone and facts that could not be read are errors, the latter
// with its own message only when the technician can act on it.
func TestReport(t *testing.T) {
	t.Parallel()
	zone := apitype.ZoneReport{OK: true, Nombre: "America/Montevideo", Desfase: "-03:00", Mensaje: "correcta"}
	id := health.Identity{BaseURL: "http://127.0.0.1:18787", URLs: []string{"http://127.0.0.1:18787"}, Version: "1.2.3",
		Profile: "caja1", Environment: "sandbox", Zone: zone}
	damaged := &cfe.Error{Code: cfe.EUNAVAILABLE, Respuesta: cfe.RespErrorInterno, Message: "el archivo de datos está dañado"}
	wrong := apitype.ZoneReport{Nombre: "UTC", Desfase: "+00:00", Mensaje: "la zona horaria debe ser America/Montevideo"}
	tests := []struct {
		name       string
		zone       apitype.ZoneReport
		err        error
		wantOK     bool
		wantStatus string
		wantWarn   []string
	}{
		{"healthy", zone, nil, true, apitype.HealthOK, []string{}},
		{"wrong zone", wrong, nil, false, apitype.HealthError, []string{wrong.Mensaje}},
		{"facts unreadable", zone, errors.New("bolt: input/output error"), false, apitype.HealthError,
			[]string{"no se pudo leer el estado del agente"}},
		{"damaged store", zone, damaged, false, apitype.HealthError,
			[]string{"no se pudo leer el estado del agente: el archivo de datos está dañado"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := id
			id.Zone = tc.zone
			rep := health.Report(id, healthy(), tc.err, now)
			if rep.OK != tc.wantOK || rep.Status != tc.wantStatus || !slices.Equal(rep.Warnings, tc.wantWarn) {
				t.Fatalf("ok %v, status %s, warnings %q; want %v, %s, %q", rep.OK, rep.Status, rep.Warnings,
					tc.wantOK, tc.wantStatus, tc.wantWarn)
			}
			if rep.BaseURL != id.BaseURL || rep.Version != "1.2.3" || rep.Profile != "caja1" || rep.Environment != "sandbox" ||
				rep.ZonaHoraria != tc.zone || !slices.Equal(rep.URLs, id.URLs) {
				t.Fatalf("identity %+v, urls %v", rep.HealthReport, rep.URLs)
			}
			if (tc.err == nil) != (len(rep.CAE) == 1) {
				t.Fatalf("%d CAE types reported with facts error %v", len(rep.CAE), tc.err)
			}
		})
	}
}
