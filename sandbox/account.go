package sandbox

import (
	"embed"
	"net/http"
	"path"

	"github.com/gorilla/mux"
)

// The web account area (interface §5.2): a static page set embedded in the
// binary, in Spanish, without outside resources. Its script uses the public
// API with the user's JWT, kept in the tab's sessionStorage (see
// docs/sandbox.md for why not a cookie session).

//go:embed cuenta
var accountFiles embed.FS

// accountPrefix is where the account area is served.
const accountPrefix = "/cuenta/"

// accountCSP is the account area's Content-Security-Policy: its own script
// and style files only (nothing inline), requests to its own origin only,
// no framing, no form submission (forms are handled by the script) and
// Trusted Types enforced (no string reaches an HTML or script sink).
const accountCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

// accountTypes are the content types of the files served.
var accountTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// registerAccountRoutes registers the web account area and the chart data
// its page draws.
func (s *Server) registerAccountRoutes(r *mux.Router) {
	s.registerChartRoutes(r)
	r.Handle("/cuenta", http.RedirectHandler(accountPrefix, http.StatusMovedPermanently)).Methods(http.MethodGet, http.MethodHead)
	r.PathPrefix(accountPrefix).HandlerFunc(s.handleAccountFile).Methods(http.MethodGet, http.MethodHead)
}

// handleAccountFile serves one file of the account area, index.html for the
// folder itself, with the security headers; anything else is 404.
func (s *Server) handleAccountFile(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Path[len(accountPrefix):]
	if name == "" {
		name = "index.html"
	}
	ctype, known := accountTypes[path.Ext(name)]
	body, err := accountFiles.ReadFile("cuenta/" + name)
	if !known || err != nil || path.Clean(name) != name {
		s.writeError(w, r, notFound("la página"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Security-Policy", accountCSP)
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
