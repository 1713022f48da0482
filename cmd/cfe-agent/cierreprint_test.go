package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// cierreLines is what a printed close must show, from GET /cierre's JSON:
// each till's count, its receipts by type and currency with their counts
// (credit notes negative), and each net (the till's and the day's) with
// its means of payment and IVA rates, amounts written here the Uruguayan
// way.
func cierreLines(cl apitype.Cierre) []string {
	money := func(cur string, d decimal.Decimal) string {
		if d.IsNegative() {
			return cur + " -" + uyuText(d.Neg())
		}
		return cur + " " + uyuText(d)
	}
	var want []string
	nets := func(ms []apitype.CierreMoneda) {
		for _, m := range ms {
			want = append(want, "Neto "+m.Moneda+" "+money(m.Moneda, m.Total))
			for _, p := range m.MediosPago {
				want = append(want, "Pago "+p.Nombre+" "+money(m.Moneda, p.Total))
			}
			for _, v := range m.IVA {
				want = append(want, "IVA "+v.Tasa+": neto "+money(m.Moneda, v.Neto),
					"IVA "+v.Tasa+": impuesto "+money(m.Moneda, v.Impuesto))
			}
		}
	}
	for _, till := range cl.Cajas {
		want = append(want, "Caja serie "+till.Serie)
		for _, tp := range till.Tipos {
			for _, m := range tp.Montos {
				v := m.Total
				if tp.Signo < 0 {
					v = v.Neg()
				}
				want = append(want, m.Moneda+" ("+strconv.Itoa(m.Cantidad)+") "+money(m.Moneda, v))
			}
		}
		nets(till.Neto)
	}
	want = append(want, "Totales del día")
	nets(cl.Totales)
	return want
}

// TestCierre_printed is issue 33's "printable as PDF and on a thermal
// printer" over the real binary: after sales in pesos and dollars and a
// credit note, the close's PDF (A4 and 80 mm roll), read by pdftotext,
// and the close printed on the ESC/POS test printer, read by escpos-tools'
// esc2text, show every total of GET /cierre's JSON.
func TestCierre_printed(t *testing.T) {
	t.Parallel()
	a, pr := startCajaAgent(t, false)
	signExampleAs(t, a.baseURL, "e-ticket.json", "cierre-ticket-1")
	signExampleAs(t, a.baseURL, "e-ticket.json", "cierre-ticket-2")
	signExampleAs(t, a.baseURL, "e-ticket-dolares.json", "cierre-dolares")
	signExampleAs(t, a.baseURL, "e-factura.json", "cierre-factura")
	signExampleAs(t, a.baseURL, "nota-credito-e-ticket.json", "cierre-nc")
	today := cfe.DateOf(time.Now().In(cfe.Montevideo)).String()
	cl := getCaja[apitype.Cierre](t, a.baseURL+"/cierre?fecha="+today)
	if cl.Cantidad != 5 || len(cl.Totales) < 2 {
		t.Fatalf("the close of %s: %+v", today, cl)
	}
	want := cierreLines(cl)

	for _, formato := range []string{"a4", "rollo"} {
		resp, err := http.Get(a.baseURL + "/cierre/pdf?fecha=" + today + "&formato=" + formato)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("GET /cierre/pdf (%s): %d %s", formato, resp.StatusCode, b)
		}
		text := pdfText(t, b)
		testtool.MustContain(t, "the close's PDF ("+formato+")", text, want...)
	}

	before := len(pr.Received())
	body, _ := json.Marshal(map[string]string{"fecha": today})
	req, err := http.NewRequest(http.MethodPost, a.baseURL+"/cierre/imprimir", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", a.baseURL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("X-CFE-Pagina", pageTokenOf(t, a.baseURL))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct {
		Impreso bool   `json:"impreso"`
		Formato string `json:"formato"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil || !got.Impreso || got.Formato != "escpos" {
		t.Fatalf("POST /cierre/imprimir: %d %s", resp.StatusCode, b)
	}
	// The agent answered once the printer's connection took the job; the
	// test printer may still be reading it: wait for the rule that closes
	// the report (the second of the two rules of "=").
	var data []byte
	rule := []byte(strings.Repeat("=", 32))
	for deadline := time.Now().Add(30 * time.Second); ; {
		data = pr.Received()[before:]
		if bytes.Count(data, rule) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	text := thermal.Text(t, data, charmap.CodePage858)
	if !strings.Contains(text, "Cierre del día") {
		t.Errorf("the thermal printer's text lacks the title:\n%s", text)
	}
	testtool.MustContain(t, "the close on the thermal printer", text, want...)
}

// TestCierre_pageButton: on the /caja page (headless Chromium, 390 px), the
// close's "Imprimir en la impresora" button prints the day's close on the
// default printer (the ESC/POS test printer) and says so, with no CSP
// violation and no sideways scroll.
func TestCierre_pageButton(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "chromium")
	a, pr := startCajaAgent(t, false)
	signExampleAs(t, a.baseURL, "e-ticket.json", "cierre-boton")
	today := cfe.DateOf(time.Now().In(cfe.Montevideo)).String()
	cl := getCaja[apitype.Cierre](t, a.baseURL+"/cierre?fecha="+today)

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), browser.Options(t)...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(bctx, 2*time.Minute)
	defer cancelTimeout()
	const watchCSP = `window.__csp = []; document.addEventListener("securitypolicyviolation",
	  e => window.__csp.push(e.violatedDirective + " " + e.blockedURI));`
	var f cajaFacts
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(watchCSP).Do(ctx)
			return err
		}),
		chromedp.Navigate(a.baseURL+"/caja"),
		chromedp.WaitVisible(`#resultados tr[data-uuid]`, chromedp.ByQuery),
		chromedp.Click(`#pestanas button[data-pestana=cierre]`, chromedp.ByQuery),
		chromedp.Click(`#formcierre button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.cierre-total h3.neto`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const m = document.getElementById("mensaje"); m.textContent = ""; m.className = "message"; })()`, nil),
		chromedp.Click(`#imprimir-cierre-agente`, chromedp.ByQuery),
		chromedp.WaitVisible(`#mensaje.ok, #mensaje.error`, chromedp.ByQuery),
		chromedp.Evaluate(readCaja, &f),
	)
	if err != nil {
		t.Fatalf("printing the close from the page: %v\n%s", err, a.logs)
	}
	if !f.MessageOK || !strings.HasPrefix(f.Message, "Se envió el cierre del ") {
		t.Fatalf("the page says %q (ok %v)", f.Message, f.MessageOK)
	}
	if f.Overflow || len(f.CSP) > 0 {
		t.Errorf("the page scrolls sideways (%v, %d px) or met CSP violations %q", f.Overflow, f.ScrollWidth, f.CSP)
	}
	// The agent answered the page once the printer's connection took the
	// job; wait for the test printer to have read the report's last rule.
	rule := []byte(strings.Repeat("=", 32))
	for deadline := time.Now().Add(30 * time.Second); bytes.Count(pr.Received(), rule) < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	m := cl.Totales[0]
	testtool.MustContain(t, "the close printed from the page", thermal.Text(t, pr.Received(), charmap.CodePage858),
		"Cierre del día", "Neto "+m.Moneda+" "+m.Moneda+" "+uyuText(m.Total))
}
