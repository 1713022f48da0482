package localapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// HostedService is the hosted service as the proxy needs it; *hosted.Client
// implements it.
type HostedService interface {
	// BaseURL is the service's address.
	BaseURL() *url.URL
	// Authorize sets the profile's credentials on h (X-API-Key, or a JWT it
	// logs in for); it sets nothing when the profile has none. Errors:
	// EUNAUTHORIZED when the service refused the profile's login;
	// EUNAVAILABLE when a login could not be made now.
	Authorize(ctx context.Context, h http.Header) error
	// Observe learns from the answer to a forwarded request (reachability,
	// rate-limit headers, Retry-After, a refused JWT); ownCredentials tells
	// whether the proxy added the profile's credentials.
	Observe(resp *http.Response, ownCredentials bool)
	// ObserveFailure learns that a forwarded request got no answer.
	ObserveFailure()
}

// Path prefixes forwarded to the hosted service: every route of these that
// the module does not serve itself; and the one route outside them, the
// refresh without /api that the vendor's PHP SDK uses.
const (
	proxyAPIPrefix   = "/api/v1/"
	proxyAuthPrefix  = "/api/auth/"
	proxyRefreshPath = "/auth/refresh"
)

// formPaths are the forwarded routes whose hosted contract takes a form body
// rather than JSON (interface §4.4.1). They are the only exception to the
// module's JSON-only rule; the Origin rule still guards them.
var formPaths = map[string]bool{"/api/v1/comprobante/anular": true}

// proxyHeadersOut are request headers that belong to the local module and are
// never forwarded.
var proxyHeadersOut = []string{headerToken, headerRequestID, "Cookie", "Origin", "Referer"}

// defaultProxyTimeout bounds the wait for the service's response headers when
// ServerConfig.HostedTransport is nil.
const defaultProxyTimeout = 30 * time.Second

type ownCredentialsKey struct{}

func (s *Server) registerProxyRoutes(r *mux.Router) {
	if s.cfg.Hosted != nil {
		transport := s.cfg.HostedTransport
		if transport == nil {
			transport = &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: defaultProxyTimeout,
				TLSHandshakeTimeout: 10 * time.Second, IdleConnTimeout: 90 * time.Second}
		}
		base := s.cfg.Hosted.BaseURL()
		s.proxy = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(base) // no X-Forwarded-*: the shop's addresses stay in the shop
			},
			Transport:      transport,
			ModifyResponse: s.observeHosted,
			ErrorHandler:   s.proxyFailed,
			ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		}
	}
	r.PathPrefix(proxyAPIPrefix).HandlerFunc(s.handleProxy)
	r.PathPrefix(proxyAuthPrefix).HandlerFunc(s.handleProxy)
	r.Path(proxyRefreshPath).HandlerFunc(s.handleProxy)
}

// proxyPaths answers a request for the proxy's area (inProxyArea) whose path
// is not made of clean segments (cleanProxyPath) as the module answers any
// route it does not have, 404, before the router sees it: the router would
// redirect a path it cleans itself ("/a/../b", "//") to another route, and
// hand one it leaves alone ("..;", "%2e%2e", a trailing slash) to the
// proxy, for a server behind it to resolve elsewhere. Nothing is forwarded,
// whoever's credentials the request carries.
func (s *Server) proxyPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inProxyArea(r) && !cleanProxyPath(r.URL.EscapedPath()) {
			s.log.Warn("proxy: refused a path that is not made of clean segments", "request_id", requestID(r.Context()),
				"method", r.Method, "path", r.URL.EscapedPath())
			s.handleNotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// handleProxy forwards a request to the hosted service, streaming both
// bodies and keeping the service's status and headers. Whose credentials go
// with it is decided by proxyRoutes (proxy_routes.go): a point-of-sale
// operation that carries no credentials of its own gets the profile's; an
// authentication request whose credential is in its body (login, refresh) is
// forwarded as it came, so a caller's login never uses or ends the agent's
// session; every other request (credential management, rate limits, routes
// the proxy does not know) is forwarded only with the caller's own
// credentials and refused here without them, so that no local user can mint
// or revoke hosted credentials with the profile's.
func (s *Server) handleProxy(w http.ResponseWriter, r *http.Request) {
	if !cleanProxyPath(r.URL.EscapedPath()) {
		s.handleNotFound(w, r) // proxyPaths answers these first; the proxy does not rely on it
		return
	}
	if s.proxy == nil {
		s.writeProxyError(w, r, http.StatusServiceUnavailable, "el servicio en la nube no está configurado en el perfil (hosted.base_url)")
		return
	}
	for _, h := range proxyHeadersOut {
		r.Header.Del(h)
	}
	if s.tokens.contains(presentedToken(r)) {
		r.Header.Del("Authorization") // a LAN token is the module's, never the service's
	}
	own := false
	switch proxyAccessOf(r) {
	case accessProfile:
		if hasHostedCredentials(r.Header) {
			break
		}
		if err := s.cfg.Hosted.Authorize(r.Context(), r.Header); err != nil {
			status := http.StatusBadGateway
			if cfe.ErrorCode(err) == cfe.EUNAUTHORIZED {
				status = http.StatusUnauthorized
			}
			s.log.Warn("proxy: the profile's hosted credentials are not usable", "request_id", requestID(r.Context()), "err", err)
			s.writeProxyError(w, r, status, cfe.ErrorMessage(err))
			return
		}
		own = hasHostedCredentials(r.Header)
		if own {
			for _, h := range overrideHeaders {
				r.Header.Del(h)
			}
		}
	case accessCallerOnly:
		if !hasHostedCredentials(r.Header) {
			s.log.Warn("proxy: refused a request that needs the caller's own hosted credentials",
				"request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path)
			s.writeProxyError(w, r, http.StatusUnauthorized, msgCallerCredentials)
			return
		}
	case accessAsIs: // forwarded as it came
	}
	ctx := context.WithValue(r.Context(), ownCredentialsKey{}, own)
	s.proxy.ServeHTTP(&proxyWriter{ResponseWriter: w, h: http.Header{}}, r.WithContext(ctx))
}

// hasHostedCredentials reports whether a request carries credentials for the
// service: X-API-Key or an Authorization header.
func hasHostedCredentials(h http.Header) bool {
	return h.Get("X-API-Key") != "" || h.Get("Authorization") != ""
}

func (s *Server) observeHosted(resp *http.Response) error {
	own, _ := resp.Request.Context().Value(ownCredentialsKey{}).(bool)
	s.cfg.Hosted.Observe(resp, own)
	return nil
}

// proxyFailed answers a request the service did not answer: 504 when it took
// too long, 502 otherwise.
func (s *Server) proxyFailed(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the caller left; no one to answer
	}
	s.cfg.Hosted.ObserveFailure()
	s.log.Warn("proxy: hosted service did not answer", "request_id", requestID(r.Context()),
		"path", r.URL.Path, "err", err)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		s.writeProxyError(w, r, http.StatusGatewayTimeout, "el servicio en la nube no respondió a tiempo")
		return
	}
	s.writeProxyError(w, r, http.StatusBadGateway, "no se pudo contactar el servicio en la nube")
}

// ProxyError is the body of an error the proxy itself answers. It carries
// both the module's shape ({ok, error}) and the service's ({error, code,
// details, request_id}), so a client written for either reads it.
type ProxyError struct {
	OK        bool             `json:"ok"`
	Error     string           `json:"error"`
	Code      string           `json:"code"`
	Details   []cfe.FieldError `json:"details"`
	RequestID string           `json:"request_id"`
}

var proxyCodes = map[int]string{
	http.StatusUnauthorized:       cfe.EUNAUTHORIZED,
	http.StatusBadGateway:         cfe.EUNAVAILABLE,
	http.StatusServiceUnavailable: cfe.EUNAVAILABLE,
	http.StatusGatewayTimeout:     cfe.EUNAVAILABLE,
}

func (s *Server) writeProxyError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	writeJSON(w, status, ProxyError{Error: msg, Code: proxyCodes[status], Details: []cfe.FieldError{},
		RequestID: requestID(r.Context())})
}

// proxyWriter gives the reverse proxy a header map of its own and, when the
// answer starts, lets the service's headers replace the module's (the
// service's X-Request-Id, Cache-Control, ...) instead of doubling them.
type proxyWriter struct {
	http.ResponseWriter
	h     http.Header
	wrote bool
}

func (p *proxyWriter) Header() http.Header { return p.h }

func (p *proxyWriter) WriteHeader(code int) {
	if !p.wrote {
		p.wrote = true
		dst := p.ResponseWriter.Header()
		for k, v := range p.h {
			dst[k] = v
		}
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *proxyWriter) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (p *proxyWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }
