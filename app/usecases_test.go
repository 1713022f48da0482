package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestMayOmitWatermark: a PDF without the test watermark only for the
// company's own CFE of a production profile, signed with the profile's
// certificate; each refusal says why.
func TestMayOmitWatermark(t *testing.T) {
	t.Parallel()
	own, other := newIssuing(t), newIssuing(t)
	signed := own.sign(t, "00000000-0000-4000-8000-000000000001", 101, "").XML
	production := profiles.Profile{Environment: profiles.Produccion, Certificate: own.certificateFile(t)}
	otherCert := production
	otherCert.Certificate = other.certificateFile(t)
	sandbox := production
	sandbox.Environment = profiles.Sandbox
	const rule = "--production solo vale para los CFE de la empresa de un perfil de producción, firmados con el certificado del perfil"
	tests := []struct {
		name string
		own  bool
		p    profiles.Profile
		want string // "" when allowed
	}{
		{"the company's, its certificate", true, production, ""},
		{"a sandbox profile", true, sandbox, rule + ` (el perfil "caja" es del entorno sandbox)`},
		{"another company's CFE", false, production, rule + " (el CFE no es de la empresa del perfil)"},
		{"signed with another certificate", true, otherCert, rule + ": "},
	}
	for _, tt := range tests {
		err := MayOmitWatermark(signed, tt.own, "caja", tt.p)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (cfe.ErrorCode(err) != cfe.EINVALID || !strings.HasPrefix(cfe.ErrorMessage(err), tt.want)):
			t.Errorf("%s: %v, want EINVALID starting %q", tt.name, err, tt.want)
		}
	}
}

// TestUsedElsewhere_Write: what cae used-elsewhere says it recorded, with
// the witness's raise when there was one.
func TestUsedElsewhere_Write(t *testing.T) {
	t.Parallel()
	tests := []struct {
		u    UsedElsewhere
		want string
	}{
		{UsedElsewhere{Type: 101, Serie: "A", UpTo: 0, Before: 10, Last: 10},
			"confirmado: ningún número de e-Ticket serie A se usó fuera del agente\n"},
		{UsedElsewhere{Type: 101, Serie: "A", UpTo: 0, Before: 10, Last: 25},
			"confirmado: ningún número de e-Ticket serie A se usó fuera del agente más allá de lo que registra el testigo de " +
				"numeración de este equipo (hasta el 25); el agente sigue desde el 26\n"},
		{UsedElsewhere{Type: 111, Serie: "B", UpTo: 400, Before: 0, Last: 400},
			"registrado: e-Factura serie B usado por otro sistema hasta el número 400; el agente sigue desde el 401\n"},
		{UsedElsewhere{Type: 111, Serie: "B", UpTo: 400, Before: 0, Last: 450},
			"registrado: e-Factura serie B usado por otro sistema hasta el número 400; el agente sigue desde el 451\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		tt.u.Write(&out)
		if out.String() != tt.want {
			t.Errorf("%+v:\n%s\nwant\n%s", tt.u, out.String(), tt.want)
		}
	}
}

// TestRangeWarning: cae list's warning column.
func TestRangeWarning(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		expired, usedUp, expiry bool
		want                    string
	}{
		{false, false, false, ""}, {true, true, true, "vencido"}, {false, true, true, "por agotarse y por vencer"},
		{false, true, false, "por agotarse"}, {false, false, true, "por vencer"},
	} {
		if got := rangeWarning(tt.expired, tt.usedUp, tt.expiry); got != tt.want {
			t.Errorf("rangeWarning(%v, %v, %v) = %q, want %q", tt.expired, tt.usedUp, tt.expiry, got, tt.want)
		}
	}
}

// TestArchived_Write: archive's report, years in order with their files,
// and the series kept in the store.
func TestArchived_Write(t *testing.T) {
	t.Parallel()
	d, err := cfe.ParseDate("2026-01-01")
	if err != nil {
		t.Fatal(err)
	}
	r := &Archived{Before: d, ArchiveResult: store.ArchiveResult{Moved: 5, Years: map[int]int{2025: 3, 2024: 2},
		Kept: map[string]int{"111/A": 1, "101/A": 4}},
		Files: map[int]string{2024: "/datos/store/caja-archive-2024.db", 2025: "/datos/store/caja-archive-2025.db"}}
	var out bytes.Buffer
	r.Write(&out)
	want := "5 CFE firmados antes del 2026-01-01 movidos a archivos históricos\n" +
		"  2024: 2 CFE en caja-archive-2024.db\n  2025: 3 CFE en caja-archive-2025.db\n" +
		"quedan en el archivo de datos (sin entregar al servicio, o después de uno sin entregar): 101/A: 4, 111/A: 1\n"
	if out.String() != want {
		t.Errorf("Write:\n%s\nwant\n%s", out.String(), want)
	}
}

// TestRendered_Write: render's line notes a CFE of another RUC.
func TestRendered_Write(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	(&Rendered{Out: "a.pdf", Template: "Rollo", Bytes: 1234}).Write(&out)
	(&Rendered{Out: "b.pdf", Template: "Estandar", Bytes: 99, Foreign: true, RUCEmisor: "219999830019"}).Write(&out)
	want := "escrito a.pdf: plantilla Rollo, 1234 bytes\n" +
		"escrito b.pdf: plantilla Estandar, 99 bytes; el RUC emisor 219999830019 no es el del perfil: el pie no lleva sus datos\n"
	if out.String() != want {
		t.Errorf("Write:\n%s\nwant\n%s", out.String(), want)
	}
}
