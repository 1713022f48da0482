package app

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// stateOf decodes a state report as GET /state answers it: the doctor reads
// the running agent's over HTTP, so its checks are tested from the JSON.
func stateOf(t *testing.T, js string) *apitype.StateReport {
	t.Helper()
	var r apitype.StateReport
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("the test's /state: %v", err)
	}
	return &r
}

// TestDoctor_stateChecks: the doctor's lines on each part of the state
// report, their status, and how many fail.
func TestDoctor_stateChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		state string
		check func(*doctor, *apitype.StateReport)
		want  []string
	}{
		{"zone ok", `{"zona_horaria":{"ok":true,"nombre":"America/Montevideo","desfase":"-03:00"}}`, (*doctor).zone,
			[]string{"OK   zona horaria: America/Montevideo (-03:00)"}},
		{"zone wrong", `{"zona_horaria":{"ok":false,"mensaje":"la zona horaria del equipo es UTC"}}`, (*doctor).zone,
			[]string{"FAIL zona horaria: la zona horaria del equipo es UTC"}},
		{"ranges", `{"cae":[
			{"tipo_cfe":101,"nombre":"e-Ticket","remaining":900,"usable_until":"2027-03-01","warnings":[]},
			{"tipo_cfe":111,"nombre":"e-Factura","remaining":5,"warnings":["quedan 5 números","vence pronto"]},
			{"tipo_cfe":112,"nombre":"Nota de crédito de e-Factura","remaining":0,"warnings":[]}]}`, (*doctor).ranges,
			[]string{"OK   CAE 101: e-Ticket: 900 números disponibles hasta 2027-03-01",
				"WARN CAE 111: e-Factura: quedan 5 números; vence pronto",
				"FAIL CAE 112: Nota de crédito de e-Factura: sin números disponibles (rango agotado o vencido)"}},
		{"no usable range", `{"cae":[]}`, (*doctor).ranges,
			[]string{"FAIL CAE: no hay ningún rango CAE utilizable: importe los archivos CAE de DGI (cfe-agent cae import)"}},
		{"numbering free", `{}`, (*doctor).numbering, nil},
		{"numbering held", `{"numeracion":{"en_espera":true,"motivo":"falta el diario de numeración","series_confirmadas":["e-Ticket serie A"]}}`,
			(*doctor).numbering, []string{"FAIL numeración: falta el diario de numeración; se espera la consulta al servicio en línea o " +
				"«cfe-agent cae used-elsewhere TIPO SERIE HASTA» (ya confirmadas: e-Ticket serie A)"}},
		{"disk ok", `{"storage":{"status":"ok","dir":"/datos","free_bytes":5368709120}}`, (*doctor).storage,
			[]string{"OK   disco: 5120 MB libres en /datos"}},
		{"disk failing", `{"storage":{"status":"error","dir":"/datos","warnings":["no se pudo guardar","disco lleno"]}}`,
			(*doctor).storage, []string{"FAIL disco: no se pudo guardar; disco lleno"}},
		{"disk low", `{"storage":{"status":"degraded","dir":"/datos","warnings":["quedan 90 MB"]}}`, (*doctor).storage,
			[]string{"WARN disco: quedan 90 MB"}},
		{"disk unknown", `{"storage":{"status":"ok","dir":"/datos","space_error":"no se pudo leer el espacio libre"}}`,
			(*doctor).storage, []string{"WARN disco: no se pudo leer el espacio libre (/datos)"}},
		{"no backups", `{"backup":{"automaticas":false,"ultima":null,"status":"ok"}}`, (*doctor).backup,
			[]string{"WARN copias de seguridad: no hay copias automáticas (configure backup.folder en el perfil, en otro disco); última: ninguna"}},
		{"backups in order", `{"backup":{"automaticas":true,"carpeta":"/copias","periodo_s":86400,"conservar":7,"status":"ok",
			"ultima":{"at":"2026-11-27T10:00:00-03:00","edad_s":3600,"archivo":"/copias/a.db"}}}`, (*doctor).backup,
			[]string{"OK   copias de seguridad: última /copias/a.db (27/11/2026 10:00, hace 1 h); cada 24h0m0s en /copias, se conservan 7"}},
		{"backups late", `{"backup":{"automaticas":true,"carpeta":"/copias","periodo_s":3600,"status":"degraded","ultima":null}}`,
			(*doctor).backup, []string{"WARN copias de seguridad: atrasadas: última ninguna; período 1h0m0s en /copias"}},
		{"backup failed", `{"backup":{"automaticas":true,"error":"disco lleno","status":"degraded","ultima":null}}`, (*doctor).backup,
			[]string{"WARN copias de seguridad: la última falló: disco lleno; última buena: ninguna"}},
		{"outbox empty", `{"outbox":{"pending":0}}`, (*doctor).outbox, []string{"OK   envíos: no hay comprobantes pendientes de envío"}},
		{"outbox late, rejected, hosted error", `{"outbox":{"pending":3,"oldest_pending_age_s":7200,"rejected":1},
			"hosted":{"base_url":"https://h","last_error":"429"}}`, (*doctor).outbox,
			[]string{"WARN envíos: 3 comprobantes pendientes; el más antiguo espera desde hace 2 h",
				"WARN envíos: el servicio en la nube rechazó 1 comprobante firmado: revíselo (no se reenvía solo)",
				"WARN envíos: último error del servicio en la nube: 429"}},
		{"quarantine", `{"outbox":{"quarantined":3,"quarantine":[
			{"uuid":"u1","tipo_cfe":101,"nombre":"e-Ticket","serie":"A","numero":7,"desde":"2026-11-27T13:00:00Z","motivo":"registro dañado"},
			{"uuid":"u2","desde":"2026-11-27T13:00:00Z","motivo":"ilegible"}]},
			"backup":{"ultima":{"archivo":"/copias/b.db"}}}`, (*doctor).quarantine,
			[]string{"FAIL comprobante dañado: e-Ticket A-7 (uuid u1), en cuarentena desde el 27/11/2026 10:00: registro dañado; " +
				"no se envía al servicio en la nube ni se imprime, y su número sigue usado. Recupérelo con «cfe-agent recuperar u1»: " +
				"lo busca en las copias de seguridad del agente, de la más nueva a la más vieja (la última: /copias/b.db) y después " +
				"en el servicio en la nube; con «--copia ARCHIVO» use otra copia de seguridad que lo tenga",
				"FAIL comprobante dañado: con uuid u2, en cuarentena desde el 27/11/2026 10:00: ilegible",
				"FAIL comprobante dañado: y 1 comprobante dañado más en cuarentena: con tantos, el archivo de datos está muy dañado; " +
					"restaure una copia de seguridad («cfe-agent restore»)"}},
		{"dgi, provider mode", `{"warnings":["algo del servicio en la nube"]}`, (*doctor).dgi, nil},
		{"dgi, direct mode in order", `{"dgi":{"enviados":5,"aceptados":5,"rechazados":0,"observados":0,"pendientes":2,"desconocidos":0},
			"warnings":["copias de seguridad atrasadas"]}`, (*doctor).dgi,
			[]string{"OK   DGI (envío directo): 5 enviados, 5 aceptados, 0 rechazados, 0 observados, 2 pendientes, 0 sin respuesta"}},
		{"dgi, a rejection", `{"dgi":{"enviados":3,"aceptados":2,"rechazados":1,"observados":0,"pendientes":0,"desconocidos":0},
			"warnings":["DGI rechazó el e-Ticket A-7 (E05: firma inválida): su número queda anulado; emita un comprobante nuevo"]}`,
			(*doctor).dgi,
			[]string{"WARN DGI (envío directo): 3 enviados, 2 aceptados, 1 rechazados, 0 observados, 0 pendientes, 0 sin respuesta",
				"WARN DGI (envío directo): DGI rechazó el e-Ticket A-7 (E05: firma inválida): su número queda anulado; emita un comprobante nuevo"}},
		{"dgi, provider mode reporting a rejection", `{"dgi":{"enviados":3,"aceptados":2,"rechazados":1,"observados":0,"pendientes":0,"desconocidos":0},
			"warnings":["DGI rechazó el e-Ticket A-7 (E05: firma inválida): su número queda anulado; emita un comprobante nuevo"]}`,
			func(d *doctor, r *apitype.StateReport) { d.provider = true; d.dgi(r) },
			[]string{"WARN DGI (por el proveedor): 3 enviados, 2 aceptados, 1 rechazados, 0 observados, 0 pendientes, 0 sin respuesta",
				"WARN DGI (por el proveedor): DGI rechazó el e-Ticket A-7 (E05: firma inválida): su número queda anulado; emita un comprobante nuevo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			d := doctorLines(&out)
			tt.check(d, stateOf(t, tt.state))
			assertLines(t, out.String(), tt.want)
			if failed := strings.Count("\n"+strings.Join(tt.want, "\n"), "\nFAIL"); d.failed != failed {
				t.Errorf("failed = %d, want %d", d.failed, failed)
			}
		})
	}
}

// assertLines checks that out has one line per want, each starting with it.
func assertLines(t *testing.T, out string, want []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" {
		lines = nil
	}
	if len(lines) != len(want) {
		t.Fatalf("doctor wrote %d lines:\n%s\nwant %d:\n%s", len(lines), out, len(want), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d =\n%s\nwant it to start with\n%s", i+1, lines[i], w)
		}
	}
}

// TestDoctor_footer: the printed footer's data DGI asks for, given the
// types the agent can number.
func TestDoctor_footer(t *testing.T) {
	t.Parallel()
	tickets := `{"cae":[{"tipo_cfe":101,"nombre":"e-Ticket","remaining":10,"warnings":[]}]}`
	facturas := `{"cae":[{"tipo_cfe":111,"nombre":"e-Factura","remaining":10,"warnings":[]}]}`
	company := func(fecha, res, web string) profiles.Profile {
		var p profiles.Profile
		if fecha != "" {
			d, err := cfe.ParseDate(fecha)
			if err != nil {
				t.Fatal(err)
			}
			p.Company.FechaEmisor = profiles.Date{Date: d}
		}
		p.Company.Resolucion, p.Company.WebURL = res, web
		return p
	}
	tests := []struct {
		name  string
		p     profiles.Profile
		state string
		want  []string
	}{
		{"all said", company("2020-03-01", "", "https://tienda.uy"), tickets,
			[]string{"OK   pie impreso: Fecha emisor 01/03/2020; e-Tickets verificables en https://tienda.uy"}},
		{"by resolution, no tickets", company("", "1234/2019", ""), facturas, []string{"OK   pie impreso: Res. 1234/2019"}},
		{"nothing said, tickets", company("", "", ""), tickets, []string{
			"WARN pie impreso: el perfil no indica company.fecha_emisor ni company.resolucion",
			"WARN pie impreso: el perfil no indica company.web_url: los e-Tickets (101) mandan a verificar en www.dgi.gub.uy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			doctorLines(&out).footer(tt.p, stateOf(t, tt.state))
			assertLines(t, out.String(), tt.want)
		})
	}
}

// TestDoctor_listen: with the agent stopped, the profile's address must be
// free; taken by another program it fails; a running agent's is its own.
func TestDoctor_listen(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken := l.Addr().String()
	var out bytes.Buffer
	d := doctorLines(&out)
	d.listen(profiles.Profile{Listen: taken}, &apitype.StateReport{}, false)
	l.Close()
	d.listen(profiles.Profile{Listen: "127.0.0.1:0"}, &apitype.StateReport{}, false)
	d.listen(profiles.Profile{Listen: taken}, stateOf(t, `{"base_url":"http://`+taken+`"}`), true)
	assertLines(t, out.String(), []string{
		"FAIL módulo local: la dirección " + taken + " está ocupada por otro programa",
		"OK   módulo local: la dirección 127.0.0.1:0 está libre (el agente no está en ejecución)",
		"OK   módulo local: el agente está en ejecución en http://" + taken,
	})
	if d.failed != 1 {
		t.Errorf("failed = %d, want 1", d.failed)
	}
}

// TestCheck_String: the report's line pads the status to four columns.
func TestCheck_String(t *testing.T) {
	t.Parallel()
	for c, want := range map[Check]string{
		{Status: CheckOK, Name: "perfil", Message: "caja"}:  "OK   perfil: caja",
		{Status: CheckWarn, Name: "disco", Message: "poco"}: "WARN disco: poco",
		{Status: CheckFail, Name: "CAE", Message: "nada"}:   "FAIL CAE: nada",
	} {
		if got := c.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", c, got, want)
		}
	}
}
