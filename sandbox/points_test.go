package sandbox_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

func TestIssuingPoint_Edit(t *testing.T) {
	t.Parallel()
	e := start(t)
	var companies []auth.CompanyResponse
	e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &companies)
	if len(companies[0].PuntosEmision) != 1 {
		t.Fatalf("Alfa's issuing points %v, want one", companies[0].PuntosEmision)
	}
	alfa, pde := companies[0].IdEmpresa, companies[0].PuntosEmision[0]

	var got map[string]any
	e.do("POST", "/api/v1/puntoemision/editar", map[string]any{
		"idPde": pde, "Empresa": alfa, "CodigoTerminal": "CAJA-2", "Sucursal": 3,
		"PuedeAnularCfe": 0, "RangoCae101": 17, "posIdPosLink": "POS-9",
	}, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &got)

	// Every field of §2.4 is present; the sent ones changed, the others keep
	// a new point's values (enabled, every permission, no range).
	want := map[string]any{"idPde": float64(pde), "Empresa": float64(alfa), "CodigoTerminal": "CAJA-2", "Sucursal": float64(3),
		"Deshabilitada": float64(0), "PuedeSolicitarCertificado": float64(1), "PuedeSolicitarClaveCert": float64(1),
		"PuedeSolicitarRango": float64(1), "PuedeEnviarCfe": float64(1), "PuedeSolicitarFirma": float64(1),
		"PuedeAnularCfe": float64(0), "ActualizacionHabilitada": float64(1), "TipoActualizacionCliente": "",
		"codigoTerminalTransAct": "", "posIdPosLink": "POS-9"}
	for _, code := range []int{101, 102, 103, 111, 112, 113, 181, 182, 121, 122, 123, 124, 131, 132, 133, 141, 142, 143, 151, 152, 153} {
		want["RangoCae"+strconv.Itoa(code)] = float64(0)
	}
	want["RangoCae101"] = float64(17)
	if len(got) != len(want) {
		t.Errorf("%d fields, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	t.Run("edits persist", func(t *testing.T) {
		var again map[string]any
		e.do("POST", "/api/v1/puntoemision/editar", map[string]any{"idPde": pde, "Empresa": alfa, "CodigoTerminal": "CAJA-3"},
			bearer(e.login("ana", anaPassword).Token)...).expect(t, http.StatusOK).decode(t, &again)
		if again["CodigoTerminal"] != "CAJA-3" || again["RangoCae101"] != float64(17) || again["PuedeAnularCfe"] != float64(0) {
			t.Errorf("point %v", again)
		}
	})
	t.Run("bad fields are named and change nothing", func(t *testing.T) {
		b := e.do("POST", "/api/v1/puntoemision/editar", map[string]any{
			"idPde": pde, "Empresa": alfa, "CodigoTerminal": "", "Deshabilitada": 2, "RangoCae999": 1, "Sucursal": -1,
		}, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).errBody(t)
		fields := map[string]bool{}
		for _, d := range b.Details {
			fields[d.Campo] = true
		}
		for _, f := range []string{"CodigoTerminal", "Deshabilitada", "RangoCae999", "Sucursal"} {
			if !fields[f] {
				t.Errorf("no error on %s: %+v", f, b.Details)
			}
		}
		var now map[string]any
		e.do("POST", "/api/v1/puntoemision/editar", map[string]any{"idPde": pde, "Empresa": alfa, "CodigoTerminal": "CAJA-3"},
			"X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &now)
		if now["Deshabilitada"] != float64(0) || now["Sucursal"] != float64(3) {
			t.Errorf("a rejected edit changed the point: %v", now)
		}
	})
	t.Run("identifiers are required", func(t *testing.T) {
		b := e.do("POST", "/api/v1/puntoemision/editar", map[string]any{}, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 3 || b.Details[0].Campo != "idPde" || b.Details[1].Campo != "Empresa" || b.Details[2].Campo != "CodigoTerminal" {
			t.Errorf("details %+v", b.Details)
		}
	})
	t.Run("another company's point or Empresa is 403, a missing point 404", func(t *testing.T) {
		body := map[string]any{"idPde": pde, "Empresa": alfa, "CodigoTerminal": "X"}
		e.do("POST", "/api/v1/puntoemision/editar", body, "X-API-Key", keyBeta).expect(t, http.StatusForbidden)
		body["Empresa"] = alfa + 1 // Beta, which ana does not belong to
		e.do("POST", "/api/v1/puntoemision/editar", body, bearer(e.login("ana", anaPassword).Token)...).expect(t, http.StatusForbidden)
		var beta []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &beta)
		// Beta's key naming Beta but Alfa's point.
		e.do("POST", "/api/v1/puntoemision/editar", map[string]any{"idPde": pde, "Empresa": beta[0].IdEmpresa, "CodigoTerminal": "X"}, "X-API-Key", keyBeta).expect(t, http.StatusForbidden)
		e.do("POST", "/api/v1/puntoemision/editar", map[string]any{"idPde": 999, "Empresa": alfa, "CodigoTerminal": "X"}, "X-API-Key", keyAlfa).expect(t, http.StatusNotFound)
	})
}
