package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// reportState is the part of /state's dgi block this test reads.
type reportState struct {
	Status   string   `json:"status"`
	Warnings []string `json:"warnings"`
	DGI      struct {
		Reportes []struct {
			Fecha    string `json:"fecha"`
			SecEnvio int    `json:"sec_envio"`
			Estado   string `json:"estado"`
		} `json:"reportes"`
	} `json:"dgi"`
}

// emulatorReports reads the reports the emulator received (its admin
// state), as "fecha sec estado".
func emulatorReportList(t *testing.T, admin string) []string {
	t.Helper()
	resp, err := http.Get(admin + "/admin/reportes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/admin/reportes: HTTP %d: %s", resp.StatusCode, b)
	}
	var list struct {
		Reportes []struct {
			FechaResumen string `json:"fechaResumen"`
			SecEnvio     int    `json:"secEnvio"`
			Estado       string `json:"estado"`
		} `json:"reportes"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("/admin/reportes: %v: %s", err, b)
	}
	var out []string
	for _, r := range list.Reportes {
		out = append(out, r.FechaResumen+" "+itoa(int64(r.SecEnvio))+" "+r.Estado)
	}
	return out
}

// TestAgent_DGIDailyReport, over the real binaries: an agent in direct mode
// toward `cfe-sandbox dgi`, its daily report's clock past midnight (the
// test hook CFE_AGENT_TEST_REPORT_CLOCK), signs two e-Tickets; once DGI
// holds them it sends the day's report, built and signed by the agent from
// its store: AR, then DR (the emulator processed it and found it agrees
// with the two CFEs), on /state, the status page and doctor. `cfe-agent
// reporte reenviar --fecha D` with the agent running sends SecEnvio 2 (the
// first becomes FR at DGI); with the agent stopped it records SecEnvio 3,
// which the agent sends when it starts again.
func TestAgent_DGIDailyReport(t *testing.T) {
	t.Parallel()
	url, admin, cert := startDGIEmulatorProc(t)
	dataDir := directModeDataDir(t, url, cert)
	now := time.Now().In(cfe.Montevideo)
	day := cfe.DateOf(now)
	offset := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 10, 0, 0, cfe.Montevideo).Sub(now)
	env := procEnv(t, dataDir, "CFE_AGENT_TEST_REPORT_CLOCK="+offset.String())
	p := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	p.waitLine("sending signed CFEs to DGI directly")
	p.signExample("rep-1")
	p.signExample("rep-2")

	waitReport := func(p *agentProc, seq int, estado string) reportState {
		t.Helper()
		var st reportState
		var last []byte
		if !testtool.WaitUntil(t, 2*time.Minute, func() bool {
			_, last = getAccept(t, p.baseURL+"/state", "application/json")
			st = reportState{}
			if err := json.Unmarshal(last, &st); err != nil {
				t.Fatalf("/state: %v: %s", err, last)
			}
			r := st.DGI.Reportes
			return len(r) > 0 && r[0].Fecha == day.String() && r[0].SecEnvio == seq && r[0].Estado == estado
		}) {
			t.Fatalf("the report of %s never stood at %d %s on /state: %s", day, seq, estado, last)
		}
		return st
	}
	waitReport(p, 1, "DR")
	if got := emulatorReportList(t, admin); len(got) != 1 || got[0] != day.String()+" 1 DR" {
		t.Fatalf("DGI holds %v, want the day's report once, processed", got)
	}
	_, page := getAccept(t, p.baseURL+"/", "text/html")
	if !strings.Contains(string(page), `data-fecha="`+day.String()+`" data-estado="DR"`) {
		t.Errorf("the status page does not show the day's report:\n%s", page)
	}
	out, _ := runCLI(t, env, "doctor")
	if !regexp.MustCompile(`(?m)^OK +Reporte diario: último día ` + day.String() + `: procesado por DGI \(DR\), secuencia 1;`).MatchString(out) {
		t.Errorf("doctor does not report the daily report:\n%s", out)
	}

	// A correction through the running agent.
	out, code := runCLI(t, env, "reporte", "reenviar", "--fecha", day.String())
	if code != 0 || !strings.Contains(out, "guardado con secuencia 2") || !strings.Contains(out, "lo envía a DGI ahora") {
		t.Fatalf("reporte reenviar (agent running): exit %d\n%s", code, out)
	}
	waitReport(p, 2, "DR")
	if got := emulatorReportList(t, admin); len(got) != 2 || got[0] != day.String()+" 1 FR" || got[1] != day.String()+" 2 DR" {
		t.Fatalf("DGI holds %v, want SecEnvio 1 FR and 2 DR", got)
	}

	// A correction with the agent stopped: recorded, sent when it starts.
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("agent exit %d", code)
	}
	out, code = runCLI(t, env, "reporte", "reenviar", "--fecha", day.String())
	if code != 0 || !strings.Contains(out, "guardado con secuencia 3") || !strings.Contains(out, "cuando se inicie") {
		t.Fatalf("reporte reenviar (agent stopped): exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, env, "reporte", "reenviar", "--fecha", day.String()); code == 0 || !strings.Contains(out, "todavía no tiene respuesta de DGI") {
		t.Fatalf("a second correction before DGI answered the third: exit %d\n%s", code, out)
	}
	p2 := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	waitReport(p2, 3, "DR")
	if got := emulatorReportList(t, admin); len(got) != 3 || got[1] != day.String()+" 2 FR" || got[2] != day.String()+" 3 DR" {
		t.Fatalf("DGI holds %v, want SecEnvio 2 FR and 3 DR", got)
	}
}
