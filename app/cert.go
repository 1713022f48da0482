package app

import (
	"cmp"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// The signing certificate's use cases: "cfe-agent cert import" and "cert
// show", and the active profile's certificate for "verify --profile-cert".

// ActiveProfile loads the configuration and returns the active profile's
// name and the profile, with its paths resolved against the data directory.
func ActiveProfile(opts Options) (dataDir string, cfg *profiles.Config, p profiles.Profile, err error) {
	dataDir, cfg, _, err = LoadConfig(opts)
	if err != nil {
		return "", nil, p, err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return "", nil, p, cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
	}
	return dataDir, cfg, p.Resolve(dataDir), nil
}

// ProfileCertificate reads the certificate of the active profile.
func ProfileCertificate(opts Options) (*x509.Certificate, error) {
	_, _, p, err := ActiveProfile(opts)
	if err != nil {
		return nil, err
	}
	s, err := LoadSigner(p.Certificate)
	if err != nil {
		return nil, err
	}
	return s.Certificate(), nil
}

// CertImport is what ImportCertificate did.
type CertImport struct {
	Profile string
	File    string // where the certificate was copied
	View    CertView
}

// Write writes the technician's report of the import.
func (c *CertImport) Write(w io.Writer) {
	fmt.Fprintf(w, "certificado importado en %s para el perfil %q\n", c.File, c.Profile)
	c.View.Write(w)
}

// ImportCertificate checks a PKCS#12 file (its password, validity and
// company's RUC) and makes it the active profile's signing certificate: the
// file is copied into the data directory and the profile saved. Nothing
// changes when any check fails.
func ImportCertificate(opts Options, file, password string) (*CertImport, error) {
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return nil, cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	creds, err := signer.LoadPKCS12(b, password)
	if err != nil {
		return nil, err
	}
	info := signer.CertInfo(creds.Certificate, time.Now())
	if info.Expired {
		return nil, cfe.Errorf(cfe.EINVALID, "el certificado venció el %s", creds.Certificate.NotAfter.Format(time.DateOnly))
	}
	if info.RUC != "" && info.RUC != p.Company.RUC {
		return nil, cfe.Errorf(cfe.EINVALID, "el certificado es del RUC %s y el perfil %q es del RUC %s", info.RUC, cfg.Active, p.Company.RUC)
	}
	dest := filepath.Join(dataDir, "certs", cfg.Active+".p12")
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(dest, b, 0o600); err != nil {
		return nil, err
	}
	p.Certificate.Path = filepath.Join("certs", cfg.Active+".p12")
	p.Certificate.KeyPath = ""
	p.Certificate.Password = profiles.Secret(password)
	cfg.Profiles[cfg.Active] = p
	if err := profiles.Save(dataDir, cfg); err != nil {
		return nil, err
	}
	return &CertImport{Profile: cfg.Active, File: dest, View: certViewOf(creds.Certificate, dest)}, nil
}

// CertView is what "cert show" shows of a certificate, read from its file
// or from the running agent's state report.
type CertView struct {
	Path, Subject, Issuer, RUC, Serial string
	NotBefore, NotAfter                time.Time
	DaysLeft                           int
	Test                               bool
}

func certViewOf(c *x509.Certificate, path string) CertView {
	i := signer.CertInfo(c, time.Now())
	return CertView{Path: path, Subject: i.SubjectDN, Issuer: i.Issuer, RUC: i.RUC, Serial: i.SerialNumber,
		NotBefore: i.NotBefore, NotAfter: i.NotAfter, DaysLeft: i.DaysToExpiry, Test: i.Test}
}

// Write writes the certificate as the technician reads it.
func (v CertView) Write(w io.Writer) {
	fmt.Fprintf(w, "archivo:   %s\nsujeto:    %s\nemisor:    %s\nRUC:       %s\nserie:     %s\n", v.Path, v.Subject, v.Issuer, v.RUC, v.Serial)
	fmt.Fprintf(w, "vigencia:  %s a %s (%d días restantes)\n", v.NotBefore.UTC().Format(time.DateOnly),
		v.NotAfter.UTC().Format(time.DateOnly), v.DaysLeft)
	if v.Test {
		fmt.Fprintln(w, "ATENCIÓN:  certificado de prueba, sin valor fiscal")
	}
}

// ShowCertificate is the active profile's signing certificate: the one the
// running agent uses, read from its state report (live is that agent), else
// the one of the profile's file.
func ShowCertificate(ctx context.Context, opts Options, log *slog.Logger) (view CertView, live *Live, err error) {
	if live, err = OpenLive(ctx, opts); err != nil {
		return view, nil, err
	}
	if live != nil {
		c := live.State.Certificate
		if c == nil {
			return view, live, cfe.Errorf(cfe.EUNAVAILABLE, "el agente en ejecución no tiene un certificado de firma utilizable: %s",
				cmp.Or(live.State.CertificateError, "no hay certificado configurado"))
		}
		dataDir, cfg, _, err := LoadConfig(opts)
		if err != nil {
			return view, live, err
		}
		p, _ := cfg.ActiveProfile()
		return CertView{Path: p.Resolve(dataDir).Certificate.Path, Subject: c.SubjectDN, Issuer: c.Issuer,
			RUC: c.RUC, Serial: c.SerialNumber, NotBefore: c.NotBefore, NotAfter: c.NotAfter, DaysLeft: c.DaysLeft,
			Test: c.Test}, live, nil
	}
	a, err := Open(ctx, opts, log)
	if err != nil {
		return view, nil, err
	}
	defer a.Close()
	if a.Signer == nil {
		return view, nil, a.CertErr
	}
	return certViewOf(a.Signer.Certificate(), a.Profile.Certificate.Path), nil, nil
}
