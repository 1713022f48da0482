package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/reportcheck"
)

// sandboxGet sends a GET to the real sandbox with the e2e key and returns
// the status, the X-Sec-Envio header and the body.
func sandboxGet(t *testing.T, url string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", agentKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("X-Sec-Envio"), body
}

// every lets a condition polled by testtool.WaitUntil ask a rate-limited
// service at most once per d.
func every(d time.Duration) func() bool {
	var last time.Time
	return func() bool {
		if time.Since(last) < d {
			return false
		}
		last = time.Now()
		return true
	}
}

// TestAgent_ProviderDailyReport, over the real binaries: provider mode's
// daily report end to end — the agent (dgi.modo proveedor, the default)
// signs e-Tickets and the technician voids numbers with «cfe-agent numeros
// anular» while it runs; the annulled numbers reach the real cfe-sandbox
// (GET /api/v1/numerosanulados), which, as the provider, builds the
// company's report of the day (its report clock a day ahead:
// --reporte-desfase 24h), signs it and sends it to its DGI emulator; the
// report (xmllint, xmlsec1) counts the CFEs and the voided numbers, and
// its state, DR, shows in the agent's /state (dgi.reportes) with the
// report's SecEnvio.
func TestAgent_ProviderDailyReport(t *testing.T) {
	t.Parallel()
	service := startSandboxProc(t, "--dgi-procesamiento", "-1ns", "--reporte-desfase", "24h",
		"--reporte-intervalo", "100ms", "--reporte-consulta", "200ms")
	dataDir := dgiDataDir(t, "      consulta_proveedor: 300ms\n")
	env := procEnv(t, dataDir, "CFE_AGENT_HOSTED_URL="+service, "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	p := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	for _, u := range []string{"rp-1", "rp-2", "rp-3"} {
		p.signExample(u)
	}
	if out, code := runCLI(t, env, "numeros", "anular", "101:A:4-6", "--motivo", "rollo de papel dañado"); code != 0 {
		t.Fatalf("numeros anular: %d %s", code, out)
	}
	if got := p.signExample("rp-4"); got.Numero != 7 {
		t.Fatalf("the CFE after the void is A-%d, want A-7", got.Numero)
	}
	day := cfe.DateOf(time.Now().In(cfe.Montevideo))

	// The annulled numbers reach the service.
	ask := every(500 * time.Millisecond)
	var ranges []struct {
		TipoCfe      int      `json:"tipoCfe"`
		Serie        string   `json:"serie"`
		Desde        int64    `json:"desde"`
		Hasta        int64    `json:"hasta"`
		Motivo       string   `json:"motivo"`
		Detalle      string   `json:"detalle"`
		FechaResumen cfe.Date `json:"fechaResumen"`
	}
	if !testtool.WaitUntil(t, time.Minute, func() bool {
		if !ask() {
			return false
		}
		status, _, body := sandboxGet(t, service+"/api/v1/numerosanulados")
		return status == http.StatusOK && json.Unmarshal(body, &ranges) == nil && len(ranges) > 0
	}) {
		t.Fatalf("the annulled numbers never reached the service:\n%s", p.stderr.String())
	}
	if len(ranges) != 1 || ranges[0].TipoCfe != 101 || ranges[0].Serie != "A" || ranges[0].Desde != 4 || ranges[0].Hasta != 6 ||
		ranges[0].Motivo != cfe.AnnulTechnician || ranges[0].Detalle != "rollo de papel dañado" || ranges[0].FechaResumen != day {
		t.Fatalf("the service holds %+v, want 101 A 4-6 (technician) of %s", ranges, day)
	}

	// The provider's report of the day, with the voided numbers, processed
	// by DGI (DR), shows in the agent's /state.
	type report struct {
		Fecha    cfe.Date `json:"fecha"`
		SecEnvio int      `json:"sec_envio"`
		Estado   string   `json:"estado"`
		Enviado  *string  `json:"enviado"`
	}
	var st struct {
		DGI struct {
			Reportes []report `json:"reportes"`
		} `json:"dgi"`
	}
	var last []byte
	var signed []byte
	fetch := every(500 * time.Millisecond)
	if !testtool.WaitUntil(t, 2*time.Minute, func() bool {
		_, last = getAccept(t, p.baseURL+"/state", "application/json")
		st.DGI.Reportes = nil
		if err := json.Unmarshal(last, &st); err != nil {
			t.Fatalf("/state: %v: %s", err, last)
		}
		if len(st.DGI.Reportes) == 0 || st.DGI.Reportes[0].Fecha != day || st.DGI.Reportes[0].Estado != cfe.ReportProcessed || !fetch() {
			return false
		}
		status, seq, body := sandboxGet(t, service+"/api/v1/reportediario/xml?fecha="+day.String())
		if status != http.StatusOK || seq != strconv.Itoa(st.DGI.Reportes[0].SecEnvio) {
			return false
		}
		_, got := reportcheck.Read(t, body)
		b := got.Blocks[cfe.ETicket]
		signed = body
		return b != nil && strings.Join(b.AnnulRuns, " ") == "A:4-6"
	}) {
		t.Fatalf("the day's report never showed processed with the voided numbers: /state %s\nreport:\n%s\nagent:\n%s", last, signed, p.stderr.String())
	}
	r := st.DGI.Reportes[0]
	if r.SecEnvio < 1 || r.Enviado == nil {
		t.Errorf("the report's state in /state: %+v", r)
	}
	testtool.MustValidateXSD(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), signed)
	if out, ok := testtool.XMLSecVerify(t, signed, ""); !ok {
		t.Fatalf("xmlsec1 does not verify the provider's report:\n%s", out)
	}
	car, got := reportcheck.Read(t, signed)
	b := got.Blocks[cfe.ETicket]
	if car["RUCEmisor"] != "219999830019" || car["FechaResumen"] != day.String() || b.Used != 7 || b.Annulled != 3 || b.Issued != 4 ||
		strings.Join(b.UsedRuns, " ") != "A:1-7" {
		t.Errorf("the report: caratula %v, e-Tickets %+v; want RUC 219999830019, A:1-7 used, 4-6 annulled, 4 issued", car, *b)
	}
}
