package main_test

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

var updateScreenshot = flag.Bool("screenshot", false, "rewrite docs/status-page.png and docs/status-page-390.png from the browser test")

// TestStatusPage_http checks the content negotiation of GET /, the page's
// headers without a browser, and the favicon.
func TestStatusPage_http(t *testing.T) {
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")

	header, body := getAccept(t, p.baseURL+"/", "text/html,application/xhtml+xml,*/*;q=0.8")
	if ct := header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("browser got %q", ct)
	}
	csp := header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-", "style-src 'sha256-", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows any inline code: %q", csp)
	}
	html := string(body)
	for _, want := range []string{`lang="es"`, `data-impresora="archivo"`, "Últimos comprobantes", `fetch("/"`,
		`<dd id="direccion" class="nowrap">` + p.baseURL + `</dd>`, "Todavía no se firmó ningún comprobante."} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The page names its own address; nothing else outside.
	inside := strings.ReplaceAll(strings.ReplaceAll(html, "http://www.w3.org", ""), p.baseURL, "")
	for _, outside := range []string{"http://", "https://", "src=", "<link"} {
		if strings.Contains(inside, outside) {
			t.Errorf("page refers to an outside resource (%q)", outside)
		}
	}

	header, body = getAccept(t, p.baseURL+"/", "application/json")
	var st apitype.StateReport
	if err := json.Unmarshal(body, &st); err != nil || st.Profile != "sandbox" {
		t.Fatalf("JSON client at / got %s (%v): %s", header.Get("Content-Type"), err, body)
	}

	resp, err := http.Get(p.baseURL + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	icon := make([]byte, 64<<10)
	n, _ := resp.Body.Read(icon)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/x-icon" {
		t.Fatalf("/favicon.ico: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if want := assets.IconICO(assets.IconOK); n < 4 || string(icon[:4]) != "\x00\x00\x01\x00" || string(icon[:n]) != string(want[:min(n, len(want))]) {
		t.Errorf("/favicon.ico is not the agent's ICO icon (%d bytes)", n)
	}
	if code := p.stop(15); code != 0 { // SIGTERM
		t.Fatalf("exit status %d", code)
	}
}

// Uruguayan formats as the page must show them.
var (
	moneyRE    = regexp.MustCompile(`^(UYU|USD) \d{1,3}(\.\d{3})*,\d{2}$`)
	dateTimeRE = regexp.MustCompile(`^\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}$`)
	// 21 electronic types and their 21 contingency forms (docs/contingencia.md).
	caeSumRE = regexp.MustCompile(`^42 tipos de comprobante, \d{1,3}(\.\d{3})+ números restantes, (sin avisos|\d+ con avisos?)$`)
)

// pageFacts is what the browser test reads from the page.
type pageFacts struct {
	Order       []string `json:"order"` // the sections, top to bottom
	Overflow    bool     `json:"overflow"`
	ScrollWidth int      `json:"scrollWidth"`
	InnerWidth  int      `json:"innerWidth"`
	Totals      []string `json:"totals"`
	Signed      []string `json:"signed"`
	UUIDs       []string `json:"uuids"`
	CAESummary  string   `json:"caeSummary"`
	CAEOpen     bool     `json:"caeOpen"`
	CAERows     int      `json:"caeRows"`
	Caption     string   `json:"caption"`
	Bars        int      `json:"bars"`
	Address     string   `json:"address"`
	AddressH    float64  `json:"addressHeight"`
	LineH       float64  `json:"lineHeight"`
	SignedToday string   `json:"signedToday"`
	Status      string   `json:"status"`
	Expires     string   `json:"expires"`
}

const readFacts = `(() => {
  const q = s => document.querySelector(s), qa = s => [...document.querySelectorAll(s)];
  const order = qa("#ultimos, #ventas, .cards, #rangos").map(e => [e.getBoundingClientRect().top, e.id || e.className])
    .sort((a, b) => a[0] - b[0]).map(x => x[1]);
  const addr = q("#direccion");
  return {
    order, scrollWidth: document.scrollingElement.scrollWidth, innerWidth: window.innerWidth,
    overflow: document.scrollingElement.scrollWidth > Math.min(window.innerWidth, document.documentElement.clientWidth),
    totals: qa("#recientes tr[data-uuid] td.num").map(e => e.textContent.trim()),
    signed: qa("#recientes tr[data-uuid] td[data-label=Firmado]").map(e => e.textContent.trim()),
    uuids: qa("#recientes tr[data-uuid]").map(e => e.dataset.uuid),
    caeSummary: q("#cae-resumen").textContent.trim(), caeOpen: q("#cae-detalle").open, caeRows: qa("#cae tr").length,
    caption: q("#ventas figcaption").textContent.trim(), bars: qa("#ventas svg rect").length,
    address: addr.textContent.trim(), addressHeight: addr.getBoundingClientRect().height,
    lineHeight: parseFloat(getComputedStyle(addr).lineHeight),
    signedToday: q("#firmados-hoy").textContent.trim(), status: q("#estado").textContent.trim(),
    expires: q("#cert-vence").textContent.trim(),
  };
})()`

// TestStatusPage_browser loads the page in headless Chromium at a desktop's
// width and two phones', checks the order of its sections, the Uruguayan
// formats against /state, that nothing scrolls sideways, and reprints.
func TestStatusPage_browser(t *testing.T) {
	testtool.Require(t, "chromium") // skip before starting the agent
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")
	p.signExample("5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
	p.signExample("6e2d3c4b-5f60-4b7c-9d8e-0f1a2b3c4d5e")
	usd := `{"uuid": "7f3e4d5c-6a71-4c8d-8e9f-1a2b3c4d5e6f", "cfe": {"idDoc": {"tipoCfe": 101, "formaPago": 1},
	  "totales": {"tipoMoneda": "USD", "tipoCambio": "39.500"},
	  "detalles": [{"indicadorFacturacion": 3, "nombreItem": "Servicio técnico", "cantidad": 1, "precioUnitario": "125"}]}}`
	if res, err := p.client().SignCFE(context.Background(), []byte(usd)); err != nil || res.CodigoRespuesta != "00" {
		t.Fatalf("signing in dollars: %+v %v", res, err)
	}
	st, err := p.client().State(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		// Overlay scrollbars, as on a phone: the screenshots are the page's full width.
		browser.Options(t, chromedp.Flag("hide-scrollbars", true))...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// Start the browser on bctx itself: a first Run on a context with a
	// timeout would tie the browser's life to that timeout.
	if err := chromedp.Run(bctx); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name       string
		width      int64
		screenshot string
	}{
		{"1280", 1280, "status-page.png"},
		{"390", 390, "status-page-390.png"},
		{"360", 360, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancelTimeout := context.WithTimeout(bctx, 60*time.Second)
			defer cancelTimeout()
			var f pageFacts
			err := chromedp.Run(ctx,
				chromedp.EmulateViewport(tc.width, 900),
				chromedp.Navigate(p.baseURL+"/"),
				chromedp.WaitVisible(`#recientes tr[data-uuid]`, chromedp.ByQuery),
				chromedp.Evaluate(readFacts, &f),
			)
			if err != nil {
				t.Fatalf("loading the status page: %v\n%s", err, p.stderr.String())
			}
			if want := []string{"ultimos", "ventas", "cards", "rangos"}; strings.Join(f.Order, ",") != strings.Join(want, ",") {
				t.Errorf("sections top to bottom %q, want %q (the last receipts first)", f.Order, want)
			}
			if f.InnerWidth != int(tc.width) {
				t.Errorf("the browser's viewport is %d px wide, want %d", f.InnerWidth, tc.width)
			}
			if f.Overflow {
				t.Errorf("the page scrolls sideways: scrollWidth %d > innerWidth %d", f.ScrollWidth, f.InnerWidth)
			}
			if len(f.UUIDs) != 3 || f.UUIDs[0] != "7f3e4d5c-6a71-4c8d-8e9f-1a2b3c4d5e6f" {
				t.Fatalf("receipts shown %q, want the dollar one first of 3", f.UUIDs)
			}
			for i, r := range st.Receipts.Recent {
				cur := "UYU"
				if i == 0 {
					cur = "USD"
				}
				if !moneyRE.MatchString(f.Totals[i]) || !strings.HasPrefix(f.Totals[i], cur+" ") ||
					digits(f.Totals[i]) != digits(r.Total.StringFixed(2)) {
					t.Errorf("total %q, /state says %s %s", f.Totals[i], cur, r.Total.StringFixed(2))
				}
				if want := r.FirmadoA.In(cfe.Montevideo).Format("02/01/2006 15:04:05"); f.Signed[i] != want || !dateTimeRE.MatchString(f.Signed[i]) {
					t.Errorf("signing time %q, want %q", f.Signed[i], want)
				}
			}
			if !caeSumRE.MatchString(f.CAESummary) {
				t.Errorf("CAE summary %q", f.CAESummary)
			}
			warned := 0
			for _, c := range st.CAE {
				if len(c.Warnings) > 0 {
					warned++
				}
			}
			if f.CAEOpen != (warned > 0) || f.CAERows != len(st.CAE) {
				t.Errorf("CAE details open=%v with %d rows; /state has %d types, %d with warnings", f.CAEOpen, f.CAERows, len(st.CAE), warned)
			}
			if !regexp.MustCompile(`^Ventas de hoy: UYU \d{1,3}(\.\d{3})*,\d{2} en 2 comprobantes\s*Además, en otras monedas \(no están en el gráfico\): USD \d{1,3}(\.\d{3})*,\d{2}$`).MatchString(f.Caption) || f.Bars != 24 {
				t.Errorf("chart caption %q with %d bars", f.Caption, f.Bars)
			}
			if f.Address != st.BaseURL || f.AddressH > f.LineH*1.5 {
				t.Errorf("address %q is %.0f px high (line %.0f px): it wraps", f.Address, f.AddressH, f.LineH)
			}
			if f.SignedToday != "3" || f.Status != "Funcionando" {
				t.Errorf("signed today %q, status %q", f.SignedToday, f.Status)
			}
			if want := st.Certificate.NotAfter.In(cfe.Montevideo).Format("02/01/2006"); !strings.HasPrefix(f.Expires, want+" (") {
				t.Errorf("certificate expiry %q, want it to start with %s", f.Expires, want)
			}
			if *updateScreenshot && tc.screenshot != "" {
				var png []byte
				if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
					t.Fatal(err)
				}
				if len(png) > 300<<10 {
					t.Fatalf("screenshot of %d bytes, over 300 KB", len(png))
				}
				if err := os.WriteFile(filepath.Join(testtool.RepoRoot(t), "docs", tc.screenshot), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}

	// Reprint: the page posts JSON to /pdf, which the module's origin and
	// content-type rules let through, and shows the outcome; a refresh (the
	// page fetches itself again) keeps the buttons working.
	ctx, cancelTimeout := context.WithTimeout(bctx, 60*time.Second)
	defer cancelTimeout()
	var message string
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`document.getElementById("actualizado").dataset.antes = "1"`, nil),
		chromedp.WaitNotPresent(`#actualizado[data-antes]`, chromedp.ByQuery), // replaced by a refresh
		chromedp.Click(`#recientes tr[data-uuid] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#mensaje.ok, #mensaje.error`, chromedp.ByQuery),
		chromedp.Text("#mensaje", &message, chromedp.ByID),
	)
	if err != nil {
		t.Fatalf("reprinting: %v", err)
	}
	reqs := p.stderr.lines(`msg="http request"`, "method=POST", "path=/pdf")
	if len(reqs) != 1 {
		t.Fatalf("module saw %d POST /pdf requests, want 1", len(reqs))
	}
	if !strings.Contains(reqs[0], "status=200") {
		t.Fatalf("the page's reprint request was not printed: %s", reqs[0])
	}
	if want := "Se envió e-Ticket " + st.Receipts.Recent[0].Serie + "-"; !strings.HasPrefix(message, want) {
		t.Errorf("printed, but the page says %q, want it to start with %q", message, want)
	}
}

// digits keeps the digits of s.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}
