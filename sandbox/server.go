package sandbox

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/internal/throttle"
)

// Config configures a Server.
type Config struct {
	Environment string // EnvSandbox or EnvProduccion
	DataDir     string
	Listen      string // default 127.0.0.1:18788
	// DemoPassword is the password of the demo user created on first run;
	// when empty one is generated and printed once on Out.
	DemoPassword string
	Seed         *Seed
	SMTPAddr     string // host:port of the mail server for password recovery
	// TrustProxy makes the client address the last X-Forwarded-For hop.
	TrustProxy  bool
	LoginLimits LoginLimits // DefaultLoginLimits when zero
	Logger      *slog.Logger
	Out         io.Writer // where first-run information is printed; io.Discard when nil
	Now         func() time.Time

	// ClientAddr, when set, decides the client address of every request,
	// before TrustProxy and the connection. It exists for tests, which
	// simulate callers from several networks over one loopback connection;
	// the command line never sets it.
	ClientAddr func(r *http.Request) (netip.Addr, bool)
	// PasswordCost is the bcrypt cost; passwordCost when zero. Tests lower it.
	PasswordCost int

	// KeyFailureLimits throttle invalid API keys per client address;
	// DefaultKeyFailureLimits when zero.
	KeyFailureLimits KeyFailureLimits

	// MaxExportRows bounds the CFEs of one Excel or accounting export;
	// maxExportRows when zero. Tests lower it.
	MaxExportRows int

	// MaxZipPDFs bounds the CFEs of one descargarPdfsFiltrados; maxZipPDFs
	// when zero. Tests lower it.
	MaxZipPDFs int
}

// Server is the hosted-service emulator.
type Server struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	db      *db
	prefix  string // the environment's API key prefix
	other   string // the other environment's prefix
	jwtKey  []byte
	limiter *keyLimiter
	guard   *loginGuard
	metrics *metrics
	router  *mux.Router
	issuers issuers

	keyFails *throttle.Throttle // invalid API keys per address (keythrottle.go)
	previews previewStore       // recent previews by token (preview.go)

	ln   net.Listener
	http *http.Server
	done chan error
}

// New opens the data directory of cfg.Environment, creates the demo data on
// first run and applies cfg.Seed. It does not listen yet: see Open.
func New(cfg Config) (*Server, error) {
	prefix, other, err := envPrefixes(cfg.Environment)
	if err != nil {
		return nil, err
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.LoginLimits == (LoginLimits{}) {
		cfg.LoginLimits = DefaultLoginLimits
	}
	if err := cfg.LoginLimits.check(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = passwordCost
	}
	d, err := openDB(cfg.DataDir, cfg.Environment)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, now: cfg.Now, db: d, prefix: prefix, other: other,
		limiter: newKeyLimiter(), metrics: &metrics{},
	}
	s.guard = newLoginGuard(cfg.LoginLimits, s.metrics, s.log)
	s.keyFails = newKeyThrottle(cfg.KeyFailureLimits)
	if err := s.bootstrap(); err != nil {
		return nil, errors.Join(err, s.issuers.close(), d.Close())
	}
	s.router = s.routes()
	return s, nil
}

func envPrefixes(env string) (prefix, other string, err error) {
	switch env {
	case EnvSandbox:
		return prefixTest, prefixLive, nil
	case EnvProduccion:
		return prefixLive, prefixTest, nil
	}
	return "", "", fmt.Errorf("sandbox: unknown environment %q (want %q or %q)", env, EnvSandbox, EnvProduccion)
}

// Handler returns the HTTP handler, for callers that run their own server.
func (s *Server) Handler() http.Handler { return s.router }

// Open listens on cfg.Listen (a busy port fails here) and serves in the
// background.
func (s *Server) Open() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("sandbox: listen on %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	s.http = &http.Server{Handler: s.router, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan error, 1)
	go func() { s.done <- s.http.Serve(ln) }()
	s.log.Info("cfe-sandbox listening", "addr", ln.Addr().String(), "environment", s.cfg.Environment)
	return nil
}

// URL returns the base URL of the listening server.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops serving (waiting up to shutdownTimeout for requests in flight)
// and closes the data file.
func (s *Server) Close() error {
	var errs []error
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		err := s.http.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			// Connections still open at the deadline (net/http waits 5 s for
			// connections that never sent a request) are closed outright.
			err = s.http.Close()
		}
		errs = append(errs, err)
		if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.issuers.close(), s.db.Close())
	return errors.Join(errs...)
}

func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	r.Use(s.withRequestID, withBodyLimit)
	s.registerAuthRoutes(r)
	s.registerKeyRoutes(r)
	s.registerReceiptRoutes(r)
	s.registerEmitRoutes(r)
	s.registerIssuedRoutes(r)
	s.registerPointRoutes(r)
	s.registerPDFRoutes(r)
	s.registerEnvelopeRoutes(r)
	s.registerDocumentRoutes(r)
	s.registerMetricsRoutes(r)
	s.registerDataRoutes(r)
	s.registerAccountRoutes(r)
	r.NotFoundHandler = s.withRequestID(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.writeError(w, req, notFound("la ruta"))
	}))
	r.MethodNotAllowedHandler = s.withRequestID(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.writeError(w, req, errMethod)
	}))
	return r
}

// requestIDKey carries the request id in the request context.
type requestIDKey struct{}

// withRequestID gives each request an id, sent back in X-Request-Id and in
// error bodies.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := hex.EncodeToString(randomBytes(8))
		w.Header().Set(headerRequestID, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

func withBodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// clientAddr is the caller's address: the test hook when set, the last
// X-Forwarded-For hop when TrustProxy, else the connection's peer.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	if s.cfg.ClientAddr != nil {
		if a, ok := s.cfg.ClientAddr(r); ok {
			return a.Unmap()
		}
	}
	if s.cfg.TrustProxy {
		if a, ok := lastForwarded(r.Header.Values("X-Forwarded-For")); ok {
			return a
		}
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
