package main

import (
	"bytes"
	"net/http"

	"github.com/cfe-agent/cfe-agent/assets"
)

// statusPage is the embedded status page, parsed once.
var statusPage = assets.NewStatusPage()

// newStatusPage returns the handler of GET / for browsers: the status page,
// whose reprint buttons print on printer.
func newStatusPage(printer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := statusPage.Template.Execute(&buf, statusPage.Data(printer)); err != nil {
			http.Error(w, "no se pudo mostrar la página de estado", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", statusPage.CSP)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		w.Write(buf.Bytes()) //nolint:errcheck // the client went away
	})
}
