package main_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
	"github.com/cfe-agent/cfe-agent/localapi"
)

var updateScreenshot = flag.Bool("screenshot", false, "rewrite docs/status-page.png from the browser test")

// TestStatusPage_http checks the content negotiation of GET / and the page's
// headers without a browser.
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
	for _, want := range []string{`lang="es"`, `data-impresora="archivo"`, "Últimos comprobantes", `fetch("/state"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, outside := range []string{"http://", "https://", "src=", "<link"} {
		if strings.Contains(strings.ReplaceAll(html, "http://www.w3.org", ""), outside) {
			t.Errorf("page refers to an outside resource (%q)", outside)
		}
	}

	header, body = getAccept(t, p.baseURL+"/", "application/json")
	var st localapi.StateReport
	if err := json.Unmarshal(body, &st); err != nil || st.Profile != "sandbox" {
		t.Fatalf("JSON client at / got %s (%v): %s", header.Get("Content-Type"), err, body)
	}
	if code := p.stop(15); code != 0 { // SIGTERM
		t.Fatalf("exit status %d", code)
	}
}

// TestStatusPage_browser loads the page in headless Chromium, compares what
// it shows with /state, and clicks a reprint button.
func TestStatusPage_browser(t *testing.T) {
	testtool.Require(t, "chromium") // skip before starting the agent
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")
	p.signExample("5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
	p.signExample("6e2d3c4b-5f60-4b7c-9d8e-0f1a2b3c4d5e")
	st, err := p.client().State(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	opts := browser.Options(t, chromedp.WindowSize(1300, 1000), chromedp.Flag("lang", "es-UY"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	shown := map[string]*string{}
	for _, id := range []string{"estado", "perfil", "entorno", "direccion", "version", "zona", "desfase",
		"cert-ruc", "firmados-hoy", "pendientes"} {
		shown[id] = new(string)
	}
	var caeRows, recentRows int
	var firstUUID, firstTotal string
	actions := []chromedp.Action{
		chromedp.Navigate(p.baseURL + "/"),
		chromedp.WaitVisible(`#recientes tr[data-uuid]`, chromedp.ByQuery),
	}
	for id, v := range shown {
		actions = append(actions, chromedp.Text("#"+id, v, chromedp.ByID))
	}
	actions = append(actions,
		chromedp.Evaluate(`document.querySelectorAll("#cae tr").length`, &caeRows),
		chromedp.Evaluate(`document.querySelectorAll("#recientes tr[data-uuid]").length`, &recentRows),
		chromedp.AttributeValue(`#recientes tr[data-uuid]`, "data-uuid", &firstUUID, nil, chromedp.ByQuery),
		chromedp.Text(`#recientes tr[data-uuid] td.num`, &firstTotal, chromedp.ByQuery),
	)
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("loading the status page: %v\n%s", err, p.stderr.String())
	}

	want := map[string]string{
		"estado":       map[string]string{"ok": "Funcionando", "degraded": "Requiere atención", "error": "No puede firmar"}[st.Status],
		"perfil":       st.Profile,
		"entorno":      st.Environment,
		"direccion":    st.BaseURL,
		"version":      st.Version,
		"zona":         st.ZonaHoraria.Nombre,
		"desfase":      st.ZonaHoraria.Desfase,
		"cert-ruc":     st.Certificate.RUC,
		"firmados-hoy": strconv.Itoa(st.Receipts.SignedToday),
		"pendientes":   strconv.Itoa(st.Outbox.Pending),
	}
	for id, w := range want {
		if got := strings.TrimSpace(*shown[id]); !strings.HasPrefix(got, w) || w == "" {
			t.Errorf("#%s shows %q, /state says %q", id, got, w)
		}
	}
	if st.Receipts.SignedToday != 2 || st.Outbox.Pending != 2 {
		t.Errorf("/state counts %d signed today and %d pending, want 2 and 2", st.Receipts.SignedToday, st.Outbox.Pending)
	}
	if caeRows != len(st.CAE) || caeRows == 0 {
		t.Errorf("CAE table has %d rows, /state has %d types", caeRows, len(st.CAE))
	}
	if recentRows != 2 {
		t.Errorf("%d recent receipts shown, want 2", recentRows)
	}
	if firstUUID != "6e2d3c4b-5f60-4b7c-9d8e-0f1a2b3c4d5e" {
		t.Errorf("newest receipt shown first is %s", firstUUID)
	}
	// es-UY writes 1.384,00 for 1384.00: compare digits only.
	digits := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s)
	}
	if total := st.Receipts.Recent[0].Total.StringFixed(2); digits(firstTotal) != digits(total) {
		t.Errorf("total shown %q, /state says %s", firstTotal, total)
	}

	if *updateScreenshot {
		var png []byte
		if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(testtool.RepoRoot(t), "docs", "status-page.png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Reprint: the page posts JSON to /pdf, which the module's origin and
	// content-type rules let through, and shows the outcome.
	var message string
	err = chromedp.Run(ctx,
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
	if !strings.HasPrefix(message, "Se envió") {
		t.Errorf("printed, but the page says %q", message)
	}
}
