package assets

import (
	_ "embed"
	"html/template"
)

// The /caja page's parts: the HTML template and its inline style and script.
var (
	//go:embed caja/caja.html
	cajaHTML string
	//go:embed caja/caja.css
	cajaCSS string
	//go:embed caja/caja.js
	cajaJS string
)

// CajaPage is the shop's own page (Spanish), /caja: find any receipt and
// act on it, sell by hand, the day's close. Like the status page it is one
// HTML document with its style and script inline and no outside resource;
// its script reads and writes through the module's JSON routes
// (/comprobantes, /cierre, /caja/...).
type CajaPage struct {
	Template *template.Template
	// CSP is the Content-Security-Policy the page needs: only its own inline
	// style and script (by hash), requests to its own origin, and blob:
	// for the downloads the script makes.
	CSP string
}

// CajaPageData fills the page's template.
type CajaPageData struct {
	Token string // the page's token for its sales (X-CFE-Pagina)
	CSS   template.CSS
	JS    template.JS
}

// NewCajaPage parses the embedded /caja page.
func NewCajaPage() *CajaPage {
	return &CajaPage{
		Template: template.Must(template.New("caja").Parse(cajaHTML)),
		CSP: "default-src 'none'; style-src '" + hash(cajaCSS) + "'; script-src '" + hash(cajaJS) +
			"'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}
}

// Data returns the template data for a page with token.
func (p *CajaPage) Data(token string) CajaPageData {
	return CajaPageData{Token: token, CSS: template.CSS(cajaCSS), JS: template.JS(cajaJS)}
}
