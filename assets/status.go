package assets

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
)

// The status page's parts: the HTML template and its inline style and script.
var (
	//go:embed status/status.html
	statusHTML string
	//go:embed status/status.css
	statusCSS string
	//go:embed status/status.js
	statusJS string
)

// StatusPage is the agent's status page (Spanish): one HTML document with its
// style and script inline and no outside resource, rendered on the server
// (localapi.NewStatusPage, from the application's view). Its script fetches the page again every few seconds,
// swaps the new content in and reprints through POST /pdf.
type StatusPage struct {
	Template *template.Template
	// CSP is the Content-Security-Policy the page needs: only its own inline
	// style and script (by hash) and requests to its own origin.
	CSP string
}

// StatusPageData fills the page's template.
type StatusPageData struct {
	Printer string // the default printer alias used by the reprint buttons
	View    any    // what the page shows, written out (app's statusView)
	CSS     template.CSS
	JS      template.JS
}

// NewStatusPage parses the embedded status page.
func NewStatusPage() *StatusPage {
	return &StatusPage{
		Template: template.Must(template.New("status").Parse(statusHTML)),
		CSP: "default-src 'none'; style-src '" + hash(statusCSS) + "'; script-src '" + hash(statusJS) +
			"'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}
}

// Data returns the template data for printer and view.
func (p *StatusPage) Data(printer string, view any) StatusPageData {
	return StatusPageData{Printer: printer, View: view, CSS: template.CSS(statusCSS), JS: template.JS(statusJS)}
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
