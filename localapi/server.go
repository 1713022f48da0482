package localapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/throttle"
	"github.com/cfe-agent/cfe-agent/issuer"
)

// Defaults of ServerConfig.
const (
	DefaultListen          = "127.0.0.1:18787"
	DefaultBodyLimit       = 1 << 20 // 1 MiB: a CFE of 700 lines is far smaller
	DefaultShutdownTimeout = 5 * time.Second
)

// Issuer signs CFEs; *issuer.Issuer implements it.
type Issuer interface {
	// Issue signs the CFE req describes, or returns the stored answer of a uuid
	// already signed with the same content (Result.Replayed). Functional
	// rejections are *cfe.Error values whose Respuesta is the
	// codigo_respuesta: cfe.EINVALID (01 validation, 96 time zone),
	// cfe.ECONFLICT (02 uuid reused), cfe.EUNAVAILABLE (05 no CAE range, 06
	// certificate). Any other error is internal (99).
	Issue(ctx context.Context, req *cfe.Request) (*issuer.Result, error)
}

// ServerConfig configures a Server. Only Issuer and State are required;
// without Printing, POST /pdf answers 503.
type ServerConfig struct {
	// Listen is "IP:port": 127.0.0.1:18787 (DefaultListen, when empty), a
	// machine IP, or 0.0.0.0 (or [::]) to listen on every interface. Port 0
	// picks a free port.
	Listen string

	// AllowedOrigins are the browser origins (scheme://host[:port]) that may
	// call the module cross-origin. Pages served by the module itself are
	// always allowed.
	AllowedOrigins []string
	LAN            LANConfig

	// BodyLimit caps request bodies, in bytes; DefaultBodyLimit when zero.
	BodyLimit int64
	// ShutdownTimeout bounds Close; DefaultShutdownTimeout when zero.
	ShutdownTimeout time.Duration

	// Logger receives the access log and internal errors; discarded when nil.
	Logger *slog.Logger

	Issuer   Issuer
	State    StateSource
	Printing Printing
	// PrinterList answers GET /printers (printers.go); 503 when nil.
	PrinterList PrinterList

	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// StatusPage, when set, answers GET / for browsers (requests that accept
	// text/html): the agent's page is NewStatusPage; everyone else gets the
	// JSON of /state.
	StatusPage http.Handler

	// Hosted is the hosted service that /api/v1/... and /api/auth/...
	// requests are forwarded to (proxy.go); when nil they get 503.
	Hosted HostedService
	// HostedTransport sends the forwarded requests; a transport with a 30 s
	// response-header timeout when nil.
	HostedTransport http.RoundTripper

	// Backups answers POST /backup (backup.go) for loopback callers that
	// present AdminToken in X-CFE-Admin; without both it answers 503.
	Backups    Backups
	AdminToken string
	// Repairs answers POST /recuperar (recover.go) on the same terms as
	// Backups; without it (or AdminToken) it answers 503.
	Repairs Repairs
	// ReportResends answers POST /reporte/reenviar (reportresend.go) on the
	// same terms; without it (or AdminToken) it answers 503.
	ReportResends ReportResends
	// DailyReports answers POST /reporte-diario (dailyreport.go) on the
	// same terms as Backups; without it (or AdminToken) it answers 503.
	DailyReports DailyReports
	// KeyIn answers POST /contingencia (contingency.go) on the same terms
	// as Backups; without it (or AdminToken) it answers 503.
	KeyIn KeyIn

	// Caja answers the shop's screens (caja.go): GET /caja, /comprobantes,
	// /cierre and the page's actions; without it they answer 503.
	Caja Caja
}

// LANConfig opens the module to callers on other machines.
type LANConfig struct {
	// Enabled lets callers that are not on loopback in, with a token. When
	// false they are refused with 403 whatever they present.
	Enabled bool
	// Tokens are the per-terminal secrets LAN callers present. They never
	// reach a log or an error message.
	Tokens []string
	// AllowedHosts are extra names accepted in the Host header (for example
	// the machine's name on the shop's network).
	AllowedHosts []string
	// MaxFailures wrong or missing tokens from one address, without pause, make
	// it wait (429 with Retry-After, valid token or not); it then earns one
	// try every FailureWindow/MaxFailures. 10 and one minute when
	// zero.
	MaxFailures   int
	FailureWindow time.Duration
	// PrefixFailures are the same over every address of an IPv4 /24 or an
	// IPv6 /64, and TotalFailures over all LAN callers together: the
	// ceiling of failures per FailureWindow. Callers that presented a valid
	// token in the last 24 hours are held by their own address only, and
	// the other addresses of their prefix by the prefix, not the ceiling
	// (lanthrottle.go). 30 and 60 when zero.
	PrefixFailures int
	TotalFailures  int
}

// Server is the local REST module. Open starts it, Close stops it.
type Server struct {
	cfg    ServerConfig
	log    *slog.Logger
	listen netip.AddrPort // as configured; the port may be 0

	handler http.Handler
	router  *mux.Router // the routes, for the description's test (openapi_routes_internal_test.go)
	// shapes maps a route path to the writer of its error bodies; paths not
	// listed use writePlainError.
	shapes map[string]errorWriter
	// methods lists the methods each route path accepts (for 405's Allow).
	methods map[string][]string
	hosts   hostPolicy
	// origins holds the allowed origins, lower-cased.
	origins map[string]bool
	tokens  tokenSet
	proxy   http.Handler // forwards to Hosted; nil without one

	// lanFails throttles addresses that present wrong LAN tokens (lanthrottle.go).
	lanFails *throttle.Throttle
	// lanCeilingLogged is when the LAN's failure ceiling was last logged as
	// reached (Unix nanoseconds of now()), so that a long attack logs it
	// once per failure window rather than at every try it earns back.
	lanCeilingLogged atomic.Int64

	ln       net.Listener
	srv      *http.Server
	endpoint endpoint // effective listen address, known once Open succeeds

	closeOnce sync.Once
	closeErr  error
}

// NewServer returns a Server configured by cfg; Open checks cfg and starts it.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		shapes:  make(map[string]errorWriter),
		methods: make(map[string][]string),
		origins: make(map[string]bool, len(cfg.AllowedOrigins)),
		tokens:  newTokenSet(cfg.LAN.Tokens),
	}
	s.lanFails = newLANThrottle(cfg.LAN)
	for _, o := range cfg.AllowedOrigins {
		s.origins[normalizeOrigin(o)] = true
	}

	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(s.handleNotFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(s.handleMethodNotAllowed)
	s.registerStatusRoutes(r)
	s.registerSignRoutes(r)
	s.registerPDFRoutes(r)
	s.registerPrinterRoutes(r)
	s.registerDocsRoutes(r)
	s.registerProxyRoutes(r)
	s.registerFaviconRoutes(r)
	s.registerBackupRoutes(r)
	s.registerRecoverRoutes(r)
	s.registerReportResendRoutes(r)
	s.registerDailyReportRoutes(r)
	s.registerContingencyRoutes(r)
	s.registerCajaRoutes(r)
	// The security chain wraps the whole router rather than using r.Use, so
	// that it also guards unmatched paths and whatever is mounted later;
	// proxyPaths goes before the router, which would redirect an unclean
	// path of the proxy's area instead of refusing it.
	s.router = r
	s.handler = s.secure(s.proxyPaths(r))
	return s
}

// handle registers h for method on path.
func (s *Server) handle(r *mux.Router, method, path string, h http.HandlerFunc) {
	r.Handle(path, h).Methods(method)
	s.methods[path] = append(s.methods[path], method)
}

// check validates the configuration Open depends on.
func (s *Server) check() error {
	var problems []string
	ap, err := netip.ParseAddrPort(s.cfg.Listen)
	if err != nil {
		problems = append(problems, fmt.Sprintf("listen address %q is not IP:port", s.cfg.Listen))
	}
	s.listen = ap
	if s.cfg.Issuer == nil {
		problems = append(problems, "no Issuer")
	}
	if s.cfg.State == nil {
		problems = append(problems, "no StateSource")
	}
	if s.cfg.LAN.Enabled && len(s.cfg.LAN.Tokens) == 0 {
		problems = append(problems, "LAN mode is enabled without tokens")
	}
	for _, t := range s.cfg.LAN.Tokens {
		if t == "" {
			problems = append(problems, "a LAN token is empty")
			break
		}
	}
	for o := range s.origins {
		if o == "*" || o == "null" {
			problems = append(problems, fmt.Sprintf("allowed origin %q would let any page in", o))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("localapi: invalid configuration: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Open checks the configuration, listens, and serves in the background. The
// listener is opened before Open returns, so a busy port fails here.
func (s *Server) Open() error {
	if s.ln != nil {
		return errors.New("localapi: server already open")
	}
	if err := s.check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.listen.String())
	if err != nil {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "localapi.Open", Err: err,
			Message: fmt.Sprintf("no se pudo abrir el módulo local en %s: la dirección no está disponible "+
				"o el puerto está en uso (¿hay otro cfe-agent en ejecución?)", s.listen)}
	}
	s.ln = ln
	s.endpoint = endpoint{ip: s.listen.Addr(), port: uint16(ln.Addr().(*net.TCPAddr).Port)}
	s.hosts = newHostPolicy(s.endpoint.ip, s.cfg.LAN.AllowedHosts)
	s.srv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	srv := s.srv
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("local module stopped serving", "err", err)
		}
	}()
	s.log.Info("local module listening", "base_url", s.BaseURL(), "lan", s.cfg.LAN.Enabled)
	if !s.endpoint.ip.IsLoopback() && !s.cfg.LAN.Enabled {
		s.log.Warn("listening beyond loopback with LAN mode off: other machines will be refused",
			"listen", s.endpoint.String())
	}
	return nil
}

// Close stops accepting requests and waits for those in flight, at most
// ShutdownTimeout; then it closes the remaining connections.
// Later calls return the first call's result.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		defer cancel()
		s.closeErr = s.srv.Shutdown(ctx)
		if errors.Is(s.closeErr, context.DeadlineExceeded) {
			s.closeErr = s.srv.Close()
		}
	})
	return s.closeErr
}

// Addr returns the address the server listens on (with the real port), or
// nil before Open.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// BaseURL returns the module's base URL: the configured IP with the real
// port, such as http://127.0.0.1:18787, or http://0.0.0.0:18787 when
// listening on every interface. It is "" before Open.
func (s *Server) BaseURL() string {
	if s.ln == nil {
		return ""
	}
	return s.endpoint.baseURL()
}

// URLs returns the URLs the module can be reached at: the base URL, or, when
// listening on every interface, one per local interface address, loopback
// first.
func (s *Server) URLs() []string {
	if s.ln == nil {
		return nil
	}
	return s.endpoint.urls()
}

// now reads the injected clock.
func (s *Server) now() time.Time { return s.cfg.Now() }
