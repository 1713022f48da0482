package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// cajaPIN is the supervisor's PIN of the /caja tests' profile.
const cajaPIN = "4821"

// startCajaAgent runs the agent with a thermal printer (the ESC/POS test
// printer) as the default printer and, when pin, a supervisor PIN in its
// profile, as a technician writes config.yaml.
func startCajaAgent(t *testing.T, pin bool) (*runningAgent, *thermal.Printer) {
	t.Helper()
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	if out, code := runCLI(t, env, "profile", "list"); code != 0 {
		t.Fatalf("profile list: exit %d\n%s", code, out)
	}
	pr := &thermal.Printer{}
	cfgFile := filepath.Join(dataDir, "config.yaml")
	yaml, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	add := "    printers:\n      termica:\n        backend: tcp\n        protocol: escpos\n        address: " + pr.Listen(t) + "\n"
	if pin {
		hash, err := profiles.HashPIN(cajaPIN)
		if err != nil {
			t.Fatal(err)
		}
		add = "    caja:\n      supervisor_pin_hash: '" + hash + "'\n" + add
	}
	for old, repl := range map[string]string{"    printers:\n": add, "    default_printer: archivo\n": "    default_printer: termica\n"} {
		if !bytes.Contains(yaml, []byte(old)) {
			t.Fatalf("the default config.yaml lacks %q", old)
		}
		yaml = bytes.Replace(yaml, []byte(old), []byte(repl), 1)
	}
	if err := os.WriteFile(cfgFile, yaml, 0o600); err != nil {
		t.Fatal(err)
	}
	return startAgent(t, env, "--listen", "127.0.0.1:0"), pr
}

// signExampleAs signs the example file name under uuid and returns the
// signed XML.
func signExampleAs(t *testing.T, baseURL, name, uuid string) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(example(t, name), &req); err != nil {
		t.Fatal(err)
	}
	req["uuid"] = uuid
	body, _ := json.Marshal(req)
	res := signCFE(t, baseURL, body)
	if res["codigo_respuesta"] != "00" {
		t.Fatalf("signing %s: %v", name, res)
	}
	return []byte(res["xml_firmado"].(string))
}

func getCaja[T any](t *testing.T, url string) T {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v T
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &v) != nil {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return v
}

// cajaFacts is what the browser test reads from the page.
type cajaFacts struct {
	Overflow    bool     `json:"overflow"`
	ScrollWidth int      `json:"scrollWidth"`
	Summary     string   `json:"summary"`
	Names       []string `json:"names"`
	Totals      []string `json:"totals"`
	Dates       []string `json:"dates"`
	DGI         []string `json:"dgi"`
	Message     string   `json:"message"`
	MessageOK   bool     `json:"messageOK"`
	CSP         []string `json:"csp"`
}

const readCaja = `(() => {
  const qa = s => [...document.querySelectorAll(s)], m = document.getElementById("mensaje");
  return {
    overflow: document.scrollingElement.scrollWidth > Math.min(window.innerWidth, document.documentElement.clientWidth),
    scrollWidth: document.scrollingElement.scrollWidth,
    summary: document.getElementById("resumen").textContent.trim(),
    names: qa("#resultados tr td.comprobante").map(e => e.textContent.trim()),
    totals: qa("#resultados tr td.total").map(e => e.textContent.trim()),
    dates: qa("#resultados tr td.fecha").map(e => e.textContent.trim()),
    dgi: qa("#resultados tr td.dgi").map(e => e.textContent.trim()),
    message: m.textContent.trim(), messageOK: m.classList.contains("ok"),
    csp: window.__csp || [],
  };
})()`

// cajaMoneyRE and cajaDateRE are the page's Uruguayan formats.
var (
	cajaMoneyRE = regexp.MustCompile(`^(\$|US\$) -?\d{1,3}(\.\d{3})*,\d{2}$`)
	cajaDateRE  = regexp.MustCompile(`^\d{2}/\d{2}/\d{4} \d{2}:\d{2}$`)
)

// TestCaja_browser is issue 33's done-when over the real binary in
// headless Chromium at 390 px: searches by number, by text and by date;
// a reprint from a result on the ESC/POS test printer; a manual sale
// printed; a credit note refused with a wrong PIN and issued with the
// right one; the day's close equal to the receipts' totals recomputed here
// from their signed XML; no CSP violation and no sideways scroll at any
// step.
func TestCaja_browser(t *testing.T) {
	testtool.Require(t, "chromium")
	a, pr := startCajaAgent(t, true)
	signed := map[string][]byte{
		"caja-ticket-1": signExampleAs(t, a.baseURL, "e-ticket.json", "caja-ticket-1"),
		"caja-factura":  signExampleAs(t, a.baseURL, "e-factura.json", "caja-factura"),
		"caja-dolares":  signExampleAs(t, a.baseURL, "e-ticket-dolares.json", "caja-dolares"),
		"caja-ticket-2": signExampleAs(t, a.baseURL, "e-ticket.json", "caja-ticket-2"),
	}
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	if info := getCaja[apitype.CajaInfo](t, a.baseURL+"/caja/info"); info.Impresora != "termica" || !info.NotasCredito {
		t.Fatalf("/caja/info: %+v", info)
	}

	ctx, facts := cajaBrowser(t)
	screenshot := func(name string) {
		t.Helper()
		if !*updateScreenshot {
			return
		}
		var png []byte
		if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(testtool.RepoRoot(t), "docs", name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// search fills the search form (every field named) and waits for the
	// answer's summary.
	search := func(fields map[string]string) cajaFacts {
		t.Helper()
		js := `(() => { document.querySelector("#pestanas button[data-pestana=buscar]").click();
		  const f = document.getElementById("busqueda"); f.reset();
		  document.getElementById("resumen").textContent = "";`
		for k, v := range fields {
			js += fmt.Sprintf("f.elements[%q].value = %q;", k, v)
		}
		js += `f.requestSubmit(); })()`
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, nil),
			chromedp.WaitVisible(`#resumen:not(:empty)`, chromedp.ByQuery)); err != nil {
			t.Fatalf("searching %v: %v", fields, err)
		}
		return facts(fmt.Sprint("search ", fields))
	}

	var cspRegistered page.ScriptIdentifier
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			cspRegistered, err = page.AddScriptToEvaluateOnNewDocument(watchCSP).Do(ctx)
			return err
		}),
		chromedp.Navigate(a.baseURL+"/caja"),
		chromedp.WaitVisible(`#resultados tr[data-uuid]`, chromedp.ByQuery),
	)
	if err != nil || cspRegistered == "" {
		t.Fatalf("loading /caja: %v\n%s", err, a.logs)
	}
	f := facts("first page")
	// Newest first (receipts signed in the same second by type and number,
	// higher first): the page shows /comprobantes' order, and that order
	// goes back in time.
	first := getCaja[apitype.Comprobantes](t, a.baseURL+"/comprobantes")
	var order []string
	for i, c := range first.Comprobantes {
		order = append(order, c.Nombre+" "+c.Serie+"-"+fmt.Sprint(c.Numero))
		if i > 0 && c.FechaFirma.After(first.Comprobantes[i-1].FechaFirma) {
			t.Errorf("/comprobantes is not newest first: %v", order)
		}
	}
	if first.Total != 4 || strings.Join(f.Names, ",") != strings.Join(order, ",") || !strings.Contains(strings.Join(order, ","), "e-Factura A-1") {
		t.Fatalf("first page lists %q, /comprobantes %q (total %d)", f.Names, order, first.Total)
	}
	dollars := 0
	for i := range f.Totals {
		if !cajaMoneyRE.MatchString(f.Totals[i]) || !cajaDateRE.MatchString(f.Dates[i]) {
			t.Errorf("row %d: total %q, date %q: not Uruguayan formats", i, f.Totals[i], f.Dates[i])
		}
		if strings.HasPrefix(f.Totals[i], "US$ ") != (f.Names[i] == "e-Ticket A-2") {
			t.Errorf("row %d (%s): total %q in the wrong currency", i, f.Names[i], f.Totals[i])
		}
		if strings.HasPrefix(f.Totals[i], "US$ ") {
			dollars++
		}
		if !strings.HasPrefix(f.DGI[i], "pendiente") {
			t.Errorf("row %d: DGI state %q, want pendiente", i, f.DGI[i])
		}
	}
	if dollars != 1 {
		t.Errorf("%d amounts in dollars, want 1: %q", dollars, f.Totals)
	}
	screenshot("caja-buscar-390.png")

	// The status page's receipts link here: its newest one, found alone.
	var linked string
	err = chromedp.Run(ctx,
		chromedp.Navigate(a.baseURL+"/"),
		chromedp.WaitVisible(`#recientes tr[data-uuid] a`, chromedp.ByQuery),
		chromedp.Text(`#recientes tr[data-uuid] td[data-label="Serie y número"]`, &linked, chromedp.ByQuery),
		chromedp.Click(`#recientes tr[data-uuid] a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#resultados tr[data-uuid]`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("from the status page to /caja: %v", err)
	}
	if f = facts("from the status page"); len(f.Names) != 1 || !strings.HasSuffix(f.Names[0], " "+strings.TrimSpace(linked)) || f.Names[0] != order[0] {
		t.Errorf("the status page's newest receipt (%s) opened /caja on %q, want %q alone", linked, f.Names, order[0])
	}

	// By number: e-Factura A-1 alone; by number alone, the two A-1.
	if f = search(map[string]string{"numero": "1", "tipo": "111"}); strings.Join(f.Names, ",") != "e-Factura A-1" {
		t.Errorf("by number and type: %q", f.Names)
	}
	if f = search(map[string]string{"numero": "1"}); len(f.Names) != 2 || !strings.Contains(strings.Join(f.Names, ","), "e-Factura A-1") {
		t.Errorf("by number: %q", f.Names)
	}
	// By text: the receiver's name (accents ignored), a line's name begun.
	if f = search(map[string]string{"texto": "direccion impositiva"}); strings.Join(f.Names, ",") != "e-Factura A-1" {
		t.Errorf("by receiver's name: %q", f.Names)
	}
	if f = search(map[string]string{"texto": "yerb"}); strings.Join(f.Names, ",") != "e-Ticket A-3,e-Ticket A-1" {
		t.Errorf("by a line's name: %q", f.Names)
	}
	// By date: today finds all; tomorrow nothing.
	uy := func(d cfe.Date) string { return fmt.Sprintf("%02d/%02d/%04d", d.Day, d.Month, d.Year) }
	if f = search(map[string]string{"desde": uy(today), "hasta": uy(today)}); len(f.Names) != 4 {
		t.Errorf("by date (today): %q", f.Names)
	}
	if f = search(map[string]string{"desde": uy(today.AddDays(1))}); len(f.Names) != 0 || f.Summary != "No se encontró ningún comprobante." {
		t.Errorf("by date (tomorrow): %q, %q", f.Names, f.Summary)
	}

	// Reprint from a result, on the default printer (the thermal one).
	search(map[string]string{"numero": "2", "tipo": "101"})
	before := len(pr.Received())
	err = chromedp.Run(ctx,
		chromedp.Click(`#resultados tr[data-uuid] button[data-accion=reimprimir]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#mensaje.ok, #mensaje.error`, chromedp.ByQuery))
	if err != nil {
		t.Fatal(err)
	}
	if f = facts("reprint"); !f.MessageOK || f.Message != "Se envió e-Ticket A-2 a la impresora termica." {
		t.Errorf("reprint: %q", f.Message)
	}
	if got := pr.Received()[before:]; !bytes.Contains(got, []byte("Serie A")) || !bytes.Contains(got, []byte("Auriculares")) {
		t.Errorf("the thermal printer did not get the receipt (%d bytes): %q", len(got), printable(got))
	}

	// A manual sale, printed on the default printer.
	before = len(pr.Received())
	err = chromedp.Run(ctx,
		chromedp.Click(`#pestanas button[data-pestana=venta]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#formventa`, chromedp.ByID),
		chromedp.SetValue(`#lineas [name=l-nombre]`, "Alfajor artesanal", chromedp.ByQuery),
		chromedp.SetValue(`#lineas [name=l-cantidad]`, "2", chromedp.ByQuery),
		chromedp.SetValue(`#lineas [name=l-precio]`, "45,50", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("formventa").dispatchEvent(new Event("input"))`, nil),
	)
	if err != nil {
		t.Fatal(err)
	}
	var shownTotal string
	if err := chromedp.Run(ctx, chromedp.Text("#venta-total", &shownTotal, chromedp.ByID)); err != nil || shownTotal != "$ 91,00" {
		t.Errorf("the form's total %q (%v), want $ 91,00 (prices include IVA)", shownTotal, err)
	}
	screenshot("caja-venta-390.png")
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`document.getElementById("mensaje").className = "message"`, nil),
		chromedp.Click(`#emitir`, chromedp.ByID),
		chromedp.WaitVisible(`#mensaje.ok, #mensaje.error`, chromedp.ByQuery))
	if err != nil {
		t.Fatal(err)
	}
	if f = facts("manual sale"); !f.MessageOK || f.Message != "e-Ticket A-4 emitido e impreso en termica." {
		t.Fatalf("manual sale: %q", f.Message)
	}
	if got := pr.Received()[before:]; !bytes.Contains(got, []byte("Alfajor artesanal")) {
		t.Errorf("the manual sale was not printed (%d bytes)", len(got))
	}
	sale := getCaja[apitype.Comprobantes](t, a.baseURL+"/comprobantes?texto=alfajor")
	if sale.Total != 1 || !sale.Comprobantes[0].Total.Equal(decimal.RequireFromString("91")) || sale.Comprobantes[0].Numero != 4 {
		t.Fatalf("/comprobantes after the manual sale: %+v", sale)
	}
	signed[sale.Comprobantes[0].UUID] = xmlOf(t, a.baseURL, sale.Comprobantes[0].UUID)

	// A credit note of the manual sale: a wrong PIN is refused, the right
	// one issues it.
	search(map[string]string{"texto": "alfajor"})
	credit := func(pin string) cajaFacts {
		t.Helper()
		err := chromedp.Run(ctx,
			chromedp.Evaluate(`document.getElementById("mensaje").className = "message"`, nil),
			chromedp.SetValue(`#formventa [name=pin]`, pin, chromedp.ByQuery),
			chromedp.Click(`#emitir`, chromedp.ByID),
			chromedp.WaitVisible(`#mensaje.ok, #mensaje.error`, chromedp.ByQuery))
		if err != nil {
			t.Fatal(err)
		}
		return facts("credit note")
	}
	err = chromedp.Run(ctx,
		chromedp.Click(`#resultados tr[data-uuid] button[data-accion=nota]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#nota`, chromedp.ByID),
		chromedp.SetValue(`#lineas [name=l-precio]`, "45.50", chromedp.ByQuery),
		chromedp.SetValue(`#lineas [name=l-cantidad]`, "2", chromedp.ByQuery))
	if err != nil {
		t.Fatal(err)
	}
	if f = credit("0000"); f.MessageOK || !strings.Contains(f.Message, "el PIN de supervisor no es correcto") {
		t.Errorf("a wrong PIN: %q", f.Message)
	}
	if got := getCaja[apitype.Comprobantes](t, a.baseURL+"/comprobantes?tipo=102"); got.Total != 0 {
		t.Fatalf("a wrong PIN issued a credit note: %+v", got)
	}
	if f = credit(cajaPIN); !f.MessageOK || f.Message != "Nota de Crédito de e-Ticket A-1 emitida e impresa en termica." {
		t.Fatalf("credit note with the PIN: %q", f.Message)
	}
	nc := getCaja[apitype.Comprobantes](t, a.baseURL+"/comprobantes?tipo=102")
	if nc.Total != 1 || !nc.Comprobantes[0].Total.Equal(decimal.RequireFromString("91")) {
		t.Fatalf("credit note: %+v", nc)
	}
	signed[nc.Comprobantes[0].UUID] = xmlOf(t, a.baseURL, nc.Comprobantes[0].UUID)

	// The day's close equals the receipts' totals, recomputed here from
	// their signed XML: sales add, the credit note subtracts.
	want := map[string]decimal.Decimal{}
	for uuid, x := range signed {
		doc, err := cfe.ParseXML(x)
		if err != nil {
			t.Fatalf("%s: %v", uuid, err)
		}
		sign := decimal.NewFromInt(1)
		if doc.IdDoc.TipoCFE == cfe.ETicketNC {
			sign = decimal.NewFromInt(-1)
		}
		cur := doc.Totales.Currency()
		want[cur] = want[cur].Add(doc.Totales.MntTotal.Mul(sign))
	}
	cl := getCaja[apitype.Cierre](t, a.baseURL+"/cierre?fecha="+today.String())
	if cl.Cantidad != len(signed) || len(cl.Totales) != len(want) || len(cl.Cajas) != 1 || cl.Reporte != nil {
		t.Fatalf("close: %+v, want %d receipts in %d currencies", cl, len(signed), len(want))
	}
	for _, m := range cl.Totales {
		if !m.Total.Equal(want[m.Moneda]) {
			t.Errorf("close in %s: %s, the receipts add up to %s", m.Moneda, m.Total, want[m.Moneda])
		}
		var pay decimal.Decimal
		for _, p := range m.MediosPago {
			pay = pay.Add(p.Total)
		}
		if !pay.Equal(m.Total) {
			t.Errorf("close in %s: means of payment add up to %s, the total is %s", m.Moneda, pay, m.Total)
		}
	}
	var nets []string
	err = chromedp.Run(ctx,
		chromedp.Click(`#pestanas button[data-pestana=cierre]`, chromedp.ByQuery),
		chromedp.Click(`#formcierre button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.cierre-total h3.neto`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll(".cierre-total h3.neto")].map(e => e.textContent)`, &nets))
	if err != nil {
		t.Fatal(err)
	}
	wantNets := []string{"Neto en UYU: $ " + uyuText(want["UYU"]), "Neto en USD: US$ " + uyuText(want["USD"])}
	if strings.Join(nets, "|") != strings.Join(wantNets, "|") {
		t.Errorf("the page's close %q, want %q", nets, wantNets)
	}
	facts("close")
	screenshot("caja-cierre-390.png")

	// The answers match openapi.json's schemas (python3-jsonschema).
	answers := map[string][]string{}
	for schema, path := range map[string]string{"Comprobantes": "/comprobantes?por_pagina=100", "Cierre": "/cierre?fecha=" + today.String(),
		"CajaInfo": "/caja/info"} {
		resp, err := http.Get(a.baseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers[schema] = append(answers[schema], string(b))
	}
	validateOpenAPI(t, answers)
}

// openAPIValidator validates JSON documents against one schema of
// openapi.json with python3-jsonschema's Draft 2020-12 validator, an
// implementation independent of the module (as localapi's
// TestOpenAPI_AnswersValidate does).
const openAPIValidator = `
import json, sys
import jsonschema
spec = json.load(open(sys.argv[1]))
root = {"$ref": "#/components/schemas/" + sys.argv[2], "components": spec["components"]}
v = jsonschema.Draft202012Validator(root)
for name in sys.argv[3:]:
    for e in v.iter_errors(json.load(open(name))):
        print("FAIL " + name + ": " + "/".join(map(str, e.absolute_path)) + " " + e.message)
`

func validateOpenAPI(t *testing.T, answers map[string][]string) {
	t.Helper()
	py := testtool.Require(t, "python3")
	if out, err := exec.Command(py, "-c", "import jsonschema").CombinedOutput(); err != nil {
		if os.Getenv("CFE_STRICT_TOOLS") == "1" {
			t.Fatalf("python3-jsonschema is not installed (CFE_STRICT_TOOLS=1): %s", out)
		}
		t.Skipf("python3-jsonschema is not installed: %s", out)
	}
	dir := t.TempDir()
	spec, script := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "v.py")
	if err := os.WriteFile(spec, localapi.OpenAPI, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(openAPIValidator), 0o600); err != nil {
		t.Fatal(err)
	}
	for schema, docs := range answers {
		var files []string
		for i, d := range docs {
			f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", schema, i))
			if err := os.WriteFile(f, []byte(d), 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		out, err := exec.Command(py, append([]string{script, spec, schema}, files...)...).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("answers against %s: %v\n%s", schema, err, out)
		}
	}
}

// uyuText writes an amount as the page does: 1.234,50.
func uyuText(d decimal.Decimal) string {
	s := d.StringFixed(2)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String() + "," + frac
}

// xmlOf downloads a receipt's signed XML as the page does.
func xmlOf(t *testing.T, baseURL, uuid string) []byte {
	t.Helper()
	resp, err := http.Get(baseURL + "/caja/xml?uuid=" + uuid)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("GET /caja/xml: %d %v", resp.StatusCode, resp.Header)
	}
	return b
}

// printable keeps the printable ASCII of b, for a failure's message.
func printable(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r >= 32 && r < 127 {
			return r
		}
		return ' '
	}, string(b))
}

// cajaPost posts a sale to /caja/venta with the headers given, and returns
// the status, the Retry-After header and the body.
func cajaPost(t *testing.T, baseURL string, headers map[string]string, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+"/caja/venta", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), b
}

// pageTokenOf loads /caja and returns its page token.
func pageTokenOf(t *testing.T, baseURL string) string {
	t.Helper()
	resp, err := http.Get(baseURL + "/caja")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`data-pagina="([^"]+)"`).FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET /caja: %d, no page token", resp.StatusCode)
	}
	return string(m[1])
}

// TestCaja_ventaRefused: POST /caja/venta sells only for a page the agent
// served (its Origin, Sec-Fetch-Site and page token); a sale the agent
// cannot make and a credit note without a PIN configured are refused with
// their Spanish reason; and none of them consumes a number.
func TestCaja_ventaRefused(t *testing.T) {
	t.Parallel()
	a, _ := startCajaAgent(t, false)
	token := pageTokenOf(t, a.baseURL)
	page := map[string]string{"Origin": a.baseURL, "Sec-Fetch-Site": "same-origin", "X-CFE-Pagina": token}
	sale := func(uuid string) string {
		return `{"uuid":"` + uuid + `","tipo":101,"no_imprimir":true,"lineas":[{"nombre":"Caramelos","cantidad":"3","precio":"10"}]}`
	}
	with := func(edit map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range page {
			h[k] = v
		}
		for k, v := range edit {
			if v == "" {
				delete(h, k)
			} else {
				h[k] = v
			}
		}
		return h
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		says    string
	}{
		{"no Origin", with(map[string]string{"Origin": ""}), sale("r1"), 403, "solo la página de caja del agente puede emitir"},
		{"another site", with(map[string]string{"Origin": "http://tienda.example", "Sec-Fetch-Site": "cross-site"}), sale("r2"), 403, "origen"},
		{"same site, another port", with(map[string]string{"Sec-Fetch-Site": "same-site"}), sale("r3"), 403, ""},
		{"no page token", with(map[string]string{"X-CFE-Pagina": ""}), sale("r4"), 403, "recárguela"},
		{"a forged page token", with(map[string]string{"X-CFE-Pagina": "1700000000.AAAA"}), sale("r5"), 403, "recárguela"},
		{"no lines", page, `{"uuid":"r6","tipo":101,"lineas":[]}`, 400, "agregue al menos una línea"},
		{"an e-Factura without RUC", page, `{"uuid":"r7","tipo":111,"lineas":[{"nombre":"x","cantidad":"1","precio":"1"}]}`, 400, "RUC"},
		{"an unknown field", page, `{"uuid":"r8","tipo":101,"descuento":5,"lineas":[{"nombre":"x","cantidad":"1","precio":"1"}]}`, 400, "descuento"},
		{"a credit note without a PIN configured", page,
			`{"uuid":"r9","tipo":102,"pin":"1234","referencia":{"uuid":"x","razon":"Devolución"},"lineas":[{"nombre":"x","cantidad":"1","precio":"1"}]}`,
			403, "no hay un PIN de supervisor configurado"},
	} {
		status, _, body := cajaPost(t, a.baseURL, tc.headers, tc.body)
		if status != tc.status || !strings.Contains(string(body), tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, status, body, tc.status, tc.says)
		}
	}
	status, _, body := cajaPost(t, a.baseURL, page, sale("r-ok"))
	var res apitype.VentaCajaResultado
	if status != 200 || json.Unmarshal(body, &res) != nil || res.Firma.CodigoRespuesta != "00" || res.Firma.Numero != 1 || res.Impreso {
		t.Fatalf("the page's sale: %d %s, want e-Ticket A-1 signed (no refusal consumed a number), not printed", status, body)
	}
	validateOpenAPI(t, map[string][]string{"VentaCajaResultado": {string(body)}})
	if got := getCaja[apitype.CajaInfo](t, a.baseURL+"/caja/info"); got.NotasCredito || !strings.Contains(got.Motivo, "PIN de supervisor") {
		t.Errorf("/caja/info without a PIN: %+v", got)
	}
}

// TestCaja_wrongPINThrottled: wrong supervisor PINs are refused, and after
// five the agent makes every caller wait (429, Retry-After), even with the
// right PIN, before it issues a credit note.
func TestCaja_wrongPINThrottled(t *testing.T) {
	t.Parallel()
	a, _ := startCajaAgent(t, true)
	signExampleAs(t, a.baseURL, "e-ticket.json", "pin-original")
	page := map[string]string{"Origin": a.baseURL, "X-CFE-Pagina": pageTokenOf(t, a.baseURL)}
	note := func(pin string) string {
		return `{"uuid":"pin-nota","tipo":102,"no_imprimir":true,"pin":"` + pin +
			`","referencia":{"uuid":"pin-original","razon":"Devolución"},"lineas":[{"nombre":"Yerba mate 1 kg","cantidad":"1","precio":"152.50"}]}`
	}
	for i := range 5 {
		if status, _, body := cajaPost(t, a.baseURL, page, note(fmt.Sprint(1000+i))); status != 403 || !strings.Contains(string(body), "el PIN de supervisor no es correcto") {
			t.Fatalf("wrong PIN %d: %d %s", i+1, status, body)
		}
	}
	for _, pin := range []string{"9999", cajaPIN} {
		status, retry, body := cajaPost(t, a.baseURL, page, note(pin))
		if status != 429 || retry == "" || !strings.Contains(string(body), "demasiados PIN incorrectos") {
			t.Fatalf("after 5 wrong PINs, PIN %s: %d (Retry-After %q) %s, want 429", pin, status, retry, body)
		}
	}
	if got := getCaja[apitype.Comprobantes](t, a.baseURL+"/comprobantes?tipo=102"); got.Total != 0 {
		t.Fatalf("a credit note was issued: %+v", got)
	}
}

// TestCLI_CajaPIN: "cfe-agent caja pin" turns the PIN it reads into a bcrypt
// hash that verifies that PIN only (a new salt each time), and refuses a
// PIN that is not 4 to 12 digits.
func TestCLI_CajaPIN(t *testing.T) {
	t.Parallel()
	run := func(stdin string) (string, error) {
		cmd := exec.Command(agentBinary(t), "caja", "pin")
		cmd.Env = agentEnv("CFE_AGENT_DATA_DIR=" + t.TempDir())
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	first, err := run("4821\n")
	if err != nil {
		t.Fatalf("caja pin: %v: %s", err, first)
	}
	second, err := run("4821")
	if err != nil || second == first {
		t.Fatalf("caja pin again: %v: %q (first %q): want another salt", err, second, first)
	}
	for _, h := range []string{first, second} {
		if c := (profiles.Caja{SupervisorPINHash: h}); !c.CheckPIN("4821") || c.CheckPIN("4822") || c.CheckPIN("") {
			t.Errorf("the hash %q does not verify 4821 alone", h)
		}
	}
	for _, bad := range []string{"12\n", "12ab\n", "1234567890123\n", ""} {
		if out, err := run(bad); err == nil || !strings.Contains(out, "PIN") {
			t.Errorf("caja pin with %q: %v %q, want refused in Spanish", bad, err, out)
		}
	}
}

// watchCSP keeps every CSP violation the page meets in window.__csp (a
// script the browser runs before the page's own, outside its CSP).
const watchCSP = `window.__csp = []; document.addEventListener("securitypolicyviolation",
  e => window.__csp.push(e.violatedDirective + " " + e.blockedURI));`

// cajaBrowser starts a headless Chromium for a test of the /caja page and
// returns its context (three minutes at most) and facts, which reads the
// page (readCaja) and fails the test when it scrolls sideways at 390 px or
// met a CSP violation.
func cajaBrowser(t *testing.T) (context.Context, func(step string) cajaFacts) {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		browser.Options(t, chromedp.Flag("hide-scrollbars", true))...)
	t.Cleanup(cancelAlloc)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Run(bctx); err != nil {
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	facts := func(step string) cajaFacts {
		t.Helper()
		var f cajaFacts
		if err := chromedp.Run(ctx, chromedp.Evaluate(readCaja, &f)); err != nil {
			t.Fatalf("%s: reading the page: %v", step, err)
		}
		if f.Overflow {
			t.Errorf("%s: the page scrolls sideways at 390 px (scrollWidth %d)", step, f.ScrollWidth)
		}
		if len(f.CSP) > 0 {
			t.Errorf("%s: CSP violations %q", step, f.CSP)
		}
		return f
	}
	return ctx, facts
}
