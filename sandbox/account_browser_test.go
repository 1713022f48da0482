package sandbox_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

var accountScreenshot = flag.Bool("screenshot", false, "rewrite docs/sandbox-cuenta.png from the account area's browser test")

// wantAccountCSP is the policy the brief asks for, made stricter: forms are
// never submitted (the script handles them) and Trusted Types are enforced.
const wantAccountCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

// TestAccount_files checks the account area's files and headers without a
// browser.
func TestAccount_files(t *testing.T) {
	t.Parallel()
	e := start(t)
	for _, c := range []struct{ path, ctype, has string }{
		{"/cuenta/", "text/html; charset=utf-8", `<html lang="es">`},
		{"/cuenta/cuenta.js", "text/javascript; charset=utf-8", "sessionStorage"},
		{"/cuenta/cuenta.css", "text/css; charset=utf-8", ".barra"},
		{"/cuenta/icono.svg", "image/svg+xml", "<svg"},
	} {
		r := e.do("GET", c.path, nil).expect(t, http.StatusOK)
		if got := r.header.Get("Content-Type"); got != c.ctype {
			t.Errorf("%s: Content-Type %q, want %q", c.path, got, c.ctype)
		}
		if got := r.header.Get("Content-Security-Policy"); got != wantAccountCSP {
			t.Errorf("%s: CSP %q", c.path, got)
		}
		for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", c.path, h, got, want)
			}
		}
		body := string(r.body)
		if !strings.Contains(body, c.has) {
			t.Errorf("%s lacks %q", c.path, c.has)
		}
		// No outside resource: the only absolute URL is the SVG namespace.
		if rest := strings.ReplaceAll(body, "http://www.w3.org/2000/svg", ""); strings.Contains(rest, "http://") || strings.Contains(rest, "https://") {
			t.Errorf("%s refers to an outside resource", c.path)
		}
	}
	html := string(e.do("GET", "/cuenta/", nil).body)
	for _, inline := range []string{"<script>", "<style", " style=", " onclick=", " onload="} {
		if strings.Contains(html, inline) {
			t.Errorf("the page has inline code (%q), which its CSP forbids", inline)
		}
	}
	r := e.do("GET", "/cuenta", nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `lang="es"`) { // the client followed the redirect
		t.Errorf("/cuenta: %d %s", r.status, r.body)
	}
	for _, p := range []string{"/cuenta/nada.html", "/cuenta/../server.go", "/cuenta/cuenta", "/cuenta/sub/"} {
		if b := e.do("GET", p, nil).expect(t, http.StatusNotFound).errBody(t); b.Code != cfe.ENOTFOUND {
			t.Errorf("%s: %+v", p, b)
		}
	}
	e.do("POST", "/cuenta/", "x").expect(t, http.StatusBadRequest)
}

// consoleWatch collects what the page reports: JavaScript exceptions and
// console and log entries.
type consoleWatch struct {
	mu      sync.Mutex
	entries []string
}

func (w *consoleWatch) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.entries = append(w.entries, s)
}

func (w *consoleWatch) matching(words ...string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.entries {
		for _, word := range words {
			if strings.Contains(e, word) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// cspSpy records the page's securitypolicyviolation events in window.__csp.
const cspSpy = `window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));`

// bar is a chart bar as the page drew it.
type bar struct {
	Periodo  string  `json:"periodo"`
	Monto    string  `json:"monto"`
	Cantidad string  `json:"cantidad"`
	Height   float64 `json:"height"`
	Negative bool    `json:"negative"`
}

const readBars = `(sel) => [...document.querySelectorAll(sel + " svg rect.barra")].map((r) => ({
  periodo: r.dataset.periodo, monto: r.dataset.monto, cantidad: r.dataset.cantidad,
  height: Number(r.getAttribute("height")), negative: r.classList.contains("negativa")}))`

func barsOf(ctx context.Context, t *testing.T, sel string) []bar {
	t.Helper()
	var bars []bar
	if err := chromedp.Run(ctx, chromedp.Evaluate("("+readBars+")("+fmt.Sprintf("%q", sel)+")", &bars)); err != nil {
		t.Fatal(err)
	}
	return bars
}

// TestAccount_browser uses the account area in headless Chromium as a user
// would: log in, see the charts and the issued CFEs, download a PDF, create
// a key and see it once, set its limits, revoke it, log out; with no CSP
// violation on the way.
func TestAccount_browser(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "chromium")
	e := start(t)
	chartFixture(t, e)
	downloads := t.TempDir()

	opts := browser.Options(t, chromedp.WindowSize(1200, 900), chromedp.Flag("lang", "es-UY"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 120*time.Second)
	defer cancelTimeout()

	watch := &consoleWatch{}
	done := make(chan string, 4)
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			watch.add("exception: " + ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			watch.add("console." + string(ev.Type) + ": " + strings.Join(parts, " "))
		case *log.EventEntryAdded:
			watch.add("log " + string(ev.Entry.Level) + ": " + ev.Entry.Text)
		case *cdpbrowser.EventDownloadProgress:
			// Download events come on the session that asked for them.
			if ev.State == cdpbrowser.DownloadProgressStateCompleted {
				done <- ev.GUID
			}
		}
	})
	run := func(t *testing.T, what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\npage console: %v", what, err, watch.matching(""))
		}
	}
	run(t, "starting", log.Enable(),
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(cspSpy).Do(ctx)
			return err
		}),
		cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName).
			WithDownloadPath(downloads).WithEventsEnabled(true))

	base := e.url + "/cuenta/"
	t.Run("log in", func(t *testing.T) {
		var errText string
		run(t, "a wrong password", chromedp.Navigate(base),
			chromedp.WaitVisible("#usuario", chromedp.ByID),
			chromedp.SendKeys("#usuario", "ana", chromedp.ByID),
			chromedp.SendKeys("#clave", "no-es-la-clave", chromedp.ByID),
			chromedp.Click("#ingresar", chromedp.ByID),
			chromedp.WaitVisible("#mensaje.error", chromedp.ByQuery),
			chromedp.Text("#mensaje", &errText, chromedp.ByID))
		if !strings.Contains(errText, "usuario o clave incorrectos") {
			t.Errorf("a failed login shows %q", errText)
		}
		var company string
		run(t, "logging in", chromedp.SetValue("#clave", anaPassword, chromedp.ByID),
			chromedp.Click("#ingresar", chromedp.ByID),
			chromedp.WaitVisible("#comprobantes", chromedp.ByID),
			chromedp.Text("#empresa-nombre", &company, chromedp.ByID))
		if !strings.Contains(company, "Alfa S.A.") || !strings.Contains(company, rucAlfa) {
			t.Errorf("the company shown is %q", company)
		}
	})

	t.Run("charts", func(t *testing.T) {
		run(t, "waiting for the charts",
			chromedp.WaitVisible("#grafica-diaria svg rect.barra", chromedp.ByQuery),
			chromedp.WaitVisible("#grafica-mensual svg rect.barra", chromedp.ByQuery))
		// UYU: today 830 (two e-Tickets, a collection, a credit and a debit
		// note, a remito); months 2025-04 and 2026-01 415 each.
		daily := barsOf(ctx, t, "#grafica-diaria")
		if len(daily) != 30 || daily[0].Periodo != "2026-02-01" || daily[29].Periodo != "2026-03-02" {
			t.Fatalf("daily bars %+v", daily)
		}
		for _, b := range daily {
			want := "0"
			if b.Periodo == "2026-03-02" {
				want = "830"
			}
			if b.Monto != want || (want == "0") != (b.Height == 0) || b.Negative {
				t.Errorf("daily bar %+v, want amount %s", b, want)
			}
		}
		if daily[29].Cantidad != "6" {
			t.Errorf("today's bar counts %s UYU CFEs, want 6", daily[29].Cantidad)
		}
		monthly := barsOf(ctx, t, "#grafica-mensual")
		if len(monthly) != 12 || monthly[0].Periodo != "2025-04" || monthly[11].Periodo != "2026-03" {
			t.Fatalf("monthly bars %+v", monthly)
		}
		want := map[string]string{"2025-04": "415", "2026-01": "415", "2026-03": "830"}
		for _, b := range monthly {
			w := want[b.Periodo]
			if w == "" {
				w = "0"
			}
			if b.Monto != w || (w == "0") != (b.Height == 0) {
				t.Errorf("monthly bar %+v, want amount %s", b, w)
			}
		}
		// Bars are proportional: 830 is twice 415.
		if r := monthly[11].Height / monthly[0].Height; r < 1.99 || r > 2.01 {
			t.Errorf("the 830 bar is %.3f times the 415 bar", r)
		}
		var total string
		run(t, "reading the total", chromedp.Text("#total-mensual", &total, chromedp.ByID))
		if !strings.Contains(total, "1.660,00 UYU") {
			t.Errorf("the monthly total says %q", total)
		}
		run(t, "choosing dollars", chromedp.SetValue("#moneda", "USD", chromedp.ByID),
			chromedp.Evaluate(`document.getElementById("moneda").dispatchEvent(new Event("change"))`, nil))
		for _, b := range barsOf(ctx, t, "#grafica-diaria") {
			w := "0"
			if b.Periodo == "2026-02-01" {
				w = "100"
			}
			if b.Monto != w || (w == "0") != (b.Height == 0) {
				t.Errorf("daily USD bar %+v, want amount %s", b, w)
			}
		}
	})

	t.Run("issued CFEs and a PDF", func(t *testing.T) {
		var rows int
		var from, to string
		run(t, "reading the list", chromedp.WaitVisible("#cfes-lista tbody tr", chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll("#cfes-lista tbody tr").length`, &rows),
			chromedp.Value("#desde", &from, chromedp.ByID), chromedp.Value("#hasta", &to, chromedp.ByID))
		// The 30 days: the dollar e-Ticket and today's seven CFEs; not Beta's.
		if from != "2026-02-01" || to != "2026-03-02" || rows != 7 {
			t.Errorf("%d rows from %s to %s, want 7 from 2026-02-01 to 2026-03-02", rows, from, to)
		}
		var first string
		run(t, "clicking a day's bar", chromedp.Click(`#grafica-diaria rect[data-periodo="2026-02-01"]`, chromedp.ByQuery),
			chromedp.WaitNotPresent(`#cfes-lista tbody tr:nth-child(2)`, chromedp.ByQuery),
			chromedp.Text("#cfes-lista tbody tr td:nth-child(3)", &first, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll("#cfes-lista tbody tr").length`, &rows))
		if rows != 1 || first != "H-4" {
			t.Errorf("the bar of 2026-02-01 lists %d rows, first %q; want the dollar e-Ticket H-4", rows, first)
		}
		run(t, "downloading its PDF", chromedp.Click("#cfes-lista a.pdf", chromedp.ByQuery))
		var guid string
		select {
		case guid = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the PDF download did not complete")
		}
		doc, err := os.ReadFile(filepath.Join(downloads, guid))
		if err != nil {
			t.Fatal(err)
		}
		text := pdfTool(t, "pdftotext", doc)
		for _, want := range []string{"Alfa S.A.", "e-Ticket", "USD", "Servicio"} {
			if !strings.Contains(text, want) {
				t.Errorf("the downloaded PDF does not show %q:\n%s", want, text)
			}
		}
	})

	var newKey string
	t.Run("create a key and see it once", func(t *testing.T) {
		var rows int
		run(t, "opening the keys", chromedp.Click("#ir-claves", chromedp.ByID),
			chromedp.WaitVisible("#claves-lista tbody tr", chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll("#claves-lista tbody tr").length`, &rows))
		if rows != 2 { // caja 1 and limitada
			t.Errorf("%d keys listed, want Alfa's 2", rows)
		}
		run(t, "creating a key", chromedp.SendKeys("#clave-nombre", "caja web", chromedp.ByID),
			chromedp.SendKeys("#clave-descripcion", "creada desde la cuenta", chromedp.ByID),
			chromedp.Click("#crear-clave", chromedp.ByID),
			chromedp.WaitVisible("#clave-nueva", chromedp.ByID),
			chromedp.Text("#clave-valor", &newKey, chromedp.ByID),
			chromedp.WaitVisible(`#claves-lista tbody tr:nth-child(3)`, chromedp.ByQuery))
		if !strings.HasPrefix(newKey, "xx_test_") || len(newKey) < 40 {
			t.Fatalf("the page shows the new key as %q", newKey)
		}
		// The key works, for Alfa.
		var companies []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", newKey).expect(t, http.StatusOK).decode(t, &companies)
		if len(companies) != 1 || companies[0].RUC != rucAlfa {
			t.Errorf("the new key acts for %+v", companies)
		}
		var stored string
		run(t, "reading the storage", chromedp.Evaluate(`JSON.stringify(sessionStorage) + JSON.stringify(localStorage) + document.cookie`, &stored))
		if strings.Contains(stored, newKey) {
			t.Error("the page stored the new key")
		}
		var html string
		run(t, "reloading", chromedp.Reload(),
			chromedp.WaitVisible(`#claves-lista tbody tr:nth-child(3)`, chromedp.ByQuery),
			chromedp.OuterHTML("html", &html, chromedp.ByQuery))
		if strings.Contains(html, newKey) {
			t.Error("after a reload the page still shows the new key")
		}
		if !strings.Contains(html, "caja web") || !strings.Contains(html, newKey[:12]) {
			t.Error("after a reload the new key is not listed by name and prefix")
		}
	})

	keyRow := `#claves-lista tr[data-estado="activa"]:last-child`
	keyInfo := func(t *testing.T) auth.KeyResponse {
		t.Helper()
		var keys []auth.KeyResponse
		e.do("GET", "/api/v1/apikeys", nil, bearer(e.login("ana", anaPassword).Token)...).expect(t, http.StatusOK).decode(t, &keys)
		for _, k := range keys {
			if k.Nombre == "caja web" {
				return k
			}
		}
		t.Fatal("the key made in the page is not listed")
		return auth.KeyResponse{}
	}

	t.Run("set limits", func(t *testing.T) {
		var msg string
		run(t, "refusing an hour limit under the minute's",
			chromedp.SetValue(keyRow+" input.por-minuto", "7", chromedp.ByQuery),
			chromedp.SetValue(keyRow+" input.por-hora", "5", chromedp.ByQuery),
			chromedp.Click(keyRow+" button.guardar-limites", chromedp.ByQuery),
			chromedp.WaitVisible("#mensaje.error", chromedp.ByQuery),
			chromedp.Text("#mensaje", &msg, chromedp.ByID))
		if !strings.Contains(msg, "limitePorHora") {
			t.Errorf("bad limits show %q", msg)
		}
		if k := keyInfo(t); k.LimitePorMinuto == 7 {
			t.Errorf("refused limits were saved: %+v", k)
		}
		run(t, "saving limits",
			chromedp.SetValue(keyRow+" input.por-hora", "70", chromedp.ByQuery),
			chromedp.Click(keyRow+" button.guardar-limites", chromedp.ByQuery),
			chromedp.WaitVisible("#mensaje.ok", chromedp.ByQuery),
			chromedp.Text("#mensaje", &msg, chromedp.ByID))
		if !strings.Contains(msg, "límites") {
			t.Errorf("saved limits show %q", msg)
		}
		if k := keyInfo(t); k.LimitePorMinuto != 7 || k.LimitePorHora != 70 {
			t.Errorf("limits %d/%d, want 7/70", k.LimitePorMinuto, k.LimitePorHora)
		}
		r := e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", newKey).expect(t, http.StatusOK)
		if r.header.Get("X-RateLimit-Limit-Minute") != "7" || r.header.Get("X-RateLimit-Limit-Hour") != "70" {
			t.Errorf("the key's requests are limited %s/%s", r.header.Get("X-RateLimit-Limit-Minute"), r.header.Get("X-RateLimit-Limit-Hour"))
		}
	})

	t.Run("revoke", func(t *testing.T) {
		id := fmt.Sprint(keyInfo(t).ID)
		row := `#claves-lista tr[data-id="` + id + `"]`
		var label string
		run(t, "asking to revoke", chromedp.Click(row+" button.revocar", chromedp.ByQuery),
			chromedp.Text(row+" button.revocar", &label, chromedp.ByQuery))
		if label != "Confirmar revocación" {
			t.Errorf("the first click shows %q", label)
		}
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", newKey).expect(t, http.StatusOK) // not yet
		run(t, "confirming", chromedp.Click(row+" button.revocar", chromedp.ByQuery),
			chromedp.WaitVisible(row+`[data-estado="revocada"]`, chromedp.ByQuery))
		if b := e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", newKey).expect(t, http.StatusUnauthorized).errBody(t); b.Error != "API key revocada" {
			t.Errorf("the revoked key gets %+v", b)
		}
		if k := keyInfo(t); k.Estado != "revocada" {
			t.Errorf("key state %q", k.Estado)
		}
	})

	if *accountScreenshot {
		var png []byte
		run(t, "screenshot", chromedp.Navigate(base+"#comprobantes"),
			chromedp.WaitVisible("#cfes-lista tbody tr", chromedp.ByQuery),
			chromedp.FullScreenshot(&png, 100))
		if err := os.WriteFile(filepath.Join(testtool.RepoRoot(t), "docs", "sandbox-cuenta.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("no CSP violation, and the check sees one", func(t *testing.T) {
		var seen []string
		run(t, "reading the violations", chromedp.Evaluate(`window.__csp`, &seen))
		if len(seen) != 0 {
			t.Errorf("CSP violations: %v", seen)
		}
		if bad := watch.matching("Content Security Policy", "Trusted Type", "exception"); len(bad) != 0 {
			t.Errorf("the console reports: %v", bad)
		}
		// A control: an image of another origin (another loopback port) is
		// refused, and the refusal is seen.
		run(t, "loading an outside image", chromedp.Evaluate(`(() => { const i = document.createElement("img");
  i.src = "http://127.0.0.1:1/x.png"; document.body.append(i); })()`, nil),
			chromedp.Poll(`window.__csp.length > 0`, nil, chromedp.WithPollingTimeout(5*time.Second)),
			chromedp.Evaluate(`window.__csp`, &seen))
		if len(seen) != 1 || !strings.HasPrefix(seen[0], "img-src") {
			t.Errorf("an outside image raised %v, want one img-src violation", seen)
		}
	})

	t.Run("log out", func(t *testing.T) {
		var token, after string
		run(t, "reading the token", chromedp.Evaluate(`sessionStorage.getItem("cfe-sandbox-jwt") || ""`, &token))
		if token == "" {
			t.Fatal("no session token in sessionStorage")
		}
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(token)...).expect(t, http.StatusOK)
		run(t, "logging out", chromedp.Click("#salir", chromedp.ByID), chromedp.WaitVisible("#ingreso", chromedp.ByID),
			chromedp.Evaluate(`sessionStorage.getItem("cfe-sandbox-jwt") || ""`, &after))
		if after != "" {
			t.Error("the token outlived the logout in sessionStorage")
		}
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(token)...).expect(t, http.StatusUnauthorized)
	})

	t.Run("a user of two companies, text that looks like HTML, an ended session", func(t *testing.T) {
		betoAPI := bearer(e.login("beto", betoPassword).Token)
		var companies []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, betoAPI...).expect(t, http.StatusOK).decode(t, &companies)
		beta := ""
		for _, c := range companies {
			if c.RUC == rucBeta {
				beta = fmt.Sprint(c.IdEmpresa)
			}
		}
		const htmlName = `<img src=x onerror="window.__xss=1">`
		e.do("POST", "/api/v1/apikeys", map[string]any{"nombre": htmlName, "idEmpresa": companies[1].IdEmpresa}, betoAPI...).expect(t, http.StatusCreated)

		var options int
		run(t, "logging in as beto", chromedp.Navigate(base+"#comprobantes"),
			chromedp.WaitVisible("#usuario", chromedp.ByID),
			chromedp.SetValue("#usuario", "beto", chromedp.ByID),
			chromedp.SetValue("#clave", betoPassword, chromedp.ByID),
			chromedp.Click("#ingresar", chromedp.ByID),
			chromedp.WaitVisible("#empresa", chromedp.ByID),
			chromedp.WaitVisible(`#grafica-diaria rect[data-periodo="2026-03-02"][data-monto="830"]`, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll("#empresa option").length`, &options))
		if options != 2 {
			t.Errorf("the company list has %d options, want 2", options)
		}
		run(t, "choosing Beta", chromedp.SetValue("#empresa", beta, chromedp.ByID),
			chromedp.Evaluate(`document.getElementById("empresa").dispatchEvent(new Event("change"))`, nil),
			chromedp.WaitVisible(`#grafica-diaria rect[data-periodo="2026-03-02"][data-monto="415"]`, chromedp.ByQuery))

		var names []string
		var images int
		run(t, "Beta's keys", chromedp.Click("#ir-claves", chromedp.ByID),
			chromedp.Poll(`[...document.querySelectorAll("#claves-lista td.nombre")].some((td) => td.textContent === "caja beta")`, nil,
				chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Evaluate(`[...document.querySelectorAll("#claves-lista td.nombre")].map((td) => td.textContent)`, &names),
			chromedp.Evaluate(`document.querySelectorAll("#claves-lista img").length + (window.__xss ? 100 : 0)`, &images))
		if len(names) != 2 || names[0] != "caja beta" || names[1] != htmlName {
			t.Errorf("Beta's keys are shown as %q", names)
		}
		if images != 0 {
			t.Error("a key's name was read as HTML")
		}

		// The session ends elsewhere (revoked): the next call returns to the login.
		var token, msg string
		run(t, "reading the token", chromedp.Evaluate(`sessionStorage.getItem("cfe-sandbox-jwt") || ""`, &token))
		e.do("POST", "/api/auth/revoke", nil, bearer(token)...).expect(t, http.StatusOK)
		run(t, "using the ended session", chromedp.Click("#ir-comprobantes", chromedp.ByID),
			chromedp.WaitVisible("#ingreso", chromedp.ByID),
			chromedp.Text("#mensaje", &msg, chromedp.ByID))
		if !strings.Contains(msg, "La sesión terminó") {
			t.Errorf("an ended session shows %q", msg)
		}
	})
}
