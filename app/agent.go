package app

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
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/machinezone"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// Agent is the composition of the agent's parts for one profile: its
// configuration, store, signer and issuer, and the hosted service's client.
// Commands open what they need (Open) and close it (Close); the running
// agent's session adds the parts that work while it serves.
type Agent struct {
	Log     *slog.Logger
	DataDir string
	Config  *profiles.Config
	Name    string           // the profile in use
	Profile profiles.Profile // with every path resolved against DataDir
	DB      *store.DB
	Signer  *signer.Signer // nil when the certificate could not be loaded
	CertErr error          // why Signer is nil
	Issuer  *issuer.Issuer
	// Hosted is the hosted service's client, nil when the profile names
	// none; Deliverer exists only while the agent serves (NewDeliverer).
	Hosted    *hosted.Client
	Deliverer *hosted.Deliverer
	// DGIClient and DGISender exist only while the agent serves in direct
	// mode (dgi.go).
	DGIClient *dgi.Client
	DGISender *dgisend.Sender
	DGIError  string // why direct mode could not start (Spanish), "" when it runs
	// ReportDays is where the daily reports stand (dailyreport.go): the
	// store's in direct mode, the hosted service's in provider mode; in
	// direct mode Reporter sends them while the agent serves (nil when it
	// cannot: ReportError says why, in Spanish).
	ReportDays  DailyReports
	Reporter    *dgisend.Reporter
	ReportError string
	// ReportStates and AnnulledDeliverer are provider mode's side of the
	// daily report while the agent serves (reportprov.go): the states the
	// hosted service reports, and the delivery of annulled numbers.
	ReportStates      *hosted.ReportStates
	AnnulledDeliverer *hosted.AnnulledDeliverer
	// DGIReader reads DGI's verdicts back from the hosted service in
	// provider mode; it exists only while the agent serves (dgi.go).
	DGIReader *hosted.DGIReader
	// Backups and AdminToken exist only while the agent serves (backup.go).
	Backups    *BackupManager
	AdminToken string
	// PrinterWatch keeps what the agent learned of its printers; set with
	// the facade's printing (newPrinting), run while the agent serves
	// (printerwatch.go). Nil when printing could not be set up.
	PrinterWatch *PrinterWatch
}

// Open loads the configuration and opens the store, the signer and the
// issuer of the active profile. On the embedded sandbox default it also makes
// the test certificate and the test CAE ranges, so the agent signs out of the
// box without any outside service.
func Open(ctx context.Context, opts Options, log *slog.Logger) (*Agent, error) {
	dataDir, cfg, created, err := LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	return OpenLoaded(ctx, dataDir, cfg, created, log)
}

// OpenLoaded is Open on a configuration already loaded by LoadConfig
// (created: LoadConfig wrote the default file).
func OpenLoaded(ctx context.Context, dataDir string, cfg *profiles.Config, created bool, log *slog.Logger) (*Agent, error) {
	var err error
	if created {
		log.Info("wrote the default configuration", "file", filepath.Join(dataDir, profiles.FileName))
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return nil, cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
	}
	a := &Agent{Log: log, DataDir: dataDir, Config: cfg, Name: cfg.Active, Profile: p.Resolve(dataDir)}
	if err := a.ensureSandboxCertificate(); err != nil {
		return nil, err
	}
	dbPath := cfg.StorePath(dataDir, a.Name)
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
		return nil, err
	}
	if a.Hosted, err = NewHostedClient(a.Profile.Hosted, log); err != nil {
		return nil, err
	}
	journal := JournalPath(dataDir, a.Profile.Environment, a.Name)
	_, statErr := os.Stat(filepath.Dir(journal))
	witness, werr := WitnessPath(dataDir, a.Profile, a.Name)
	if werr != nil {
		log.Warn("no numbering witness: a copy of the data directory put back is not detected", "err", werr)
	}
	a.DB, err = store.Open(dbPath, store.Options{
		NearlyUsedUpPercent: 100 - a.Profile.CAE.WarnRemainingPct,
		NearExpiryDays:      a.Profile.CAE.WarnDaysBeforeExpiry,
		Journal:             journal,
		// A journal missing from the folder where one was kept (the store
		// and the journal both deleted, or an old copy of the store put back
		// without its journal) makes the store wait for the hosted service to
		// say where numbering stands (settleNumbering), when there is one to
		// ask. A data directory that never had a journal (a first start, or
		// an upgrade) does not wait: it signs offline from the start, and
		// settleNumbering still raises its counters when the service answers
		// before the agent serves (docs/numbering.md).
		HoldWithoutJournal: statErr == nil && a.Hosted != nil && a.Hosted.Auth() != hosted.AuthNone,
		// Outside the data directory, per machine: an old copy of the data
		// directory put back (store and journal) is found behind it and
		// holds numbering until the hosted service or a technician settles
		// it; a data directory lost resumes above it (docs/numbering.md).
		Witness:    witness,
		WitnessKey: WitnessKey(a.Profile, a.Name),
	})
	if err != nil {
		return nil, withStopHint(err, dataDir, a.Name)
	}
	for _, d := range a.DB.ResumedAtOpen() {
		log.Warn("numbering resumed above the numbering journal", "detail", d)
	}
	logWitness(log, a.DB)
	if err := a.prepareRanges(ctx); err != nil {
		a.Close()
		return nil, err
	}
	a.Signer, a.CertErr = LoadSigner(a.Profile.Certificate)
	if a.CertErr != nil {
		log.Warn("signing certificate not usable: signing requests will be rejected", "err", a.CertErr)
	}
	a.Issuer = issuer.New(issuer.Config{
		Store:  a.DB,
		Signer: issuingSigner(a.Signer, a.CertErr),
		Emisor: a.Profile.Emisor,
		Tax:    taxConfig(a.Profile.Tax),
		Zone:   machinezone.Read,
	})
	newDailyReports(a) // direct mode: the days' reports, read from the store
	return a, nil
}

// JournalPath is where the numbering journal of a profile lives: in the data
// directory but outside the store's folder, so that losing or replacing the
// store file (or its folder) leaves it (docs/numbering.md). Its folder is the
// profile's own: a folder without the journal means this profile's journal
// was lost, not that another profile ran before (HoldWithoutJournal).
func JournalPath(dataDir string, env profiles.Environment, profile string) string {
	return filepath.Join(dataDir, "numbering", string(env), strings.ToLower(profile), "journal.json")
}

// Close releases what Open opened.
func (a *Agent) Close() {
	if a.DGIClient != nil {
		a.DGIClient.Close()
	}
	if a.DB != nil {
		if err := a.DB.Close(); err != nil {
			a.Log.Error("closing the store", "err", err)
		}
	}
}

// ensureSandboxCertificate generates the clearly marked test certificate of a
// sandbox profile whose certificate file does not exist yet. A production
// profile never gets one.
func (a *Agent) ensureSandboxCertificate() error {
	c := a.Profile.Certificate
	if a.Profile.Environment != profiles.Sandbox || c.Path == "" || c.KeyPath != "" {
		return nil
	}
	if _, err := os.Stat(c.Path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	creds, err := signer.GenerateTestCertificate(a.Profile.Company.RUC, a.Profile.Company.RazonSocial, time.Now())
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
	a.Log.Info("generated a sandbox test certificate (no fiscal value)", "file", c.Path,
		"expires", creds.Certificate.NotAfter.Format(time.DateOnly))
	return nil
}

// prepareRanges imports the profile's DGI CAE files that the store does not
// have yet and, for a sandbox profile with no ranges at all, adds generated
// test ranges for every electronic type; a sandbox profile with no
// contingency range gets generated test ranges for every contingency type
// (2xx, the paper forms keyed in afterwards), also when its store was made
// before they existed.
func (a *Agent) prepareRanges(ctx context.Context) error {
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	for _, f := range a.Profile.CAE.Files {
		if _, err := a.ImportCAE(ctx, f, today); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
			return fmt.Errorf("CAE %s: %w", f, err)
		}
	}
	if a.Profile.Environment != profiles.Sandbox {
		return nil
	}
	have, err := a.DB.Ranges(ctx)
	if err != nil {
		return err
	}
	if len(have) == 0 {
		for _, r := range signer.SandboxRanges(a.Profile.Company.RUC, today) {
			if err := a.DB.PutRange(ctx, r); err != nil {
				return err
			}
		}
		a.Log.Info("added sandbox test CAE ranges", "types", len(cfe.ElectronicTypes()))
	}
	for _, r := range have {
		if info, _ := r.Type.Info(); info.Contingency {
			return nil
		}
	}
	paper := signer.SandboxContingencyRanges(a.Profile.Company.RUC, today)
	for _, r := range paper {
		if err := a.DB.PutRange(ctx, r); err != nil {
			return err
		}
	}
	a.Log.Info("added sandbox test contingency CAE ranges", "types", len(paper))
	return nil
}

// ImportCAE checks a DGI CAE file (DGI's signature, the fields, the company's
// RUC) and stores its range.
func (a *Agent) ImportCAE(ctx context.Context, path string, today cfe.Date) (cfe.CAERange, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return cfe.CAERange{}, err
	}
	r, err := signer.ParseCAEFile(b, signer.CAEOptions{RUC: a.Profile.Company.RUC, Today: today})
	if err != nil {
		return cfe.CAERange{}, err
	}
	return r, a.DB.PutRange(ctx, r)
}

// LoadSigner reads the profile's certificate: a PKCS#12 file (.p12, .pfx), or
// PEM certificate and key.
func LoadSigner(c profiles.Certificate) (*signer.Signer, error) {
	if c.Path == "" {
		return nil, cfe.Errorf(cfe.EUNAVAILABLE, "no hay certificado de firma configurado")
	}
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, cfe.Errorf(cfe.EUNAVAILABLE, "no se puede leer el certificado %s: %v", c.Path, UnwrapPathError(err))
	}
	var creds *signer.Credentials
	if c.KeyPath != "" || strings.HasSuffix(strings.ToLower(c.Path), ".pem") {
		keyPath := c.KeyPath
		if keyPath == "" {
			keyPath = c.Path // key and certificate in one PEM file
		}
		key, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, cfe.Errorf(cfe.EUNAVAILABLE, "no se puede leer la clave %s: %v", keyPath, UnwrapPathError(err))
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

// UnwrapPathError returns the system's error inside a *fs.PathError (the
// path is already in the message that shows it), else err.
func UnwrapPathError(err error) error {
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
