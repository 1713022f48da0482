package issuing

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// Config configures the issuing room.
type Config struct {
	DB          *data.DB
	DataDir     string // where each company's store lives, beside the data file
	Environment string // auth.EnvSandbox or auth.EnvProduccion: watermarks and file names
	Now         func() time.Time
	Log         *slog.Logger
}

// Service is the issuing room. Its parts share the companies' issuers.
type Service struct {
	Receipts *Receipts
	Issued   *Issued
	Printer  *Printer
	Points   *Points
	issuers  *issuers
}

// New builds the room; companies' issuers open on first use.
func New(cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	is := &issuers{db: cfg.DB, dir: cfg.DataDir, env: cfg.Environment, now: cfg.Now, m: map[int64]*companyIssuer{}}
	pr := &Printer{db: cfg.DB, now: cfg.Now, log: cfg.Log, production: cfg.Environment == auth.EnvProduccion}
	return &Service{
		Receipts: &Receipts{db: cfg.DB, now: cfg.Now, log: cfg.Log, issuers: is},
		Issued:   &Issued{db: cfg.DB, now: cfg.Now, log: cfg.Log},
		Printer:  pr,
		Points:   &Points{db: cfg.DB, log: cfg.Log},
		issuers:  is,
	}
}

// Prepare creates company's certificate, store and CAE ranges now rather than
// at its first emission (the demo company's, on first run).
func (s *Service) Prepare(ctx context.Context, company int64) error {
	_, err := s.issuers.get(ctx, company)
	return err
}

// Credentials returns company's test certificate and key (made on first
// use): the provider signs the company's messages to DGI with them.
func (s *Service) Credentials(ctx context.Context, company int64) (*signer.Credentials, error) {
	ci, err := s.issuers.get(ctx, company)
	if err != nil {
		return nil, err
	}
	return ci.creds, nil
}

// Close closes the companies' stores.
func (s *Service) Close() error { return s.issuers.close() }

// The sandbox signs as each company with a generated test certificate and
// numbers from generated CAE ranges kept in a store of its own. Signing,
// numbering and validation are the issuer's, signer's and store's.

// bucketCredentials is this room's: company id → storedCredentials.
var bucketCredentials = []byte("credentials")

// storedCredentials are a company's test certificate and its key. The key is
// the emulator's own, generated here, and signs nothing of fiscal value.
type storedCredentials struct {
	KeyPEM  []byte `json:"keyPEM"`
	CertPEM []byte `json:"certPEM"`
}

// companyIssuer signs for one company.
type companyIssuer struct {
	creds  *signer.Credentials
	iss    *issuer.Issuer
	store  *store.DB
	cert   *x509.Certificate
	emisor cfe.Emisor
}

// issuers holds the companyIssuer of each company, opened on first use.
type issuers struct {
	db  *data.DB
	dir string
	env string
	now func() time.Time

	mu sync.Mutex
	m  map[int64]*companyIssuer
}

func (is *issuers) close() error {
	is.mu.Lock()
	defer is.mu.Unlock()
	var first error
	for id, ci := range is.m {
		if err := ci.store.Close(); err != nil && first == nil {
			first = err
		}
		delete(is.m, id)
	}
	return first
}

// get returns company id's issuer, creating its certificate, its store and
// its CAE ranges the first time.
func (is *issuers) get(ctx context.Context, id int64) (*companyIssuer, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if ci := is.m[id]; ci != nil {
		return ci, nil
	}
	var company *data.Company
	if err := is.db.View(func(tx *bolt.Tx) error {
		var err error
		company, err = data.GetCompany(tx, id)
		return err
	}); err != nil {
		return nil, err
	}
	creds, err := is.credentials(company)
	if err != nil {
		return nil, err
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: is.now})
	if err != nil {
		return nil, err
	}
	db, err := store.Open(filepath.Join(is.dir, "cfe-sandbox-"+is.env+"-empresa-"+strconv.FormatInt(id, 10)+".db"),
		store.Options{LockTimeout: data.OpenTimeout, Now: is.now})
	if err != nil {
		return nil, err
	}
	if err := is.ensureRanges(ctx, db, company); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	emisor := company.Emisor()
	ci := &companyIssuer{creds: creds, store: db, cert: creds.Certificate, emisor: emisor, iss: issuer.New(issuer.Config{
		Store:  db,
		Signer: signer.Canonical{Signer: sg},
		Emisor: func() cfe.Emisor { return emisor },
		Tax:    cfe.DefaultTaxConfig(),
		Now:    is.now,
		Zone:   hostedZone,
	})}
	is.m[id] = ci
	return ci, nil
}

// hostedZone is the time-zone check of the issuer: a hosted service signs in
// Montevideo's time whatever its machine's zone (the check is the local
// module's rule, interface §7 rule 5).
func hostedZone(time.Time) issuer.ZoneStatus {
	return issuer.ZoneStatus{Name: "America/Montevideo", Source: "cfe-sandbox", Offset: -3 * 60 * 60}
}

// credentials loads company's test certificate, generating and storing it
// the first time.
func (is *issuers) credentials(company *data.Company) (*signer.Credentials, error) {
	var stored storedCredentials
	err := is.db.View(func(tx *bolt.Tx) error {
		return data.GetJSON(tx, bucketCredentials, data.IDKey(company.ID), "el certificado", &stored)
	})
	if err == nil {
		return signer.LoadPEM(stored.KeyPEM, stored.CertPEM)
	}
	if cfe.ErrorCode(err) != cfe.ENOTFOUND {
		return nil, err
	}
	creds, err := signer.GenerateTestCertificate(company.RUC, company.RazonSocial, is.now())
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(creds.Key)
	if err != nil {
		return nil, err
	}
	stored = storedCredentials{
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: creds.Certificate.Raw}),
	}
	err = is.db.Update(func(tx *bolt.Tx) error { return data.PutJSON(tx, bucketCredentials, data.IDKey(company.ID), stored) })
	return creds, err
}

// ensureRanges gives a new store the company's generated CAE ranges: one per
// electronic type, serie hostedSerie, numbers 1 to 1 000 000, valid two years.
func (is *issuers) ensureRanges(ctx context.Context, db *store.DB, company *data.Company) error {
	have, err := db.Ranges(ctx)
	if err != nil || len(have) > 0 {
		return err
	}
	for _, r := range signer.SandboxRanges(company.RUC, cfe.DateOf(is.now().In(cfe.Montevideo))) {
		r.Serie, r.ID = hostedSerie, cfe.RangeID(r.Type, hostedSerie, r.DNro)
		if err := db.PutRange(ctx, r); err != nil {
			return fmt.Errorf("sandbox: CAE range %s: %w", r.ID, err)
		}
	}
	return nil
}

// visibleCFE reads CFE id for the caller: ENOTFOUND when it does not exist,
// EFORBIDDEN when it belongs to a company the caller cannot act for.
func visibleCFE(db *data.DB, p *auth.Principal, id int64) (*data.CFERecord, error) {
	var rec *data.CFERecord
	err := db.View(func(tx *bolt.Tx) error {
		var err error
		rec, err = data.GetCFE(tx, id)
		return err
	})
	if err == nil && !p.CanSee(rec.Company) {
		return nil, ErrOtherCFE
	}
	return rec, err
}

// ErrOtherCFE answers a CFE of a company the caller cannot act for.
var ErrOtherCFE = &cfe.Error{Code: cfe.EFORBIDDEN, Message: "no tiene acceso a este CFE"}

// companyOf reads a company.
func companyOf(db *data.DB, id int64) (*data.Company, error) {
	var c *data.Company
	err := db.View(func(tx *bolt.Tx) error {
		var err error
		c, err = data.GetCompany(tx, id)
		return err
	})
	return c, err
}
