package localapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
	"github.com/cfe-agent/cfe-agent/localapi"
)

// startBrowser starts headless Chromium with a fresh profile, with the flags
// of the status page's browser test, and returns a context to run actions in.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := browser.Options(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	return ctx
}

// servePages serves fixed HTML pages by path on a new loopback port and
// returns its port.
func servePages(t *testing.T, pages map[string]string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, page)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// Paths a hostile page asks the module for. Each kind of request has paths
// of its own so that the module's access log tells them apart.
var (
	attackImages = []string{"/api/v1/cfeemitido/101", "/api/v1/cfeemitido/102", "/api/v1/usuario/empresas"}
	attackGets   = []string{"/api/v1/cfeemitido/201", "/api/v1/cfeemitido/buscar", "/health"}
	attackPosts  = []string{"/api/v1/apikeys", "/api/v1/comprobante/emitir"}
	attackForm   = "/api/v1/comprobante/anular"
)

// attackPage is a page of another site that makes the browser call the
// module at base: <img> elements, no-cors GETs, no-cors POSTs of text and of
// a form; it adds #hecho once every request has ended.
func attackPage(base string) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>tienda</title></head><body>\n")
	for _, p := range attackImages {
		fmt.Fprintf(&b, "<img src=%q alt=\"\">\n", base+p)
	}
	b.WriteString("<script>\nconst base = " + fmt.Sprintf("%q", base) + ";\n")
	b.WriteString("const gets = " + jsList(attackGets) + ", posts = " + jsList(attackPosts) + ";\n")
	b.WriteString(`window.addEventListener("load", () => {
  const jobs = [];
  for (const p of gets) jobs.push(fetch(base + p, {mode: "no-cors", credentials: "include"}).catch(() => {}));
  for (const p of posts) jobs.push(fetch(base + p, {mode: "no-cors", method: "POST", body: '{"nombre":"x"}'}).catch(() => {}));
  jobs.push(fetch(base + ` + fmt.Sprintf("%q", attackForm) + `, {mode: "no-cors", method: "POST",
    body: new URLSearchParams({idCfeReferencia: "1", fecha: "2026-05-14"})}).catch(() => {}));
  Promise.all(jobs).then(() => {
    const p = document.createElement("p");
    p.id = "hecho";
    p.textContent = "hecho";
    document.body.append(p);
  });
});
</script></body></html>`)
	return b.String()
}

func jsList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// accessLine is one access log line of the module.
type accessLine struct {
	method, path string
	status       int
}

// accessLog returns the module's access log lines for paths under prefix.
func (ts *testServer) accessLog(t *testing.T, prefix string) []accessLine {
	t.Helper()
	var out []accessLine
	for _, l := range ts.logLines(t) {
		path, _ := l["path"].(string)
		if l["msg"] != "http request" || !strings.HasPrefix(path, prefix) {
			continue
		}
		status, _ := l["status"].(float64)
		out = append(out, accessLine{method: l["method"].(string), path: path, status: int(status)})
	}
	return out
}

// awaitAccessLog returns the access log lines after the first skip, once
// there are want of them or, failing that, after a few seconds: the module
// writes a line when its handler returns, which may be just after the
// browser has read the answer.
func (ts *testServer) awaitAccessLog(t *testing.T, skip, want int) []accessLine {
	t.Helper()
	var lines []accessLine
	testtool.WaitUntil(t, 5*time.Second, func() bool {
		lines = ts.accessLog(t, "/")[skip:]
		return len(lines) >= want
	})
	return lines
}

// TestSecurity_CrossSiteBrowser loads pages of other sites (another loopback
// port, as localhost: cross-site; as 127.0.0.1: same-site) in headless
// Chromium that fire <img>, no-cors GETs and no-cors POSTs at the module,
// whose proxy is in front of the sandbox with a key limited to 3 requests a
// minute. None of them may reach the service; the key keeps its headroom;
// and what browsers may still do works: an allowed origin's CORS fetch, the
// user's own navigation, and a page of the module calling the module.
func TestSecurity_CrossSiteBrowser(t *testing.T) {
	ctx := startBrowser(t)
	p := startHosted(t)
	// A receipt to query through the proxy: querying CFEs is one of the
	// operations a POS needs, forwarded with the profile's key.
	id := p.emit(t, "venta-1")
	query := "/api/v1/cfeemitido/" + itoa(id)
	wantBody := fmt.Sprintf(`"id":%d`, id)
	start := p.requests() // the emission itself

	// The allowed application is on a port of its own.
	allowedPort := servePages(t, map[string]string{"/": `<!doctype html><html><body><script>
fetch(new URLSearchParams(location.search).get("api"))
  .then(r => r.text().then(t => { document.body.dataset.status = r.status; document.body.dataset.body = t; }))
  .catch(e => { document.body.dataset.status = "error " + e; })
  .finally(() => { const p = document.createElement("p"); p.id = "hecho"; document.body.append(p); });
</script></body></html>`})
	allowed := fmt.Sprintf("http://127.0.0.1:%d", allowedPort)

	// The module's own page: it reads /state and posts to /pdf, as the
	// status page does.
	ownPage := `<!doctype html><html><body><script>
Promise.all([
  fetch("/state").then(r => r.json().then(j => r.status + " " + j.profile)),
  fetch("/pdf", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"uuid":"u-1"}'}).then(r => String(r.status)),
]).then(([state, pdf]) => { document.body.dataset.state = state; document.body.dataset.pdf = pdf; })
  .catch(e => { document.body.dataset.state = "error " + e; })
  .finally(() => { const p = document.createElement("p"); p.id = "hecho"; document.body.append(p); });
</script></body></html>`
	ts, _ := startProxy(t, p, hosted.Config{APIKey: keyLimitada}, func(c *localapi.ServerConfig) {
		c.AllowedOrigins = []string{allowed}
		c.StatusPage = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, ownPage)
		})
	})
	base := ts.srv.BaseURL() // http://127.0.0.1:PORT
	attackPort := servePages(t, map[string]string{"/": attackPage(base)})

	for _, site := range []struct{ name, url string }{
		{"cross-site page (another host name)", fmt.Sprintf("http://localhost:%d/", attackPort)},
		{"same-site page (another port of 127.0.0.1)", fmt.Sprintf("http://127.0.0.1:%d/", attackPort)},
	} {
		t.Run(site.name, func(t *testing.T) {
			before := len(ts.accessLog(t, "/"))
			if err := chromedp.Run(ctx,
				chromedp.Navigate(site.url),
				chromedp.WaitReady("#hecho", chromedp.ByID),
			); err != nil {
				t.Fatalf("loading %s: %v", site.url, err)
			}
			// Every request the page made reached the module (the browser
			// did not block them itself) and was refused.
			want := len(attackImages) + len(attackGets) + len(attackPosts) + 1
			seen := ts.awaitAccessLog(t, before, want)
			if len(seen) != want {
				t.Errorf("the module saw %d requests, want %d: %v", len(seen), want, seen)
			}
			for _, l := range seen {
				if l.status != http.StatusForbidden {
					t.Errorf("%s %s: status %d, want 403", l.method, l.path, l.status)
				}
			}
			if n := p.requests() - start; n != 0 {
				t.Fatalf("%d requests reached the hosted service", n)
			}
		})
	}

	refusedGets := 0
	for _, l := range ts.logLines(t) {
		if l["msg"] == "request refused" && l["reason"] == "cross-site browser request" {
			refusedGets++
		}
	}
	if want := 2 * (len(attackImages) + len(attackGets)); refusedGets != want {
		t.Errorf("%d requests refused as cross-site, want the %d GETs of both pages", refusedGets, want)
	}

	t.Run("the profile's key kept its headroom", func(t *testing.T) {
		resp, body := ts.send(t, request{path: query})
		if resp.StatusCode != http.StatusOK || resp.Header.Get(hosted.HeaderLimitMinute) != "3" ||
			resp.Header.Get(hosted.HeaderRemainingMinute) != "2" {
			t.Fatalf("POS request: HTTP %d, limit %q, remaining %q: %s", resp.StatusCode,
				resp.Header.Get(hosted.HeaderLimitMinute), resp.Header.Get(hosted.HeaderRemainingMinute), body)
		}
		if n := p.requests() - start; n != 1 || p.lastSeen().Get("X-API-Key") != keyLimitada {
			t.Fatalf("%d requests reached the service, want the POS's one with the profile's key", n)
		}
	})

	t.Run("an allowed origin's CORS fetch", func(t *testing.T) {
		var status, body string
		if err := chromedp.Run(ctx,
			chromedp.Navigate(allowed+"/?api="+url.QueryEscape(base+query)),
			chromedp.WaitReady("#hecho", chromedp.ByID),
			chromedp.Evaluate(`document.body.dataset.status`, &status),
			chromedp.Evaluate(`document.body.dataset.body || ""`, &body),
		); err != nil {
			t.Fatal(err)
		}
		if status != "200" || !strings.Contains(body, wantBody) {
			t.Fatalf("the allowed page read status %q, body %q", status, body)
		}
		if n := p.requests() - start; n != 2 {
			t.Fatalf("%d requests reached the service, want 2", n)
		}
	})

	t.Run("the user's own navigation", func(t *testing.T) {
		var text string
		if err := chromedp.Run(ctx,
			chromedp.Navigate(base+query),
			chromedp.Text("body", &text, chromedp.ByQuery),
		); err != nil {
			t.Fatal(err)
		}
		if n := p.requests() - start; !strings.Contains(text, wantBody) || n != 3 {
			t.Fatalf("navigation showed %q; %d requests reached the service, want 3", text, n)
		}
	})

	t.Run("a page of the module", func(t *testing.T) {
		var state, pdf string
		if err := chromedp.Run(ctx,
			chromedp.Navigate(base+"/"),
			chromedp.WaitReady("#hecho", chromedp.ByID),
			chromedp.Evaluate(`document.body.dataset.state`, &state),
			chromedp.Evaluate(`document.body.dataset.pdf`, &pdf),
		); err != nil {
			t.Fatal(err)
		}
		// /pdf answers 503 here (no printing configured): past the security
		// rules, which would answer 403.
		if state != "200 caja1" || pdf != "503" {
			t.Fatalf("the module's page read /state as %q and /pdf as %q", state, pdf)
		}
	})
}
