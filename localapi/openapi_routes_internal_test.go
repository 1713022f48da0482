package localapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/mux"
)

// TestOpenAPI_everyRoute walks the module's real router: every route it
// serves is described in openapi.json with its method, except the proxy's
// (the hosted service's routes, listed in docs/hosted.md and checked by
// TestProxyRoutes_Documented) and the status page's favicon.
func TestOpenAPI_everyRoute(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerConfig{Listen: "127.0.0.1:0", Issuer: noIssuer{}, State: emptyState{}})
	seen := 0
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil {
			return nil // a route without a path (none today)
		}
		methods, err := route.GetMethods()
		if err != nil {
			methods = []string{http.MethodGet}
		}
		if strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/auth/") || path == "/favicon.ico" {
			return nil
		}
		for _, m := range methods {
			if m == http.MethodHead || m == http.MethodOptions {
				continue
			}
			seen++
			if _, ok := doc.Paths[path][strings.ToLower(m)]; !ok {
				t.Errorf("the module serves %s %s, which openapi.json does not describe", m, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 8 {
		t.Fatalf("walked only %d local routes: has the router's layout changed?", seen)
	}
}
