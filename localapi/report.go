package localapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/assets"
)

func (s *Server) registerFaviconRoutes(r *mux.Router) {
	s.handle(r, http.MethodGet, "/favicon.ico", s.handleFavicon)
}

// handleFavicon answers the browser's icon request with the tray's icon (the
// green one), so the status page's tab shows the agent.
func (s *Server) handleFavicon(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "image/x-icon")
	h.Set("Cache-Control", "max-age=86400")
	w.Write(assets.IconICO(assets.IconOK)) //nolint:errcheck // the client went away
}
