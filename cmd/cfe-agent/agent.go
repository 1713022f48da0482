package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/machinezone"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	dataDir string // --data-dir
	profile string // --profile: the profile to use instead of the active one
	// listen is --listen of the commands that run the agent (serveOptions),
	// kept here so that every load of the configuration in the running agent
	// (reopening, the tray's diagnostics) applies it.
	listen string
}

// overrides are the flags that override the configuration, for
// profiles.LoadWith: they win over the environment and the file and obey
// the file's rules.
func (o globalOptions) overrides() profiles.Overrides {
	return profiles.Overrides{Profile: o.profile, Listen: o.listen}
}

// agent is the composition of the agent's parts for one profile: its
// configuration, store, signer and issuer. Commands open what they need and
// close it in reverse order.
type agent struct {
	log     *slog.Logger
	dataDir string
	cfg     *profiles.Config
	name    string           // the profile in use
	profile profiles.Profile // with every path resolved against dataDir
	db      *store.DB
	signer  *signer.Signer // nil when the certificate could not be loaded
	certErr error          // why signer is nil
	issuer  *issuer.Issuer
	// hosted is the hosted service's client, nil when the profile names none;
	// deliverer exists only while the agent serves (newDeliverer).
	hosted    *hosted.Client
	deliverer *hosted.Deliverer
	// backups and adminToken exist only while the agent serves (backup.go).
	backups    *backupManager
	adminToken string
}

// loadConfig reads (on first run: writes, then reads) the configuration and
// picks the profile.
func loadConfig(opts globalOptions) (dataDir string, cfg *profiles.Config, created bool, err error) {
	dataDir, err = profiles.DataDir(opts.dataDir)
	if err != nil {
		return "", nil, false, err
	}
	// The profile flag wins over the file's active profile; the environment
	// overrides then apply to it, and the listen flag over them.
	cfg, created, err = profiles.EnsureDefaultWith(dataDir, opts.overrides())
	return dataDir, cfg, created, err
}

// openAgent loads the configuration and opens the store, the signer and the
// issuer of the active profile. On the embedded sandbox default it also makes
// the test certificate and the test CAE ranges, so the agent signs out of the
// box without any outside service.
func openAgent(ctx context.Context, opts globalOptions, log *slog.Logger) (*agent, error) {
	dataDir, cfg, created, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	return openLoaded(ctx, dataDir, cfg, created, log)
}

// openLoaded is openAgent on a configuration already loaded by loadConfig
// (created: loadConfig wrote the default file).
func openLoaded(ctx context.Context, dataDir string, cfg *profiles.Config, created bool, log *slog.Logger) (*agent, error) {
	var err error
	if created {
		log.Info("wrote the default configuration", "file", filepath.Join(dataDir, profiles.FileName))
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return nil, cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
	}
	a := &agent{log: log, dataDir: dataDir, cfg: cfg, name: cfg.Active, profile: p.Resolve(dataDir)}
	if err := a.ensureSandboxCertificate(); err != nil {
		return nil, err
	}
	dbPath := cfg.StorePath(dataDir, a.name)
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
		return nil, err
	}
	if a.hosted, err = newHostedClient(a.profile.Hosted, log); err != nil {
		return nil, err
	}
	journal := journalPath(dataDir, a.profile.Environment, a.name)
	_, statErr := os.Stat(filepath.Dir(journal))
	witness, werr := witnessPath(dataDir, a.profile, a.name)
	if werr != nil {
		log.Warn("no numbering witness: a copy of the data directory put back is not detected", "err", werr)
	}
	a.db, err = store.Open(dbPath, store.Options{
		NearlyUsedUpPercent: 100 - a.profile.CAE.WarnRemainingPct,
		NearExpiryDays:      a.profile.CAE.WarnDaysBeforeExpiry,
		Journal:             journal,
		// A journal missing from the folder where one was kept (the store
		// and the journal both deleted, or an old copy of the store put back
		// without its journal) makes the store wait for the hosted service to
		// say where numbering stands (settleNumbering), when there is one to
		// ask. A data directory that never had a journal (a first start, or
		// an upgrade) does not wait: it signs offline from the start, and
		// settleNumbering still raises its counters when the service answers
		// before the agent serves (docs/numbering.md).
		HoldWithoutJournal: statErr == nil && a.hosted != nil && a.hosted.Auth() != hosted.AuthNone,
		// Outside the data directory, per machine: an old copy of the data
		// directory put back (store and journal) is found behind it and
		// holds numbering until the hosted service or a technician settles
		// it; a data directory lost resumes above it (docs/numbering.md).
		Witness:    witness,
		WitnessKey: witnessKey(a.profile, a.name),
	})
	if err != nil {
		return nil, err
	}
	for _, d := range a.db.ResumedAtOpen() {
		log.Warn("numbering resumed above the numbering journal", "detail", d)
	}
	logWitness(log, a.db)
	if err := a.prepareRanges(ctx); err != nil {
		a.Close()
		return nil, err
	}
	a.signer, a.certErr = loadSigner(a.profile.Certificate)
	if a.certErr != nil {
		log.Warn("signing certificate not usable: signing requests will be rejected", "err", a.certErr)
	}
	a.issuer = issuer.New(issuer.Config{
		Store:  a.db,
		Signer: issuingSigner(a.signer, a.certErr),
		Emisor: a.profile.Emisor,
		Tax:    taxConfig(a.profile.Tax),
		Zone:   machinezone.Read,
	})
	return a, nil
}

// journalPath is where the numbering journal of a profile lives: in the data
// directory but outside the store's folder, so that losing or replacing the
// store file (or its folder) leaves it (docs/numbering.md). Its folder is the
// profile's own: a folder without the journal means this profile's journal
// was lost, not that another profile ran before (HoldWithoutJournal).
func journalPath(dataDir string, env profiles.Environment, profile string) string {
	return filepath.Join(dataDir, "numbering", string(env), strings.ToLower(profile), "journal.json")
}

// Close releases what openAgent opened.
func (a *agent) Close() {
	if a.db != nil {
		if err := a.db.Close(); err != nil {
			a.log.Error("closing the store", "err", err)
		}
	}
}

// ensureSandboxCertificate generates the clearly marked test certificate of a
// sandbox profile whose certificate file does not exist yet. A production
// profile never gets one.
func (a *agent) ensureSandboxCertificate() error {
	c := a.profile.Certificate
	if a.profile.Environment != profiles.Sandbox || c.Path == "" || c.KeyPath != "" {
		return nil
	}
	if _, err := os.Stat(c.Path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	creds, err := signer.GenerateTestCertificate(a.profile.Company.RUC, a.profile.Company.RazonSocial, time.Now())
	if err != nil {
		return err
	}
	p12, err := creds.EncodePKCS12(c.Password.Value())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(c.Path, p12, 0o600); err != nil {
		return err
	}
	a.log.Info("generated a sandbox test certificate (no fiscal value)", "file", c.Path,
		"expires", creds.Certificate.NotAfter.Format(time.DateOnly))
	return nil
}

// prepareRanges imports the profile's DGI CAE files that the store does not
// have yet and, for a sandbox profile with no ranges at all, adds generated
// test ranges for every electronic type.
func (a *agent) prepareRanges(ctx context.Context) error {
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	for _, f := range a.profile.CAE.Files {
		if _, err := a.importCAE(ctx, f, today); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
			return fmt.Errorf("CAE %s: %w", f, err)
		}
	}
	if a.profile.Environment != profiles.Sandbox {
		return nil
	}
	have, err := a.db.Ranges(ctx)
	if err != nil || len(have) > 0 {
		return err
	}
	for _, r := range signer.SandboxRanges(a.profile.Company.RUC, today) {
		if err := a.db.PutRange(ctx, r); err != nil {
			return err
		}
	}
	a.log.Info("added sandbox test CAE ranges", "types", len(cfe.ElectronicTypes()))
	return nil
}

// importCAE checks a DGI CAE file (DGI's signature, the fields, the company's
// RUC) and stores its range.
func (a *agent) importCAE(ctx context.Context, path string, today cfe.Date) (cfe.CAERange, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return cfe.CAERange{}, err
	}
	r, err := signer.ParseCAEFile(b, signer.CAEOptions{RUC: a.profile.Company.RUC, Today: today})
	if err != nil {
		return cfe.CAERange{}, err
	}
	return r, a.db.PutRange(ctx, r)
}

// loadSigner reads the profile's certificate: a PKCS#12 file (.p12, .pfx), or
// PEM certificate and key.
func loadSigner(c profiles.Certificate) (*signer.Signer, error) {
	if c.Path == "" {
		return nil, cfe.Errorf(cfe.EUNAVAILABLE, "no hay certificado de firma configurado")
	}
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, cfe.Errorf(cfe.EUNAVAILABLE, "no se puede leer el certificado %s: %v", c.Path, unwrapPathError(err))
	}
	var creds *signer.Credentials
	if c.KeyPath != "" || strings.HasSuffix(strings.ToLower(c.Path), ".pem") {
		keyPath := c.KeyPath
		if keyPath == "" {
			keyPath = c.Path // key and certificate in one PEM file
		}
		key, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, cfe.Errorf(cfe.EUNAVAILABLE, "no se puede leer la clave %s: %v", keyPath, unwrapPathError(err))
		}
		creds, err = signer.LoadPEM(key, b)
		if err != nil {
			return nil, err
		}
	} else if creds, err = signer.LoadPKCS12(b, c.Password.Value()); err != nil {
		return nil, err
	}
	return signer.New(signer.Config{Credentials: creds, Algorithm: signer.Algorithm(c.Algorithm)})
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// issuingSigner is the issuer's signer: the certificate's, which satisfies
// issuer.ReadySigner as signer.Canonical (its Ready refuses a certificate
// outside its validity before a number is reserved), or, when none could be
// loaded, one that refuses every request with the reason.
func issuingSigner(s *signer.Signer, certErr error) issuer.Signer {
	if s != nil {
		return signer.Canonical{Signer: s}
	}
	return noCertificate{certErr}
}

// noCertificate is the signer of an agent whose certificate could not be
// loaded: it still serves (status page, printing, the outbox) and answers
// every signing request with RespCertificado and the reason, before a
// number is reserved (Ready).
type noCertificate struct{ err error }

func (n noCertificate) Sign([]byte) ([]byte, string, error) { return nil, "", n.Ready() }

func (n noCertificate) Ready() error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Respuesta: cfe.RespCertificado,
		Message: cfe.ErrorMessage(n.err), Err: n.err}
}

func taxConfig(t profiles.Tax) cfe.TaxConfig {
	return cfe.TaxConfig{IVATasaBasica: t.IVATasaBasica, IVATasaMin: t.IVATasaMin, TopeUI: t.TopeUI, ValorUI: t.ValorUI}
}
