package localapi_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
)

// docsCSPSpy records the page's securitypolicyviolation events in
// window.__csp (scripts the browser injects run whatever the page's CSP).
const docsCSPSpy = `window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));`

// readDocs reads what the reference page shows: each route's heading, by
// method and path, and each schema's field names.
const readDocs = `(() => ({
  routes: [...document.querySelectorAll("section.ruta")].map((s) => ({
    method: s.dataset.metodo, path: s.dataset.ruta, heading: s.querySelector("h2").textContent,
    statuses: [...s.querySelectorAll("tr[data-estado]")].map((r) => r.dataset.estado)})),
  schemas: Object.fromEntries([...document.querySelectorAll("section.esquema")].map((s) =>
    [s.id.replace("esquema-", ""), [...s.querySelectorAll("tr[data-campo] td.campo")].map((td) => td.firstChild.textContent.trim())])),
  collapsed: getComputedStyle(document.querySelector("table")).borderCollapse,
  csp: window.__csp,
}))()`

type docsView struct {
	Routes []struct {
		Method   string   `json:"method"`
		Path     string   `json:"path"`
		Heading  string   `json:"heading"`
		Statuses []string `json:"statuses"`
	} `json:"routes"`
	Schemas   map[string][]string `json:"schemas"`
	Collapsed string              `json:"collapsed"`
	CSP       []string            `json:"csp"`
}

// TestServer_Docs_browser loads GET /docs in headless Chromium: a heading for
// every route of the description with each of its answers, every property
// of every schema listed (so every request field), the inline style applied
// under the page's CSP, no CSP violation, and no sideways scrolling at a
// phone's 390 px.
func TestServer_Docs_browser(t *testing.T) {
	testtool.Require(t, "chromium")
	ts := startServer(t, nil)
	doc := openAPIDoc(t)

	opts := browser.Options(t, chromedp.WindowSize(1280, 900), chromedp.Flag("lang", "es-UY"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()
	var (
		mu   sync.Mutex
		logs []string
	)
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*log.EventEntryAdded); ok {
			mu.Lock()
			logs = append(logs, string(e.Entry.Level)+": "+e.Entry.Text)
			mu.Unlock()
		}
	})
	var view docsView
	err := chromedp.Run(ctx, log.Enable(),
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(docsCSPSpy).Do(ctx)
			return err
		}),
		chromedp.Navigate(ts.srv.BaseURL()+"/docs"),
		chromedp.WaitVisible("section.esquema", chromedp.ByQuery),
		chromedp.Evaluate(readDocs, &view))
	if err != nil {
		t.Fatalf("loading /docs: %v", err)
	}

	if len(view.CSP) > 0 {
		t.Errorf("CSP violations: %v", view.CSP)
	}
	mu.Lock()
	for _, l := range logs {
		if strings.Contains(l, "Content Security Policy") || strings.HasPrefix(l, "error") {
			t.Errorf("browser log: %s", l)
		}
	}
	mu.Unlock()
	if view.Collapsed != "collapse" {
		t.Errorf("the page's style sheet was not applied (border-collapse %q)", view.Collapsed)
	}

	// Routes: one section per operation, in the description's order.
	shown := map[string][]string{}
	for _, r := range view.Routes {
		if !strings.Contains(r.Heading, r.Method) || !strings.Contains(r.Heading, r.Path) {
			t.Errorf("the heading of %s %s reads %q", r.Method, r.Path, r.Heading)
		}
		shown[r.Method+" "+r.Path] = r.Statuses
	}
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			key := strings.ToUpper(method) + " " + path
			statuses, ok := shown[key]
			if !ok {
				t.Errorf("/docs has no section for %s", key)
				continue
			}
			var want []string
			for st := range op.(map[string]any)["responses"].(map[string]any) {
				want = append(want, st)
			}
			sort.Strings(want)
			sort.Strings(statuses)
			if strings.Join(want, ",") != strings.Join(statuses, ",") {
				t.Errorf("%s shows answers %v, the description has %v", key, statuses, want)
			}
		}
	}

	// Schemas: every property, top level and inline, in a row of its own.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, raw := range schemas {
		var want []string
		collectProperties(raw.(map[string]any), &want)
		got, ok := view.Schemas[name]
		if !ok {
			t.Errorf("/docs has no section for schema %s", name)
			continue
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(want, ",") != strings.Join(got, ",") {
			t.Errorf("schema %s lists %v, the description has %v", name, got, want)
		}
	}
	if n := len(view.Schemas["Detalle"]); n < 18 {
		t.Errorf("the request line shows %d fields", n)
	}

	// A phone's width: nothing scrolls sideways.
	var width, inner int
	err = chromedp.Run(ctx, chromedp.EmulateViewport(390, 844), chromedp.Reload(),
		chromedp.WaitVisible("section.esquema", chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &width),
		chromedp.Evaluate(`window.innerWidth`, &inner))
	if err != nil {
		t.Fatal(err)
	}
	if inner != 390 || width > inner {
		t.Errorf("at 390 px the page is %d px wide in a %d px window", width, inner)
	}
}

// collectProperties appends the names of s's properties, of those of its
// inline objects and lists of objects, and of its allOf parts that are not
// references.
func collectProperties(s map[string]any, out *[]string) {
	if props, ok := s["properties"].(map[string]any); ok {
		for name, v := range props {
			*out = append(*out, name)
			p, _ := v.(map[string]any)
			if items, ok := p["items"].(map[string]any); ok {
				p = items
			}
			if _, ref := p["$ref"]; !ref {
				collectProperties(p, out)
			}
		}
	}
	if parts, ok := s["allOf"].([]any); ok {
		for _, part := range parts {
			if p, _ := part.(map[string]any); p["$ref"] == nil {
				collectProperties(p, out)
			}
		}
	}
}
