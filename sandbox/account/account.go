package account

import (
	"embed"
	"log/slog"
	"net/http"
	"path"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

//go:embed cuenta
var files embed.FS

// Prefix is where the account area is served.
const Prefix = "/cuenta/"

// csp is the account area's Content-Security-Policy: its own script and
// style files only (nothing inline), requests to its own origin only, no
// framing, no form submission (forms are handled by the script) and Trusted
// Types enforced (no string reaches an HTML or script sink).
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

// types are the content types of the files served.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

var errNoPage = &cfe.Error{Code: cfe.ENOTFOUND, Message: "la página no existe"}

// Pages serves the files of the account area.
type Pages struct {
	log *slog.Logger
}

// NewPages returns the account area's file server.
func NewPages(log *slog.Logger) *Pages {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pages{log: log}
}

// ServeHTTP serves one file of the account area, index.html for the folder
// itself, with the security headers; anything else is 404.
func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Path[len(Prefix):]
	if name == "" {
		name = "index.html"
	}
	ctype, known := types[path.Ext(name)]
	body, err := files.ReadFile("cuenta/" + name)
	if !known || err != nil || path.Clean(name) != name {
		web.WriteError(p.log, w, r, errNoPage)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // a failure means the client went away
	}
}
