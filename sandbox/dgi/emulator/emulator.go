package emulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

// Defaults of Config.
const (
	DefaultListen      = "127.0.0.1:18789"
	DefaultAdminListen = "127.0.0.1:18790"
	// DefaultProcessing is how long after receiving an envelope its
	// verdicts may be asked for (ACKSobre's Fechahora). DGI's example
	// answered a Fechahora 19 s after reception.
	DefaultProcessing = 2 * time.Second
)

// Files the emulator writes in its data directory besides DBFile.
const (
	CertFile = "dgi-cert.pem" // the certificate its answers are signed with
	KeyFile  = "dgi-key.pem"  // its key (mode 0600)
)

// Config configures an Emulator.
type Config struct {
	// Listen is the address of DGI's services (PathReception,
	// PathQueries); AdminListen the address of the admin endpoint (knobs
	// and counts), kept apart so that the services can be made unreachable.
	Listen      string
	AdminListen string
	// DataDir holds DBFile, CertFile and KeyFile.
	DataDir string
	// TLS, when set, serves the services over https with it (the admin
	// endpoint stays http on its loopback address).
	TLS *tls.Config
	// Now is the clock; nil means time.Now. The admin endpoint can move it
	// forward (an offset kept in the data file).
	Now func() time.Time
	// Processing is how long after reception an envelope's verdicts may be
	// asked for (Fechahora), and how long a daily report stays AR before it
	// is processed (DR or ER); 0 means DefaultProcessing, a negative value
	// none (they may be asked for at once).
	Processing time.Duration
	// Delay delays every answer of the services (a knob; also settable at
	// run time).
	Delay time.Duration
	// ReportOutcome, when set, decides a received report's later state
	// instead of the emulator's own judgement (see ReportOutcome); the
	// emulator makes it DR or ER Processing after reception, and FR when a
	// later SecEnvio of the day is received.
	ReportOutcome ReportOutcome
	Logger        *slog.Logger
}

// Emulator is DGI's reception and query services, emulated (docs/dgi-emulator.md).
type Emulator struct {
	cfg    Config
	db     *bolt.DB
	creds  *signer.Credentials
	signer *signer.Signer
	log    *slog.Logger
	now    func() time.Time

	mu          sync.Mutex
	offset      time.Duration // injected clock's offset
	delay       time.Duration
	drops       int  // envelopes still to be dropped after recording them
	unreachable bool // the services' listener is closed
	addr        string
	srv         *http.Server
	admin       *http.Server
	adminAddr   string
	serving     sync.WaitGroup
}

// New opens the emulator's data directory: its records, and its key and
// certificate (made on first use, marked test; DataDir/dgi-cert.pem is
// written for clients to pin).
func New(cfg Config) (*Emulator, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("emulador DGI: falta el directorio de datos")
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.AdminListen == "" {
		cfg.AdminListen = DefaultAdminListen
	}
	if cfg.Processing == 0 {
		cfg.Processing = DefaultProcessing
	}
	if cfg.Processing < 0 {
		cfg.Processing = 0
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := openDB(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	e := &Emulator{cfg: cfg, db: db, log: log, delay: cfg.Delay}
	e.now = func() time.Time {
		e.mu.Lock()
		off := e.offset
		e.mu.Unlock()
		return now().Add(off)
	}
	err = db.View(func(tx *bolt.Tx) error {
		n, _ := strconv.ParseInt(string(tx.Bucket(bucketMeta).Get(metaClockOffset)), 10, 64)
		e.offset = time.Duration(n)
		return nil
	})
	if err == nil {
		err = e.identity()
	}
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return e, nil
}

// identity loads the emulator's key and certificate from the data
// directory, making them when missing or expired.
func (e *Emulator) identity() error {
	certPath, keyPath := filepath.Join(e.cfg.DataDir, CertFile), filepath.Join(e.cfg.DataDir, KeyFile)
	certPEM, err1 := os.ReadFile(certPath)
	keyPEM, err2 := os.ReadFile(keyPath)
	if err1 == nil && err2 == nil {
		creds, err := signer.LoadPEM(keyPEM, certPEM)
		if err != nil {
			return fmt.Errorf("emulador DGI: %s y %s no se pueden leer: %w", certPath, keyPath, err)
		}
		if e.now().Before(creds.Certificate.NotAfter.Add(-24 * time.Hour)) {
			return e.useIdentity(creds)
		}
		e.log.Info("the emulator's certificate expires: making a new one", "notAfter", creds.Certificate.NotAfter)
	}
	creds, err := signer.GenerateTestCertificate(cfe.RUCDGI, "DGI EMULADOR", e.now().Add(-time.Hour))
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(creds.Key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("emulador DGI: no se pudo guardar la clave: %w", err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: creds.Certificate.Raw}), 0o644); err != nil {
		return fmt.Errorf("emulador DGI: no se pudo guardar el certificado: %w", err)
	}
	return e.useIdentity(creds)
}

func (e *Emulator) useIdentity(creds *signer.Credentials) error {
	s, err := signer.New(signer.Config{Credentials: creds, Now: e.now})
	if err != nil {
		return err
	}
	e.creds, e.signer = creds, s
	return nil
}

// Certificate returns the certificate the emulator signs its answers with
// (DataDir/dgi-cert.pem).
func (e *Emulator) Certificate() *x509.Certificate { return e.creds.Certificate }

// Open starts listening on both addresses and serves in the background. A
// busy address fails here.
func (e *Emulator) Open() error {
	al, err := net.Listen("tcp", e.cfg.AdminListen)
	if err != nil {
		return fmt.Errorf("emulador DGI: no se puede escuchar en %s (administración): %w", e.cfg.AdminListen, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.adminAddr = al.Addr().String()
	e.admin = &http.Server{Handler: e.AdminHandler(), ReadHeaderTimeout: 10 * time.Second}
	e.serve(e.admin, al, false)
	if err := e.listenLocked(e.cfg.Listen); err != nil {
		return errors.Join(err, e.admin.Close())
	}
	return nil
}

// listenLocked opens the services' listener on addr. e.mu is held.
func (e *Emulator) listenLocked(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("emulador DGI: no se puede escuchar en %s: %w", addr, err)
	}
	e.addr = l.Addr().String()
	e.srv = &http.Server{Handler: e.ServiceHandler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: e.cfg.TLS}
	e.serve(e.srv, l, e.cfg.TLS != nil)
	return nil
}

func (e *Emulator) serve(s *http.Server, l net.Listener, useTLS bool) {
	e.serving.Add(1)
	go func() {
		defer e.serving.Done()
		var err error
		if useTLS {
			err = s.ServeTLS(l, "", "")
		} else {
			err = s.Serve(l)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("the DGI emulator stopped serving", "err", err)
		}
	}()
}

// URL returns the base URL of the services (append dgi.PathReception or
// dgi.PathQueries).
func (e *Emulator) URL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	scheme := "http"
	if e.cfg.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + e.addr
}

// AdminURL returns the base URL of the admin endpoint.
func (e *Emulator) AdminURL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return "http://" + e.adminAddr
}

// Close stops serving and closes the data file.
func (e *Emulator) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.mu.Lock()
	var errs []error
	for _, s := range []*http.Server{e.srv, e.admin} {
		if s != nil {
			if err := s.Shutdown(ctx); err != nil {
				errs = append(errs, s.Close())
			}
		}
	}
	e.srv, e.admin = nil, nil
	e.mu.Unlock()
	e.serving.Wait()
	errs = append(errs, e.db.Close())
	return errors.Join(errs...)
}

// Knobs.

// SetDelay delays every answer of the services by d (0: none). The request
// is processed (an envelope recorded) before the wait.
func (e *Emulator) SetDelay(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.delay = d
}

// DropAfterReceipt makes the next n envelopes be recorded as received and
// then the connection cut without an answer: the client cannot know what
// happened (its outcome is unknown).
func (e *Emulator) DropAfterReceipt(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drops = n
}

// SetUnreachable closes the services' listener (and every connection to
// it), or opens it again on the same address.
func (e *Emulator) SetUnreachable(off bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if off == e.unreachable || e.srv == nil && !e.unreachable {
		e.unreachable = off
		return nil
	}
	if off {
		err := e.srv.Close()
		e.unreachable = true
		return err
	}
	if err := e.listenLocked(e.addr); err != nil {
		return err
	}
	e.unreachable = false
	return nil
}

// Advance moves the emulator's clock d forward (kept in the data file).
func (e *Emulator) Advance(d time.Duration) error {
	e.mu.Lock()
	e.offset += d
	off := e.offset
	e.mu.Unlock()
	return e.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaClockOffset, []byte(strconv.FormatInt(int64(off), 10)))
	})
}

// Now returns the emulator's clock.
func (e *Emulator) Now() time.Time { return e.now() }

// Reject makes every envelope carrying the CFE r names give it r.Codigo:
// BE with that E code for a CFE, CE with that C code for a contingency
// receipt. Errors: EINVALID for a code DGI does not use for that type.
func (e *Emulator) Reject(r Rejection) error {
	if msg := r.check(); msg != "" {
		return &cfe.Error{Code: cfe.EINVALID, Op: "emulator.Reject", Message: msg}
	}
	return e.db.Update(func(tx *bolt.Tx) error { return putJSON(tx.Bucket(bucketRejections), r.key(), r) })
}

// rejection returns the knob for a CFE, nil when none.
func rejection(tx *bolt.Tx, ruc string, tipo cfe.Type, serie string, nro int64) *Rejection {
	b := tx.Bucket(bucketRejections)
	for _, who := range []string{ruc, "*"} {
		var r Rejection
		if ok, err := getJSON(b, cfeKey(who, tipo, serie, nro), &r); ok && err == nil {
			return &r
		}
	}
	return nil
}

// CFECount is what the emulator knows of one CFE.
type CFECount struct {
	RUCEmisor  string   `json:"rucEmisor"`
	TipoCFE    cfe.Type `json:"tipoCFE"`
	Serie      string   `json:"serie"`
	Nro        int64    `json:"nro"`
	Sobres     int      `json:"sobres"`     // envelopes received carrying it (AS or BS)
	Estado     string   `json:"estado"`     // its verdict in the first envelope received, "" when none
	IDReceptor int64    `json:"idReceptor"` // that envelope
}

// Counts lists every CFE any envelope carried, with how many envelopes did.
func (e *Emulator) Counts() ([]CFECount, error) {
	var out []CFECount
	err := e.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCFEs).ForEach(func(_, v []byte) error {
			var r cfeRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			out = append(out, CFECount{RUCEmisor: r.RUCEmisor, TipoCFE: r.Tipo, Serie: r.Serie, Nro: r.Nro,
				Sobres: r.Envelopes, Estado: r.Estado, IDReceptor: r.IDReceptor})
			return nil
		})
	})
	return out, err
}

// EnvelopeCount returns how many envelopes the emulator received (any
// state).
func (e *Emulator) EnvelopeCount() (int, error) {
	n := 0
	err := e.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketEnvelopes).Stats().KeyN
		return nil
	})
	return n, err
}
