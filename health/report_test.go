package health_test

import (
	"encoding/json"
	"errors"
	"maps"
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

// TestReport_wireOfFacts: the wire types embed the facts' types, and the
// JSON they write is the one /state always wrote: absent what the record
// does not say, no field of the facts that the wire does not show.
func TestReport_wireOfFacts(t *testing.T) {
	t.Parallel()
	st := healthy()
	st.Outbox = cfe.Outbox{Pending: 1, Quarantined: 1, OldestPending: now, Quarantine: []cfe.Quarantined{
		{UUID: "u-9", Since: now, Reason: "su registro no se puede leer"}}}
	st.Storage = &cfe.Storage{Dir: "/datos", FreeBytes: 1 << 30, TotalBytes: 1 << 40}
	rep := health.Report(health.Identity{Zone: apitype.ZoneReport{OK: true}}, st, nil, now)
	keys := func(v any) []string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	for _, tc := range []struct {
		name string
		v    any
		want []string
	}{
		{"quarantined CFE without a number", rep.Outbox.Quarantine[0], []string{"desde", "motivo", "uuid"}},
		{"outbox", rep.Outbox, []string{"oldest_pending_age_s", "pending", "quarantine", "quarantined", "rejected"}},
		{"storage without a failed write", rep.Storage, []string{"dir", "free_bytes", "status", "total_bytes", "warnings"}},
		{"range", rep.CAE[0].Ranges[0], []string{"desde", "expired", "hasta", "near_expiry", "nearly_used_up", "origen",
			"remaining", "serie", "used", "vence"}},
		{"certificate", rep.Certificate, []string{"days_left", "expires_at", "issuer", "not_before", "ruc", "serial_number",
			"subject", "subject_dn", "test"}},
	} {
		if got := keys(tc.v); !slices.Equal(got, tc.want) {
			t.Errorf("%s: JSON keys %v, want %v", tc.name, got, tc.want)
		}
	}
}
