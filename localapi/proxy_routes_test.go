package localapi

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestProxyAccessOf(t *testing.T) {
	tests := []struct {
		method, target string
		want           proxyAccess
	}{
		{http.MethodPost, "/api/v1/comprobante/emitir", accessProfile},
		{http.MethodPost, "/api/v1/comprobante/anular", accessProfile},
		{http.MethodGet, "/api/v1/cfeemitido/buscar?tipoFiltro=101", accessProfile},
		{http.MethodGet, "/api/v1/cfeemitido/42", accessProfile},
		{http.MethodPost, "/api/v1/cfeemitido/42/marcar-aceptado", accessProfile},
		{http.MethodGet, "/api/v1/comprobante/previsualizar/abc-123", accessProfile},
		{http.MethodPost, "/api/v1/puntoemision/editar", accessProfile},
		{http.MethodPost, "/api/auth/login", accessAsIs},
		{http.MethodPost, "/api/auth/refresh", accessAsIs},
		{http.MethodPost, "/auth/refresh", accessAsIs},
		{http.MethodGet, "/auth/refresh", accessCallerOnly},
		{http.MethodPost, "/api/auth/recuperarClave", accessAsIs},
		{http.MethodPost, "/api/auth/revoke", accessCallerOnly},
		{http.MethodGet, "/api/auth/login", accessCallerOnly},
		{http.MethodPost, "/api/v1/apikeys", accessCallerOnly},
		{http.MethodGet, "/api/v1/apikeys", accessCallerOnly},
		{http.MethodPost, "/api/v1/apikeys/7/revocar", accessCallerOnly},
		{http.MethodPost, "/api/v1/apikeys/7/rate-limit", accessCallerOnly},
		{http.MethodPost, "/api/v1/usuario/1/apikey", accessCallerOnly},
		{http.MethodPost, "/api/v1/comprobante/recibirFirmado", accessCallerOnly},
		{http.MethodGet, "/api/v1/cfeemitido/apikeys", accessCallerOnly},
		{http.MethodGet, "/api/v1/cfeemitido/", accessCallerOnly},
		{http.MethodGet, "/api/v1/cfeemitido/42/", accessCallerOnly},
		{http.MethodGet, "/api/v1/cfeemitido/4%2F2", accessCallerOnly},
		{http.MethodPost, "/api/v1/Comprobante/emitir", accessCallerOnly},
		{http.MethodGet, "/api/v1/comprobante/previsualizar/", accessCallerOnly},
		{http.MethodDelete, "/api/v1/comprobante/emitir", accessCallerOnly},
		{http.MethodGet, "/api/v2/cfeemitido/buscar", accessCallerOnly},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			if got := proxyAccessOf(httptest.NewRequest(tt.method, tt.target, nil)); got != tt.want {
				t.Errorf("access %d, want %d", got, tt.want)
			}
		})
	}
}

// TestProxyRoutes_Unique: a (method, pattern) appears once, so the first
// match is the only match.
func TestProxyRoutes_Unique(t *testing.T) {
	seen := map[string]bool{}
	for _, rt := range proxyRoutes {
		k := rt.method + " " + rt.pattern
		if seen[k] {
			t.Errorf("%s is listed twice", k)
		}
		seen[k] = true
	}
}

// TestProxyRoutes_Documented: docs/hosted.md's table of proxied routes is
// the code's, row for row.
func TestProxyRoutes_Documented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "hosted.md"))
	if err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`\{[^}]*\}`)
	row := regexp.MustCompile("^\\s*\\| (GET|POST) \\| `([^`]+)`[^|]*\\| (profile|as it came|caller only) \\|")
	classes := map[string]proxyAccess{"profile": accessProfile, "as it came": accessAsIs, "caller only": accessCallerOnly}
	documented := map[string]proxyAccess{}
	for _, line := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			documented[m[1]+" "+placeholder.ReplaceAllString(m[2], "{}")] = classes[m[3]]
		}
	}
	if len(documented) != len(proxyRoutes) {
		t.Errorf("docs/hosted.md lists %d routes, proxyRoutes %d", len(documented), len(proxyRoutes))
	}
	for _, rt := range proxyRoutes {
		k := rt.method + " " + placeholder.ReplaceAllString(rt.pattern, "{}")
		if got, ok := documented[k]; !ok || got != rt.access {
			t.Errorf("%s: documented %v (class %d), code says class %d", k, ok, got, rt.access)
		}
	}
}

// TestCleanProxyPath: segments that are empty, dots only, carry ";" or "\",
// or escape ".", "/", "\", ";", "%" or a control character (any case), or
// decode to what is not UTF-8, make a path unclean; other escapes do not.
func TestCleanProxyPath(t *testing.T) {
	t.Parallel()
	clean := []string{
		"/api/v1/comprobante/emitir", "/api/v1/cfeemitido/42", "/auth/refresh",
		"/api/v1/comprobante/previsualizar/v1.2.pdf", "/api/v1/comprobante/previsualizar/.abc",
		"/api/v1/comprobante/previsualizar/a%20b", "/api/v1/comprobante/previsualizar/%C3%B1",
		"/api/v1/comprobante/%65mitir", "/api/v1/comprobante/previsualizar/a-b_c~d",
	}
	unclean := []string{
		"", "api/v1/x", "/", "/api/v1/", "/api//v1", "/api/v1/x/", "/api/v1/.", "/api/v1/..", "/api/v1/...",
		"/api/v1/..;", "/api/v1/x;y", "/api/v1/;", `/api/v1/a\b`, "/api/v1/%2e", "/api/v1/%2E%2E", "/api/v1/a%2fb",
		"/api/v1/a%2Fb", "/api/v1/a%5cb", "/api/v1/a%5Cb", "/api/v1/a%3bb", "/api/v1/a%3Bb", "/api/v1/%252e",
		"/api/v1/a%00", "/api/v1/a%0A", "/api/v1/a%7f", "/api/v1/%c0%ae", "/api/v1/%ff", "/api/v1/a%zz", "/api/v1/a%2",
	}
	for _, p := range clean {
		if !cleanProxyPath(p) {
			t.Errorf("%q: unclean, want clean", p)
		}
	}
	for _, p := range unclean {
		if cleanProxyPath(p) {
			t.Errorf("%q: clean, want unclean", p)
		}
	}
}

// TestInProxyArea: a path is the proxy's when it is under /api/ or /auth/
// as sent, once cleaned, or with backslashes read as slashes.
func TestInProxyArea(t *testing.T) {
	t.Parallel()
	for target, want := range map[string]bool{
		"/api/v1/x": true, "/api": true, "/auth/refresh": true, "//api/v1/x": true, "/health/../api/v1/x": true,
		"/x/..%2f..%2fapi/v1": true, `/health/..\api\v1`: true, "/api%2fv1/x": true,
		"/health": false, "/sign-cfe": false, "/apix": false, "/authx/refresh": false, "/": false, "/docs/../state": false,
	} {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+strings.ReplaceAll(target, `\`, "%5C"), nil)
		if got := inProxyArea(r); got != want {
			t.Errorf("%s (path %q): %v, want %v", target, r.URL.Path, got, want)
		}
	}
}
