package localapi

import (
	"bytes"
	"context"
	"net/http"

	"github.com/cfe-agent/cfe-agent/assets"
)

// StatusView writes out what the agent's status page shows; the
// application implements it (app.Facade.StatusPage).
type StatusView interface {
	// StatusPage returns the default printer of the page's reprint buttons
	// and the view the page's template reads (assets.StatusPageData.View),
	// every date, number and amount already written out in Spanish.
	StatusPage(ctx context.Context) (printer string, view any)
}

// statusPage is the embedded status page, parsed once.
var statusPage = assets.NewStatusPage()

// NewStatusPage returns the handler of the agent's status page, for
// ServerConfig.StatusPage: the embedded page (assets.StatusPage) rendered
// from v's view, with the page's Content-Security-Policy (its own inline
// style and script only), no caching, no referrer and no framing. The
// page's script fetches it again every few seconds and swaps its content in.
func NewStatusPage(v StatusView) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		printer, view := v.StatusPage(r.Context())
		var buf bytes.Buffer
		if err := statusPage.Template.Execute(&buf, statusPage.Data(printer, view)); err != nil {
			http.Error(w, "no se pudo mostrar la página de estado", http.StatusInternalServerError)
			return
		}
		hdr := w.Header()
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Content-Security-Policy", statusPage.CSP)
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("Referrer-Policy", "no-referrer")
		hdr.Set("X-Frame-Options", "DENY")
		w.Write(buf.Bytes()) //nolint:errcheck // the client went away
	})
}
