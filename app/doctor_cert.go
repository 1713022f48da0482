package app

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/verifier"
)

// certWarnDays is how many days before its expiry the doctor warns about the
// certificate (as /health does).
const certWarnDays = 30

// certificate checks the profile's certificate file the way signing will
// use it and gives the real reason when it cannot be used (no file, wrong
// password, expired, not yet valid, another company's, untrusted chain);
// then compares it with what the running agent uses.
func (d *doctor) certificate(p profiles.Profile, r *apitype.StateReport, running bool) {
	const check = "certificado"
	status, msg, serial := certDiagnosis(p, d.cfg.Now())
	d.line(status, check, "%s", msg)
	if !running {
		return
	}
	switch c := r.Certificate; {
	case c == nil && status != CheckFail:
		d.line(CheckFail, check, "el agente en ejecución no pudo cargarlo (%s): reinícielo para que lo use",
			cmp.Or(r.CertificateError, "sin certificado"))
	case c != nil && serial != "" && c.SerialNumber != "" && c.SerialNumber != serial:
		d.line(CheckWarn, check, "el agente en ejecución usa otro certificado (%s, serie %s, vence el %s): reinícielo para usar el del perfil",
			c.CommonName, c.SerialNumber, c.NotAfter.UTC().Format(time.DateOnly))
	}
}

// certDiagnosis is the doctor's line about a profile's certificate as of
// now: its status (CheckOK, CheckWarn, CheckFail), the message and, when the
// certificate could be read, its serial number.
func certDiagnosis(p profiles.Profile, now time.Time) (status, msg, serial string) {
	c := p.Certificate
	if msg := certFilesProblem(c); msg != "" {
		return CheckFail, msg, ""
	}
	s, err := LoadSigner(c)
	switch {
	case errors.Is(err, signer.ErrWrongPassword):
		return CheckFail, fmt.Sprintf("la contraseña de %s es incorrecta (certificate.password en config.yaml, o %sCERTIFICATE_PASSWORD)",
			c.Path, profiles.EnvPrefix), ""
	case err != nil:
		return CheckFail, fmt.Sprintf("%s no se puede usar: %s", c.Path, cfe.Describe(err)), ""
	}
	cert := s.Certificate()
	i := signer.CertInfo(cert, now)
	if msg := certRefusal(p, i); msg != "" {
		return CheckFail, msg, i.SerialNumber
	}
	var notes []string
	status = CheckOK
	if i.Test {
		notes = append(notes, "certificado de prueba del entorno sandbox, sin valor fiscal")
	} else if chain, err := verifier.TrustedChain(cert, s.Chain(), now); err != nil {
		// DGI refuses CFEs signed by a certificate no accredited CA issued.
		status = CheckFail
		if p.Environment != profiles.Produccion {
			status = CheckWarn
		}
		notes = append(notes, cfe.ErrorMessage(err))
	} else {
		notes = append(notes, "cadena confiable: "+chain)
	}
	if i.RUC == "" {
		status = worse(status, CheckWarn)
		notes = append(notes, "no indica el RUC de la empresa")
	}
	expiry := cert.NotAfter.In(cfe.Montevideo).Format(time.DateOnly)
	if i.DaysToExpiry < certWarnDays {
		status = worse(status, CheckWarn)
		return status, fmt.Sprintf("%s vence en %d días (%s): renuévelo; %s", i.CommonName, i.DaysToExpiry, expiry, strings.Join(notes, "; ")), i.SerialNumber
	}
	return status, fmt.Sprintf("%s, RUC %s, vence el %s; %s", i.CommonName, i.RUC, expiry, strings.Join(notes, "; ")), i.SerialNumber
}

// certFilesProblem says why the profile's certificate files cannot be
// opened, "" when they can.
func certFilesProblem(c profiles.Certificate) string {
	if c.Path == "" {
		return "el perfil no indica certificado de firma (certificate.path): impórtelo con «cfe-agent cert import ARCHIVO.p12»"
	}
	for _, f := range []string{c.Path, c.KeyPath} {
		if f == "" {
			continue
		}
		fh, err := os.Open(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Sprintf("el archivo %s no existe: impórtelo de nuevo con «cfe-agent cert import ARCHIVO.p12»", f)
		case err != nil:
			return fmt.Sprintf("no se puede leer %s: %s", f, osReason(err))
		}
		_ = fh.Close()
	}
	return ""
}

// certRefusal says why a certificate that loads cannot sign for the
// profile, "" when it can.
func certRefusal(p profiles.Profile, i cfe.CertSummary) string {
	who := i.CommonName
	switch {
	case i.NotYetValid:
		return fmt.Sprintf("%s recién es válido desde el %s: no se puede firmar hasta entonces", who,
			i.NotBefore.In(cfe.Montevideo).Format(time.DateOnly))
	case i.Expired:
		return fmt.Sprintf("%s venció el %s: importe el certificado renovado", who, i.NotAfter.In(cfe.Montevideo).Format(time.DateOnly))
	case i.RUC != "" && i.RUC != p.Company.RUC:
		return fmt.Sprintf("%s es del RUC %s y el perfil es del RUC %s", who, i.RUC, p.Company.RUC)
	case i.Test && p.Environment == profiles.Produccion:
		return fmt.Sprintf("%s es un certificado de prueba, sin valor fiscal, en un perfil de producción", who)
	}
	return ""
}

// osReason says in Spanish why a file cannot be read.
func osReason(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return "permiso denegado"
	}
	return UnwrapPathError(err).Error()
}

// worse is the more severe of two doctor statuses.
func worse(a, b string) string {
	rank := map[string]int{CheckOK: 0, CheckWarn: 1, CheckFail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
