package escpos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
	"github.com/cfe-agent/cfe-agent/pdf"
)

// TestRender_DocsImage refreshes docs/escpos-rollo.png when
// CFE_UPDATE_DOCS=1: DGI's sample e-Ticket on an 80 mm printer with the
// raster QR (esc2html draws images, not the printer's own QR command),
// decoded by esc2html and photographed by headless Chromium.
//
// esc2html at the vendored commit calls implode() with PHP 7's argument
// order, which PHP 8 refuses: the test runs a copy with PHP 8's order and
// the tools' directory written out; nothing else changes.
func TestRender_DocsImage(t *testing.T) {
	t.Parallel()
	if os.Getenv("CFE_UPDATE_DOCS") != "1" {
		t.Skip("set CFE_UPDATE_DOCS=1 to refresh docs/escpos-rollo.png")
	}
	dir := tools(t)
	src, err := os.ReadFile(filepath.Join(dir, "esc2html.php"))
	if err != nil {
		t.Fatal(err)
	}
	script := strings.NewReplacer(`implode($classes, " ")`, `implode(" ", $classes)`,
		"__DIR__", strconv.Quote(dir)).Replace(string(src))
	work := t.TempDir()
	php := filepath.Join(work, "esc2html.php")
	if err := os.WriteFile(php, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := pdf.NewReceipt(sample(t, samples[0]), pdf.Options{Production: true,
		Template: pdf.Template{Legends: []string{"¡Gracias por su compra!"}},
		Adenda:   "Cliente frecuente Nº 1234\nPuntos acumulados: 536",
		Footer:   pdf.Footer{WebURL: "https://www.almacen.com.uy"}})
	if err != nil {
		t.Fatal(err)
	}
	bin := writeTemp(t, "receipt.bin", render(t, r, Options{QR: QRRaster}))
	html, err := exec.Command("php", php, bin).Output()
	if err != nil {
		t.Fatalf("esc2html: %v", err)
	}
	if !strings.Contains(string(html), "data:image/png;base64,") || !strings.Contains(string(html), "Total a pagar") {
		t.Fatalf("esc2html lost the QR image or the totals:\n%.2000s", html)
	}
	page := filepath.Join(work, "receipt.html")
	if err := os.WriteFile(page, html, 0o600); err != nil {
		t.Fatal(err)
	}
	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(), browser.Options(t)...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.Navigate("file://"+page),
		chromedp.Screenshot(".esc-receipt", &png, chromedp.ByQuery)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if len(png) > 300<<10 {
		t.Fatalf("the picture has %d KB, more than 300", len(png)>>10)
	}
	if err := os.WriteFile(filepath.Join(testtool.RepoRoot(t), "docs", "escpos-rollo.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
