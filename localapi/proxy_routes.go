package localapi

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// proxyAccess says whose credentials the proxy may forward a request with.
type proxyAccess int

const (
	// accessCallerOnly: forwarded only with the caller's own credentials
	// (X-API-Key or Authorization); refused locally without them. Every
	// operation that creates, lists or revokes credentials or changes rate
	// limits, and every route the proxy does not know, is of this kind.
	accessCallerOnly proxyAccess = iota
	// accessProfile: an operation a point of sale needs. Forwarded with the
	// caller's credentials when it sent some, with the profile's otherwise.
	accessProfile
	// accessAsIs: an authentication request whose credential travels in its
	// body (login with username and secret, refresh with a refresh token) or
	// that needs none by contract (password recovery, which mails the user).
	// Forwarded as it came, never with the profile's credentials.
	accessAsIs
)

// proxyRoute is one (method, path pattern) of the hosted interface. In a
// pattern, "{n}" matches one segment of decimal digits and "{s}" any one
// non-empty segment; every other segment matches only itself, case included.
type proxyRoute struct {
	method  string
	pattern string
	access  proxyAccess
}

// proxyRoutes classifies every route of the hosted interface
// (seed-interface.md §4–§5, and the routes the agent itself uses). It is the
// one place that decides which requests may carry the profile's
// credentials: only accessProfile routes do. Routes not listed, and listed
// routes with another method, are accessCallerOnly; the accessCallerOnly
// rows are listed so that the classification is complete and documented
// (docs/hosted.md has the same table).
var proxyRoutes = []proxyRoute{
	// §4.1 and §5.1: authentication.
	{http.MethodPost, "/api/auth/login", accessAsIs},
	{http.MethodPost, "/api/auth/refresh", accessAsIs},
	{http.MethodPost, "/auth/refresh", accessAsIs}, // the same, as the vendor's PHP SDK calls it
	{http.MethodPost, "/api/auth/recuperarClave", accessAsIs},
	{http.MethodPost, "/api/auth/revoke", accessCallerOnly},
	{http.MethodPost, "/api/v1/usuario/{n}/apikey", accessCallerOnly},
	{http.MethodGet, "/api/v1/usuario/empresas", accessProfile},

	// §4.2: company API keys.
	{http.MethodGet, "/api/v1/apikeys", accessCallerOnly},
	{http.MethodPost, "/api/v1/apikeys", accessCallerOnly},
	{http.MethodPost, "/api/v1/apikeys/{s}/revocar", accessCallerOnly},
	{http.MethodPost, "/api/v1/apikeys/{s}/rate-limit", accessCallerOnly},

	// §4.3: issued CFEs.
	{http.MethodGet, "/api/v1/cfeemitido/buscar", accessProfile},
	{http.MethodGet, "/api/v1/cfeemitido/{n}", accessProfile},
	{http.MethodGet, "/api/v1/cfeemitido/representacionImpresa", accessProfile},
	{http.MethodGet, "/api/v1/cfeemitido/graficaDiaria", accessProfile},
	{http.MethodPost, "/api/v1/cfeemitido/pdf", accessProfile},
	{http.MethodGet, "/api/v1/cfeemitido/graficaFacturacionMensual", accessProfile},
	{http.MethodGet, "/api/v1/cfeemitido/getConfiguracionExportacionCfe", accessProfile},
	{http.MethodPost, "/api/v1/cfeemitido/exportarExcel", accessProfile},
	{http.MethodPost, "/api/v1/cfeemitido/enviarPdfPorCorreo", accessProfile},
	{http.MethodGet, "/api/v1/cfeemitido/emailenvios", accessProfile},
	{http.MethodPost, "/api/v1/cfeemitido/generarSobreAutoridad", accessProfile},
	{http.MethodPost, "/api/v1/cfeemitido/generarSobreReceptor", accessProfile},
	{http.MethodPost, "/api/v1/cfeemitido/descargarPdfsFiltrados", accessProfile},
	{http.MethodPost, "/api/v1/cfeemitido/{n}/marcar-aceptado", accessProfile},
	{http.MethodPost, "/api/v1/ExportacionContable/exportarSistemaContable", accessProfile},

	// §4.4: receipts.
	{http.MethodPost, "/api/v1/comprobante/emitir", accessProfile},
	{http.MethodPost, "/api/v1/comprobante/firmarXml", accessProfile},
	{http.MethodPost, "/api/v1/comprobante/anular", accessProfile},
	{http.MethodGet, "/api/v1/comprobante/getByIdCfeEmitido", accessProfile},
	{http.MethodPost, "/api/v1/comprobante/reaplicarReferencia", accessProfile},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/{s}", accessProfile},
	{http.MethodPost, "/api/v1/comprobante/previsualizar", accessProfile},
	// The agent's own outbox delivers locally signed CFEs; a POS has no
	// business posting them in the company's name.
	{http.MethodPost, "/api/v1/comprobante/recibirFirmado", accessCallerOnly},

	// §4.5: issuing points.
	{http.MethodPost, "/api/v1/puntoemision/editar", accessProfile},
}

// proxyAccessOf classifies a request by its method and path. A path with
// escapes of its own (URL.RawPath set, such as %2F inside a segment) is
// caller-only: the service might decode it into another route than the one
// matched here.
func proxyAccessOf(r *http.Request) proxyAccess {
	if r.URL.RawPath != "" {
		return accessCallerOnly
	}
	for _, rt := range proxyRoutes {
		if rt.method == r.Method && pathMatches(rt.pattern, r.URL.Path) {
			return rt.access
		}
	}
	return accessCallerOnly
}

// inProxyArea reports whether a request path is, or once cleaned by the
// router or by a server behind the proxy would be, under one of the
// forwarded prefixes: under /api/ or /auth/, decoded or not, with
// backslashes read as slashes. The router answers such a path only if it is
// clean (cleanProxyPath); a path elsewhere keeps the router's own handling.
func inProxyArea(r *http.Request) bool {
	p := r.URL.Path
	for _, c := range []string{p, path.Clean(p), path.Clean(strings.ReplaceAll(p, `\`, "/"))} {
		if strings.HasPrefix(c, "/api/") || strings.HasPrefix(c, "/auth/") || c == "/api" || c == "/auth" {
			return true
		}
	}
	return false
}

// cleanProxyPath reports whether an escaped request path, as it arrived
// (URL.EscapedPath: RawPath when the request had escapes of its own), is
// made of clean segments only, so that a server behind the proxy resolves
// it to the route matched here and to no other. A segment is clean when:
//   - it is not empty (no "//", no trailing slash) and not dots only (".",
//     "..", "..."): no step up or sideways in the tree;
//   - it has no ";" (a path parameter: Tomcat and Spring resolve "..;" as
//     "..") and no "\" (a separator for Windows servers and some proxies);
//   - it has no percent escape of ".", "/", "\", ";" or "%" (a second
//     decoding behind the proxy would bring the above back), any case, nor
//     of a control character, and what it decodes to is valid UTF-8 (an
//     overlong "%c0%ae" is a "." to old decoders).
//
// Other escapes (%20, %C3%B1, ...) are clean: they name no other route.
func cleanProxyPath(escaped string) bool {
	rest, ok := strings.CutPrefix(escaped, "/")
	if !ok {
		return false
	}
	for _, seg := range strings.Split(rest, "/") {
		if !cleanSegment(seg) {
			return false
		}
	}
	return true
}

func cleanSegment(seg string) bool {
	if strings.Trim(seg, ".") == "" || strings.ContainsAny(seg, `;\`) {
		return false // empty, dots only, a path parameter or a backslash
	}
	decoded, err := url.PathUnescape(seg)
	if err != nil || !utf8.ValidString(decoded) {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] != '%' {
			continue
		}
		b, _ := url.PathUnescape(seg[i : i+3]) // well formed: PathUnescape above
		switch c := b[0]; {
		case c == '.', c == '/', c == '\\', c == ';', c == '%', c < 0x20, c == 0x7f:
			return false
		}
		i += 2
	}
	return true
}

// pathMatches reports whether path matches pattern segment by segment.
func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		x := xs[i]
		switch p {
		case "{n}":
			if x == "" || strings.Trim(x, "0123456789") != "" {
				return false
			}
		case "{s}":
			if x == "" {
				return false
			}
		default:
			if p != x {
				return false
			}
		}
	}
	return true
}

// overrideHeaders are request headers some web frameworks read to route a
// request to another method or path than its own. A request forwarded with
// the profile's credentials never carries them, so that an allowed route
// cannot be turned into a caller-only one behind the proxy's back.
var overrideHeaders = []string{
	"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override", "X-Original-Method",
	"X-Original-URL", "X-Rewrite-URL",
}

// msgCallerCredentials is the refusal of a caller-only request that came
// without credentials of its own.
const msgCallerCredentials = "el agente no usa las credenciales del perfil para esta operación " +
	"(administra credenciales o no es de un punto de venta): envíe las suyas en X-API-Key o Authorization"
