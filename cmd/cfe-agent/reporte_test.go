package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/reportcheck"
)

// TestAgent_DailyReport is issue 31's outside check over the real binary:
// CFEs are signed on a running agent (e-Tickets in pesos, one in dollars,
// a credit note), the technician loads the BCU's rates (cotizaciones
// importar and fijar) and voids numbers (numeros anular, and is refused
// for numbers used or already voided, changing nothing), numbering skips
// the voided ones, and «cfe-agent reporte --fecha» writes each signing
// day's signed report while the agent runs: xmllint, xmlsec1 and a
// recomputation from the signed CFEs the agent answered agree with it,
// and «verify» reads it back with its summary. With the agent stopped the
// same command opens the store and writes the same content.
func TestAgent_DailyReport(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	var signed [][]byte
	days := map[cfe.Date]bool{}
	keep := func(res map[string]any) {
		t.Helper()
		if res["codigo_respuesta"] != "00" {
			t.Fatalf("sign: %v %v", res["codigo_respuesta"], res["mensaje_respuesta"])
		}
		signed = append(signed, []byte(res["xml_firmado"].(string)))
		ts, err := time.Parse(time.RFC3339, res["tmst_firma"].(string))
		if err != nil {
			t.Fatal(err)
		}
		days[cfe.DateOf(ts.In(cfe.Montevideo))] = true
	}
	for i := range 3 {
		keep(signTicket(t, a.baseURL, fmt.Sprintf("rep-%d", i)))
	}
	// The BCU's rates: a file for the days before, the technician's for yesterday.
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	csvPath := filepath.Join(t.TempDir(), "bcu.csv")
	var csv strings.Builder
	csv.WriteString("fecha;moneda;valor\n")
	for d := 2; d <= 12; d++ {
		day := today.AddDays(-d)
		fmt.Fprintf(&csv, "%02d/%02d/%04d;USD;39,%03d\n", day.Day, int(day.Month), day.Year, 100+d)
	}
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, env, "cotizaciones", "importar", "--archivo", csvPath); code != 0 || !strings.Contains(out, "11 cotizaciones guardadas") {
		t.Fatalf("cotizaciones importar: %d %s", code, out)
	}
	for _, d := range []cfe.Date{today.AddDays(-1), today} {
		if out, code := runCLI(t, env, "cotizaciones", "fijar", "--fecha", d.String(), "--moneda", "USD", "--valor", "40.0125"); code != 0 {
			t.Fatalf("cotizaciones fijar: %d %s", code, out)
		}
	}
	out, code := runCLI(t, env, "cotizaciones", "listar")
	if code != 0 || !strings.Contains(out, today.AddDays(-1).String()+" USD 40.0125  (ingresada por el técnico)") ||
		!strings.Contains(out, "(archivo bcu.csv, línea 2)") {
		t.Fatalf("cotizaciones listar: %d %s", code, out)
	}
	keep(signCFE(t, a.baseURL, withUUID(t, example(t, "e-ticket-dolares.json"), "rep-usd")))
	keep(signCFE(t, a.baseURL, withUUID(t, example(t, "nota-credito-e-ticket.json"), "rep-nc")))

	// The technician voids A-6..8 (A-1..3 and the dollar ticket A-4 are used).
	if out, code := runCLI(t, env, "numeros", "anular", "101:A:6-8", "--motivo", "rollo de papel dañado"); code != 0 ||
		!strings.Contains(out, "anulados 101:A:6-8: 3 números de e-Ticket serie A") {
		t.Fatalf("numeros anular: %d %s", code, out)
	}
	for _, c := range []struct{ arg, want string }{
		{"101:A:2-3", "ya están usados"},
		{"101:A:7", "ya están anulados"},
		{"101:A:9999990-9999999", "no están dentro de un rango CAE cargado"},
		{"101-A-9", "no es TIPO:SERIE:DESDE-HASTA"},
	} {
		out, code := runCLI(t, env, "numeros", "anular", c.arg, "--motivo", "prueba")
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("numeros anular %s: %d %s (want a refusal with %q)", c.arg, code, out, c.want)
		}
	}
	var nums []float64
	for i := range 3 {
		res := signTicket(t, a.baseURL, fmt.Sprintf("rep-after-%d", i))
		keep(res)
		nums = append(nums, res["numero"].(float64))
	}
	if nums[0] != 5 || nums[1] != 9 || nums[2] != 10 {
		t.Fatalf("numbers after the void: %v, want 5 9 10", nums)
	}

	// Each signing day's report, written while the agent runs.
	docs := map[string][]byte{}
	table := func(cur string, d cfe.Date) (decimal.Decimal, bool) {
		for back := 1; back <= 10; back++ {
			day := d.AddDays(-back)
			switch {
			case day == today || day == today.AddDays(-1):
				return decimal.RequireFromString("40.0125"), true
			case !day.Before(today.AddDays(-12)):
				return decimal.RequireFromString(fmt.Sprintf("39.%03d", 100+int(today.Time(time.UTC).Sub(day.Time(time.UTC)).Hours()/24))), true
			}
		}
		return decimal.Decimal{}, false
	}
	tax := cfe.DefaultTaxConfig()
	for day := range days {
		file := filepath.Join(t.TempDir(), "rep.xml")
		out, code := runCLI(t, env, "reporte", "--fecha", day.String(), "-o", file)
		if code != 0 || !strings.Contains(out, "reporte diario firmado escrito en "+file) {
			t.Fatalf("reporte --fecha %s: %d %s", day, code, out)
		}
		rep, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		docs["rep-"+day.String()+".xml"] = rep
		var ofDay [][]byte
		for _, s := range signed {
			h, err := cfe.ParseXML(s)
			if err != nil {
				t.Fatal(err)
			}
			if cfe.DateOf(h.TmstFirma.In(cfe.Montevideo)) == day {
				ofDay = append(ofDay, s)
			}
		}
		var annulled []cfe.AnnulledRange
		if day == today {
			annulled = []cfe.AnnulledRange{{Type: cfe.ETicket, Serie: "A", From: 6, To: 8, Reason: cfe.AnnulTechnician}}
		}
		reportcheck.Check(t, rep, reportcheck.Input{RUC: "219999830019", Date: day, SignDay: today, CFEs: ofDay,
			Annulled: annulled, Rate: table, UIValue: tax.ValorUI, TopeUI: tax.TopeUI})
		if day == today {
			testtool.MustContain(t, "reporte's summary", out, "e-Ticket:", "anulados A 6-8", "cotización usada: USD")
		}
		vout, vcode := runCLI(t, env, "verify", "--profile-cert", file)
		if vcode != 0 || !strings.Contains(vout, "reporte diario del "+day.String()) {
			t.Errorf("verify %s: %d %s", file, vcode, vout)
		}
	}
	for name, msg := range testtool.ValidateXSDBatch(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), docs) {
		t.Errorf("xmllint: %s: %s", name, msg)
	}
	for name, msg := range testtool.XMLSecVerifyBatch(t, docs) {
		t.Errorf("xmlsec1 --verify: %s: %s", name, msg)
	}
	// With the agent stopped, the command opens the store itself.
	a.stop(t)
	file := filepath.Join(t.TempDir(), "rep-stopped.xml")
	if out, code := runCLI(t, env, "reporte", "--fecha", today.String(), "-o", file); code != 0 {
		t.Fatalf("reporte with the agent stopped: %d %s", code, out)
	}
	rep, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, got := reportcheck.Read(t, rep)
	if b := got.Blocks[cfe.ETicket]; b == nil || b.Annulled != 3 || strings.Join(b.AnnulRuns, " ") != "A:6-8" {
		t.Errorf("report with the agent stopped: %+v", got.Blocks[cfe.ETicket])
	}
}

// withUUID returns the example request body with uuid.
func withUUID(t *testing.T, body []byte, uuid string) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	req["uuid"] = uuid
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
