package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// certWarnDays is how many days before its expiry doctor warns about the
// certificate (as /health does).
const certWarnDays = 30

// certificate checks the profile's certificate file the way signing will
// use it and gives the real reason when it cannot be used (no file, wrong
// password, expired, not yet valid, another company's, untrusted chain);
// then compares it with what the running agent uses.
func (d *doctor) certificate(p profiles.Profile, r *apitype.StateReport, running bool) {
	const check = "certificado"
	status, msg, serial := certDiagnosis(p, time.Now())
	d.line(status, check, "%s", msg)
	if !running {
		return
	}
	switch c := r.Certificate; {
	case c == nil && status != "FAIL":
		d.line("FAIL", check, "el agente en ejecución no pudo cargarlo (%s): reinícielo para que lo use",
			cmp.Or(r.CertificateError, "sin certificado"))
	case c != nil && serial != "" && c.SerialNumber != "" && c.SerialNumber != serial:
		d.line("WARN", check, "el agente en ejecución usa otro certificado (%s, serie %s, vence el %s): reinícielo para usar el del perfil",
			c.CommonName, c.SerialNumber, c.NotAfter.UTC().Format(time.DateOnly))
	}
}

// certDiagnosis is doctor's line about a profile's certificate: its status
// (OK, WARN, FAIL), the message and, when the certificate could be read, its
// serial number.
func certDiagnosis(p profiles.Profile, now time.Time) (status, msg, serial string) {
	c := p.Certificate
	if c.Path == "" {
		return "FAIL", "el perfil no indica certificado de firma (certificate.path): impórtelo con «cfe-agent cert import ARCHIVO.p12»", ""
	}
	for _, f := range []string{c.Path, c.KeyPath} {
		if f == "" {
			continue
		}
		fh, err := os.Open(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "FAIL", fmt.Sprintf("el archivo %s no existe: impórtelo de nuevo con «cfe-agent cert import ARCHIVO.p12»", f), ""
		case err != nil:
			return "FAIL", fmt.Sprintf("no se puede leer %s: %s", f, osReason(err)), ""
		}
		_ = fh.Close()
	}
	s, err := app.LoadSigner(c)
	switch {
	case errors.Is(err, signer.ErrWrongPassword):
		return "FAIL", fmt.Sprintf("la contraseña de %s es incorrecta (certificate.password en config.yaml, o %sCERTIFICATE_PASSWORD)",
			c.Path, profiles.EnvPrefix), ""
	case err != nil:
		return "FAIL", fmt.Sprintf("%s no se puede usar: %s", c.Path, describe(err)), ""
	}
	cert := s.Certificate()
	i := signer.CertInfo(cert, now)
	serial = i.SerialNumber
	who := i.CommonName
	switch {
	case i.NotYetValid:
		return "FAIL", fmt.Sprintf("%s recién es válido desde el %s: no se puede firmar hasta entonces", who,
			cert.NotBefore.In(cfe.Montevideo).Format(time.DateOnly)), serial
	case i.Expired:
		return "FAIL", fmt.Sprintf("%s venció el %s: importe el certificado renovado", who,
			cert.NotAfter.In(cfe.Montevideo).Format(time.DateOnly)), serial
	case i.RUC != "" && i.RUC != p.Company.RUC:
		return "FAIL", fmt.Sprintf("%s es del RUC %s y el perfil es del RUC %s", who, i.RUC, p.Company.RUC), serial
	case i.Test && p.Environment == profiles.Produccion:
		return "FAIL", fmt.Sprintf("%s es un certificado de prueba, sin valor fiscal, en un perfil de producción", who), serial
	}
	var notes []string
	status = "OK"
	if i.Test {
		notes = append(notes, "certificado de prueba del entorno sandbox, sin valor fiscal")
	} else if chain, err := chainOf(s); err != nil {
		// DGI refuses CFEs signed by a certificate no accredited CA issued.
		status = "FAIL"
		if p.Environment != profiles.Produccion {
			status = "WARN"
		}
		notes = append(notes, cfe.ErrorMessage(err))
	} else {
		notes = append(notes, "cadena confiable: "+chain)
	}
	if i.RUC == "" {
		status = worse(status, "WARN")
		notes = append(notes, "no indica el RUC de la empresa")
	}
	expiry := cert.NotAfter.In(cfe.Montevideo).Format(time.DateOnly)
	if i.DaysToExpiry < certWarnDays {
		status = worse(status, "WARN")
		return status, fmt.Sprintf("%s vence en %d días (%s): renuévelo; %s", who, i.DaysToExpiry, expiry, strings.Join(notes, "; ")), serial
	}
	return status, fmt.Sprintf("%s, RUC %s, vence el %s; %s", who, i.RUC, expiry, strings.Join(notes, "; ")), serial
}

// chainOf is the certification path of the signer's certificate to an
// accredited CA the binary carries, as "CA → root".
func chainOf(s *signer.Signer) (string, error) {
	trust, err := embeddedTrust()
	if err != nil {
		return "", err
	}
	chain, err := trust.Chain(s.Certificate(), s.Chain(), time.Now())
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(chain)-1)
	for _, c := range chain[1:] {
		names = append(names, c.Subject.CommonName)
	}
	return strings.Join(names, " → "), nil
}

// osReason says in Spanish why a file cannot be read.
func osReason(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permiso denegado"
	}
	return app.UnwrapPathError(err).Error()
}

// worse is the more severe of two doctor statuses.
func worse(a, b string) string {
	rank := map[string]int{"OK": 0, "WARN": 1, "FAIL": 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
