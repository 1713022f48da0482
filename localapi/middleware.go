package localapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Header names of the module's protocol.
const (
	headerRequestID = apitype.HeaderRequestID
	headerToken     = "X-CFE-Token"
)

// CORS answers given to allowed origins.
const (
	corsAllowMethods  = "GET, POST"
	corsAllowHeaders  = "Content-Type, Authorization, X-API-Key, " + headerToken + ", " + headerRequestID
	corsExposeHeaders = headerRequestID + ", " + headerPrinter + ", " + headerCopies + ", " + headerJob + ", " + headerJobSt +
		", " + headerFormat +
		", Retry-After, X-RateLimit-Limit-Minute, X-RateLimit-Remaining-Minute, X-RateLimit-Limit-Hour, X-RateLimit-Remaining-Hour"
	corsMaxAge = "600"
)

// secure wraps h in the module's request pipeline: request id and access log
// (outermost, so that refusals are logged too), the response headers every
// answer carries, then the security rules in the order the package comment
// gives.
func (s *Server) secure(h http.Handler) http.Handler {
	h = s.checkCaller(h)
	h = s.checkBody(h)
	h = s.checkFetchSite(h)
	h = s.checkOrigin(h)
	h = s.checkHost(h)
	h = commonHeaders(h)
	return s.logRequests(h)
}

// commonHeaders sets the headers every response carries.
func commonHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Add("Vary", "Origin")
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses requests whose Host header does not name this listener
// (DNS rebinding).
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allows(r.Host) {
			s.refuse(w, r, "host not allowed", &cfe.Error{Code: cfe.EFORBIDDEN,
				Message: "el encabezado Host no corresponde a este módulo local",
				Fields:  []cfe.FieldError{{Campo: "Host", Mensaje: "se espera 127.0.0.1, localhost, [::1] o la dirección configurada del equipo"}}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses foreign browser origins, answers CORS for allowed ones
// (preflights included) and lets through requests without an Origin (POS
// software) and requests from pages this module serves itself.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Origin")
		if len(values) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		origin := values[0]
		switch {
		case s.allowedOrigin(values):
			s.allowCORS(w, r, origin)
			if isPreflight(r) {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		case len(values) == 1 && sameOrigin(origin, r.Host):
			// A page served by this module: no CORS needed.
		default:
			s.refuse(w, r, "origin not allowed", &cfe.Error{Code: cfe.EFORBIDDEN,
				Message: "el origen de la solicitud no está autorizado a usar el módulo local",
				Fields:  []cfe.FieldError{{Campo: "Origin", Mensaje: "agregue el origen a allowed_origins del perfil"}}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkFetchSite refuses requests a browser made on behalf of another site:
// Sec-Fetch-Site "cross-site" or "same-site" (any other port of the same
// host is same-site) without an allowed Origin. Such requests need no Origin
// (an <img>, a no-cors GET, a link), so checkOrigin alone would let them
// reach the routes and the proxy, which adds the profile's credentials.
// Requests without Sec-Fetch-Site (POS software, the tray, any native
// client; browsers over plain HTTP to a LAN address), navigations the user
// made ("none") and the module's own pages ("same-origin") pass. Browsers
// never let a page set Sec-Fetch-* headers, so a page cannot forge a pass.
// An unknown value is refused: only browsers send the header.
func (s *Server) checkFetchSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.fetchSiteAllowed(r) {
			s.refuse(w, r, "cross-site browser request", &cfe.Error{Code: cfe.EFORBIDDEN,
				Message: "el navegador envió la solicitud desde otra página (otro sitio o puerto); el módulo local solo atiende sus propias páginas y los orígenes autorizados",
				Fields: []cfe.FieldError{{Campo: "Sec-Fetch-Site",
					Mensaje: "abra la página de estado desde el agente o agregue el origen de la aplicación a allowed_origins del perfil"}}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fetchSiteAllowed applies checkFetchSite's rule to r.
func (s *Server) fetchSiteAllowed(r *http.Request) bool {
	values := r.Header.Values("Sec-Fetch-Site")
	if len(values) == 0 {
		return true
	}
	if len(values) == 1 {
		switch strings.ToLower(strings.TrimSpace(values[0])) {
		case "none", "same-origin":
			return true
		}
	}
	return s.allowedOrigin(r.Header.Values("Origin"))
}

// allowedOrigin reports whether a request's Origin header values name one
// origin of the profile's allowed_origins.
func (s *Server) allowedOrigin(values []string) bool {
	return len(values) == 1 && s.origins[normalizeOrigin(values[0])]
}

// allowCORS writes the CORS headers for an allowed origin; a preflight also
// gets the methods, headers and, when it asks, private network access.
func (s *Server) allowCORS(w http.ResponseWriter, r *http.Request, origin string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	if !isPreflight(r) {
		return
	}
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Add("Vary", "Access-Control-Request-Private-Network")
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	if strings.EqualFold(r.Header.Get("Access-Control-Request-Private-Network"), "true") {
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
}

func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
}

// normalizeOrigin lower-cases an origin and drops a trailing slash.
func normalizeOrigin(o string) string { return strings.TrimSuffix(strings.ToLower(o), "/") }

// sameOrigin reports whether origin is the module itself as the request
// addressed it (host already checked against the allowlist).
func sameOrigin(origin, host string) bool {
	return normalizeOrigin(origin) == "http://"+strings.ToLower(host)
}

// checkBody requires JSON bodies in UTF-8 on methods that carry one, and caps
// their size.
func (s *Server) checkBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); !isJSON(ct) && !(formPaths[r.URL.Path] && isForm(ct)) {
			s.refuse(w, r, "unsupported media type", &cfe.Error{Code: cfe.EINVALID, Err: errMediaType,
				Message: "el cuerpo debe enviarse como application/json en UTF-8",
				Fields:  []cfe.FieldError{{Campo: "Content-Type", Mensaje: "se espera application/json (charset utf-8)"}}})
			return
		}
		if r.ContentLength > s.cfg.BodyLimit {
			s.refuse(w, r, "body too large", tooLarge(s.cfg.BodyLimit, &http.MaxBytesError{Limit: s.cfg.BodyLimit}))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.BodyLimit)
		next.ServeHTTP(w, r)
	})
}

// isJSON reports whether a Content-Type is application/json with no charset
// or UTF-8.
func isJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// isForm reports whether a Content-Type is application/x-www-form-urlencoded.
func isForm(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

func tooLarge(limit int64, err error) *cfe.Error {
	return &cfe.Error{Code: cfe.EINVALID, Err: err,
		Message: fmt.Sprintf("el cuerpo supera el máximo de %d bytes", limit),
		Fields:  []cfe.FieldError{{Campo: "cuerpo", Mensaje: fmt.Sprintf("máximo %d bytes", limit)}}}
}

// checkCaller lets loopback callers through and, in LAN mode, callers that
// present a valid token. Without LAN mode other callers are forbidden: no
// token can help them, so they get 403 rather than 401.
func (s *Server) checkCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case isLoopback(r.RemoteAddr):
		case s.cfg.LAN.Enabled && openPage(r):
			// The /caja page's HTML holds no data: the page asks for the
			// terminal's token and sends it with its requests (caja.go).
		case !s.cfg.LAN.Enabled:
			s.refuse(w, r, "remote caller with LAN mode off", &cfe.Error{Code: cfe.EFORBIDDEN,
				Message: "el módulo local solo acepta solicitudes de este mismo equipo (el modo LAN está desactivado)"})
			return
		case s.lanThrottled(w, r):
			return
		case !s.tokens.contains(presentedToken(r)):
			if s.lanFailed(w, r) {
				return // other wrong tokens from the address used its last try meanwhile
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="cfe-agent"`)
			s.refuse(w, r, "missing or invalid LAN token", &cfe.Error{Code: cfe.EUNAUTHORIZED,
				Message: "se requiere el token de la terminal para usar el módulo local desde otro equipo",
				Fields: []cfe.FieldError{{Campo: "Authorization",
					Mensaje: "envíe Authorization: Bearer <token> o " + headerToken + ": <token>"}}})
			return
		case s.lanThrottled(w, r):
			// A right token, but wrong ones from the same address (or, for a
			// caller not yet trusted, its prefix or anywhere) used the tries
			// while it was checked: the answer must not tell them apart.
			return
		default:
			s.lanPassed(r)
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback reports whether a remote address (ip:port) is on loopback.
func isLoopback(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// presentedToken returns the token of "Authorization: Bearer <token>" or,
// failing that, of the X-CFE-Token header.
func presentedToken(r *http.Request) string {
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	return strings.TrimSpace(r.Header.Get(headerToken))
}

// tokenSet holds the SHA-256 of each LAN token, so that comparisons take the
// same time whatever the length or content of what a caller presents.
type tokenSet [][sha256.Size]byte

func newTokenSet(tokens []string) tokenSet {
	set := make(tokenSet, 0, len(tokens))
	for _, t := range tokens {
		set = append(set, sha256.Sum256([]byte(t)))
	}
	return set
}

// contains compares tok with every token, without stopping at a match.
func (set tokenSet) contains(tok string) bool {
	if tok == "" {
		return false
	}
	sum := sha256.Sum256([]byte(tok))
	found := 0
	for i := range set {
		found |= subtle.ConstantTimeCompare(sum[:], set[i][:])
	}
	return found == 1
}

// refuse logs why the pipeline turned a request away and writes the error in
// the shape of the route it was for.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, reason string, err *cfe.Error) {
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "request refused",
		slog.String("request_id", requestID(r.Context())),
		slog.String("reason", reason),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("remote", remoteIP(r.RemoteAddr)),
		slog.String("host", r.Host),
		slog.String("origin", r.Header.Get("Origin")))
	s.writeError(w, r, err)
}

// logRequests gives each request an id (the caller's X-Request-Id when well
// formed, a new one otherwise), echoes it, recovers panics, and writes one
// access log line per request. Only method, path, status, size, duration,
// remote address and id are logged: never headers or bodies.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(headerRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(headerRequestID, id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		rec := &recorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				err := &cfe.Error{Code: cfe.EINTERNAL, Err: fmt.Errorf("panic: %v", v)}
				if rec.wrote {
					s.logInternal(r, err) // too late to answer; the client sees a cut response
				} else {
					s.writeError(rec, r, err) // logs it
				}
			}
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "http request",
				slog.String("request_id", id),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("remote", remoteIP(r.RemoteAddr)),
				slog.Int("status", rec.status()),
				slog.Int64("bytes", rec.bytes),
				slog.Duration("duration", time.Since(start)))
		}()
		next.ServeHTTP(rec, r)
	})
}

type requestIDKey struct{}

// requestID returns the id logRequests gave the request.
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// validRequestID accepts ids of 1 to 64 letters, digits, '-', '_' and '.', so
// that what a caller sends cannot forge log lines or headers.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// remoteIP returns the IP of a remote address, or the address as given.
func remoteIP(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// recorder remembers the status and size of a response for the access log.
type recorder struct {
	http.ResponseWriter
	code  int
	bytes int64
	wrote bool
}

func (rec *recorder) WriteHeader(code int) {
	if !rec.wrote {
		rec.code, rec.wrote = code, true
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if !rec.wrote {
		rec.WriteHeader(http.StatusOK)
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

func (rec *recorder) status() int {
	if !rec.wrote {
		return http.StatusOK
	}
	return rec.code
}
