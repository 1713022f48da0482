package dgi

import (
	"crypto/x509"
	"embed"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Environment names DGI's environment: its URLs and its certificate.
type Environment string

// DGI's environments.
const (
	Test       Environment = "prueba"
	Production Environment = "produccion"
)

//go:embed certs/*.pem
var certFS embed.FS

// shipped are the embedded certificates of each environment, newest last
// (certs/SOURCE.md).
var shipped = map[Environment][]string{
	Test:       {"certs/dgi-prueba-2022.pem", "certs/dgi-prueba-2024.pem"},
	Production: {"certs/dgi-produccion-2022.pem"},
}

// ShippedCertificate returns the newest of DGI's certificates embedded for
// env, whether or not it is still valid (see certs/SOURCE.md).
func ShippedCertificate(env Environment) (*x509.Certificate, error) {
	files := shipped[env]
	if len(files) == 0 {
		return nil, fmt.Errorf("entorno de DGI %q desconocido: use %q o %q", env, Test, Production)
	}
	b, err := certFS.ReadFile(files[len(files)-1])
	if err != nil {
		return nil, err
	}
	certs, err := ParseCertificates(b)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

// ParseCertificates reads PEM certificates (or one DER certificate).
func ParseCertificates(b []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := b; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("un certificado PEM no se puede leer: %w", err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return nil, fmt.Errorf("no se encontró un certificado (PEM o DER)")
		}
		out = append(out, c)
	}
	return out, nil
}

// certValidity says, in Spanish, why cert cannot be relied on at now ("" when
// it can).
func certValidity(cert *x509.Certificate, now time.Time) string {
	switch {
	case now.After(cert.NotAfter):
		return fmt.Sprintf("el certificado de DGI «%s» venció el %s: configure el certificado vigente de DGI (dgi.certificado)",
			cert.Subject.CommonName, cert.NotAfter.In(cfe.Montevideo).Format(time.DateOnly))
	case now.Before(cert.NotBefore):
		return fmt.Sprintf("el certificado de DGI «%s» es válido recién desde el %s",
			cert.Subject.CommonName, cert.NotBefore.In(cfe.Montevideo).Format(time.DateOnly))
	}
	return ""
}
