package sandbox

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// The sandbox signs as each company with a generated test certificate and
// numbers from generated CAE ranges kept in a store of its own. Signing,
// numbering and validation are the issuer's, signer's and store's.

var bucketCredentials = []byte("credentials") // company id → storedCredentials

// storedCredentials are a company's test certificate and its key. The key is
// the emulator's own, generated here, and signs nothing of fiscal value.
type storedCredentials struct {
	KeyPEM  []byte `json:"keyPEM"`
	CertPEM []byte `json:"certPEM"`
}

// companyIssuer signs for one company.
type companyIssuer struct {
	iss    *issuer.Issuer
	store  *store.DB
	cert   *x509.Certificate
	emisor cfe.Emisor
}

// issuers holds the companyIssuer of each company, opened on first use.
type issuers struct {
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

// issuerFor returns company id's issuer, creating its certificate, its store
// and its CAE ranges the first time.
func (s *Server) issuerFor(ctx context.Context, id int64) (*companyIssuer, error) {
	s.issuers.mu.Lock()
	defer s.issuers.mu.Unlock()
	if ci := s.issuers.m[id]; ci != nil {
		return ci, nil
	}
	var company *Company
	if err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		company, err = getCompany(tx, id)
		return err
	}); err != nil {
		return nil, err
	}
	creds, err := s.credentials(company)
	if err != nil {
		return nil, err
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: s.now})
	if err != nil {
		return nil, err
	}
	db, err := store.Open(filepath.Join(s.cfg.DataDir, "cfe-sandbox-"+s.cfg.Environment+"-empresa-"+strconv.FormatInt(id, 10)+".db"),
		store.Options{LockTimeout: dbOpenTimeout, Now: s.now})
	if err != nil {
		return nil, err
	}
	if err := s.ensureRanges(ctx, db, company); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	emisor := company.emisor()
	ci := &companyIssuer{store: db, cert: creds.Certificate, emisor: emisor, iss: issuer.New(issuer.Config{
		Store:  db,
		Signer: signer.Canonical{Signer: sg},
		Emisor: func() cfe.Emisor { return emisor },
		Tax:    cfe.DefaultTaxConfig(),
		Now:    s.now,
		Zone:   hostedZone,
	})}
	if s.issuers.m == nil {
		s.issuers.m = map[int64]*companyIssuer{}
	}
	s.issuers.m[id] = ci
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
func (s *Server) credentials(company *Company) (*signer.Credentials, error) {
	var stored storedCredentials
	err := s.db.view(func(tx *bolt.Tx) error {
		return getJSON(tx, bucketCredentials, idKey(company.ID), "el certificado", &stored)
	})
	if err == nil {
		return signer.LoadPEM(stored.KeyPEM, stored.CertPEM)
	}
	if cfe.ErrorCode(err) != cfe.ENOTFOUND {
		return nil, err
	}
	creds, err := signer.GenerateTestCertificate(company.RUC, company.RazonSocial, s.now())
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
	err = s.db.update(func(tx *bolt.Tx) error { return putJSON(tx, bucketCredentials, idKey(company.ID), stored) })
	return creds, err
}

// ensureRanges gives a new store the company's generated CAE ranges: one per
// electronic type, serie hostedSerie, numbers 1 to 1 000 000, valid two years.
func (s *Server) ensureRanges(ctx context.Context, db *store.DB, company *Company) error {
	have, err := db.Ranges(ctx)
	if err != nil || len(have) > 0 {
		return err
	}
	for _, r := range signer.SandboxRanges(company.RUC, cfe.DateOf(s.now().In(cfe.Montevideo))) {
		r.Serie, r.ID = hostedSerie, cfe.RangeID(r.Type, hostedSerie, r.DNro)
		if err := db.PutRange(ctx, r); err != nil {
			return fmt.Errorf("sandbox: CAE range %s: %w", r.ID, err)
		}
	}
	return nil
}

// emisor is the company as the CFEs it signs name it.
func (c *Company) emisor() cfe.Emisor {
	return cfe.Emisor{RUCEmisor: c.RUC, RznSoc: c.RazonSocial, CdgDGISucur: defaultSucursal,
		DomFiscal: c.DomFiscal, Ciudad: c.Ciudad, Departamento: c.Departamento}
}
