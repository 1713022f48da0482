package signer

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Credentials are a private key and the certificate of its public key, with the
// certificates that issued it (if the file carried them).
type Credentials struct {
	Key         crypto.Signer
	Certificate *x509.Certificate
	Chain       []*x509.Certificate
}

// check reports whether the credentials can sign for DGI: an RSA key that
// belongs to the certificate.
func (c *Credentials) check() error {
	if _, err := rsaPublicKey(c.Certificate); err != nil {
		return err
	}
	if !samePublicKey(c.Key.Public(), c.Certificate.PublicKey) {
		return errors.New("la clave privada no corresponde al certificado")
	}
	return nil
}

func samePublicKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// newCredentials takes a parsed key and certificates in any order: the leaf is
// the certificate of the key's public half, the others are its chain.
func newCredentials(op string, key any, certs []*x509.Certificate) (*Credentials, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, invalid(op, fmt.Sprintf("tipo de clave privada no admitido (%T)", key), nil)
	}
	c := &Credentials{Key: signer}
	for _, cert := range certs {
		if c.Certificate == nil && samePublicKey(signer.Public(), cert.PublicKey) {
			c.Certificate = cert
		} else {
			c.Chain = append(c.Chain, cert)
		}
	}
	if c.Certificate == nil {
		return nil, invalid(op, "ningún certificado corresponde a la clave privada", nil)
	}
	if err := c.check(); err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	return c, nil
}

// LoadPKCS12 reads a .p12/.pfx file: the key, its certificate and any chain.
// Both OpenSSL 3's default encryption (AES-256, PBKDF2) and the legacy one
// (RC2/3DES) are read. Errors: EINVALID, with ErrWrongPassword as cause when the
// password is not the file's.
func LoadPKCS12(data []byte, password string) (*Credentials, error) {
	const op = "signer.LoadPKCS12"
	key, leaf, chain, err := pkcs12.DecodeChain(data, password)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return nil, invalid(op, "la contraseña del certificado es incorrecta", fmt.Errorf("%w: %w", ErrWrongPassword, err))
	}
	if err != nil {
		return nil, invalid(op, "el archivo no es un certificado PKCS#12 (.p12 o .pfx) que se pueda leer", err)
	}
	return newCredentials(op, key, append([]*x509.Certificate{leaf}, chain...))
}

// LoadPEM reads an unencrypted PEM private key (PKCS#1 "RSA PRIVATE KEY" or
// PKCS#8 "PRIVATE KEY") and PEM certificates: the key's certificate and,
// optionally, its chain. Errors: EINVALID.
func LoadPEM(keyPEM, certPEM []byte) (*Credentials, error) {
	const op = "signer.LoadPEM"
	key, err := parsePEMKey(keyPEM)
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	var certs []*x509.Certificate
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, invalid(op, "un certificado PEM no se puede leer", err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, invalid(op, "no se encontró ningún bloque CERTIFICATE en el PEM del certificado", nil)
	}
	return newCredentials(op, key, certs)
}

func parsePEMKey(keyPEM []byte) (any, error) {
	for rest := keyPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil, errors.New("no se encontró una clave privada en el PEM")
		}
		if !strings.HasSuffix(b.Type, "PRIVATE KEY") {
			continue
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
			return nil, errors.New("la clave privada PEM está cifrada: use un archivo .p12 o una clave sin cifrar")
		}
		var key any
		var err error
		switch b.Type {
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		default:
			return nil, fmt.Errorf("tipo de clave PEM %q no admitido (se espera RSA)", b.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("la clave privada PEM no se puede leer: %w", err)
		}
		return key, nil
	}
}

// EncodePKCS12 returns the credentials as a PKCS#12 file protected by password,
// with modern encryption (AES-256-CBC, PBKDF2, HMAC-SHA-256) that OpenSSL 1.1.1
// and later read. The agent stores a generated test certificate this way, like
// a real one.
func (c *Credentials) EncodePKCS12(password string) ([]byte, error) {
	p12, err := pkcs12.Modern.Encode(c.Key, c.Certificate, c.Chain, password)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: "signer.EncodePKCS12", Message: "no se pudo guardar el certificado", Err: err}
	}
	return p12, nil
}

// TestMarker marks certificates made by GenerateTestCertificate: their common
// name and organization contain it.
const TestMarker = "PRUEBA - SIN VALOR FISCAL"

// testCertValidityYears is how long a generated test certificate is valid, like
// the certificates Uruguayan CAs issue to companies.
const testCertValidityYears = 2

// GenerateTestCertificate makes a self-signed RSA-2048 certificate and key for
// the sandbox, marked TestMarker in CN and O, with the RUC in the subject's
// serialNumber attribute as in DGI certificates ("RUC" + 12 digits), a serial
// number of at most 19 digits (xmllint rejects X509SerialNumber values over 24
// digits) and a validity of two years from now. Nothing signed with it has
// fiscal value. Errors: EINVALID for an invalid RUC (cfe.ValidRUC) or an empty
// razón social.
func GenerateTestCertificate(ruc, razonSocial string, now time.Time) (*Credentials, error) {
	const op = "signer.GenerateTestCertificate"
	var fields []cfe.FieldError
	if !cfe.ValidRUC(ruc) {
		fields = append(fields, cfe.FieldError{Campo: "ruc", Mensaje: "debe tener 12 dígitos con el dígito verificador correcto"})
	}
	razonSocial = strings.TrimSpace(razonSocial)
	if razonSocial == "" {
		fields = append(fields, cfe.FieldError{Campo: "razon_social", Mensaje: "es obligatoria"})
	}
	if len(fields) > 0 {
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: "datos inválidos para el certificado de prueba", Fields: fields}
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo generar la clave", Err: err}
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo generar el certificado", Err: err}
	}
	serial.Add(serial, big.NewInt(1)) // 1 ≤ serial ≤ 2^63: 19 digits at most

	// X.520 limits CN and O to 64 characters.
	const suffix = " (" + TestMarker + ")"
	name := truncateRunes(razonSocial, 64-len(suffix)) + suffix
	subject := pkix.Name{
		CommonName:         name,
		Organization:       []string{name},
		OrganizationalUnit: []string{"CERTIFICADO DE PRUEBA"},
		Country:            []string{"UY"},
		SerialNumber:       "RUC" + ruc,
	}
	notBefore := now.Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               subject,
		NotBefore:             notBefore,
		NotAfter:              notBefore.AddDate(testCertValidityYears, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo generar el certificado", Err: err}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo generar el certificado", Err: err}
	}
	return &Credentials{Key: key, Certificate: cert}, nil
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// CertInfo summarizes cert as of now, for the status page, the tray and the
// technician's commands.
func CertInfo(cert *x509.Certificate, now time.Time) cfe.CertSummary {
	left := cert.NotAfter.Sub(now)
	days := int(left / (24 * time.Hour))
	if left < 0 && left%(24*time.Hour) != 0 {
		days-- // round toward the past: one second late is day -1
	}
	return cfe.CertSummary{
		SubjectDN:    cert.Subject.String(),
		CommonName:   cert.Subject.CommonName,
		Issuer:       cert.Issuer.String(),
		SerialNumber: cert.SerialNumber.String(),
		RUC:          rucOf(cert.Subject),
		NotBefore:    cert.NotBefore,
		NotAfter:     cert.NotAfter,
		DaysToExpiry: days,
		Expired:      now.After(cert.NotAfter),
		NotYetValid:  now.Before(cert.NotBefore),
		Test:         strings.Contains(cert.Subject.CommonName, TestMarker),
	}
}

// rucOf reads the RUC Uruguayan CAs put in the subject's serialNumber
// attribute ("RUC214844360018").
func rucOf(n pkix.Name) string {
	s := strings.TrimPrefix(strings.ToUpper(n.SerialNumber), "RUC")
	if cfe.ValidRUC(s) {
		return s
	}
	return ""
}

// CertRUC returns the RUC a certificate is issued to: Uruguayan CAs write it in
// the subject's serialNumber attribute ("RUC214844360018"). It is "" when
// that attribute holds no valid RUC.
func CertRUC(cert *x509.Certificate) string { return rucOf(cert.Subject) }

// Trust is the set of certification authorities that make a signing
// certificate trusted: Uruguay's national root and the accredited providers'
// CAs (package assets carries them).
type Trust struct {
	// Anchors are trusted by themselves: a chain that reaches one is trusted.
	Anchors []*x509.Certificate
	// Intermediates may link a certificate to an anchor; they are trusted
	// only through a chain to one.
	Intermediates []*x509.Certificate
}

// maxChainLen bounds the certification paths Chain builds (signer, a few CAs,
// anchor); Uruguay's hierarchy has three levels.
const maxChainLen = 6

// maxExtraCerts bounds the document's own certificates Chain considers, so a
// KeyInfo stuffed with look-alike CAs cannot make the search explode.
const maxExtraCerts = 8

// Chain returns a certification path from cert to one of t's anchors, cert
// first and the anchor last: each certificate is signed by the next one (SHA-1
// signatures too: the CAs that issued DGI's older certificates used it), each
// issuer is a CA allowed to sign certificates within its path length, and
// every certificate of the path was valid at time at. at is when the
// document was signed (TmstFirma), not now: a CFE stays valid after its
// certificate expires. extra are certificates the document itself carries
// (KeyInfo), usable as intermediates but never trusted by themselves (the
// first maxExtraCerts of them).
//
// Errors: EINVALID with ErrUntrusted as cause, and a message that says why
// (a self-signed certificate, an issuer that is no known accredited CA, an
// issuer whose name is claimed but whose key did not sign, a CA outside its
// validity at that time).
func (t Trust) Chain(cert *x509.Certificate, extra []*x509.Certificate, at time.Time) ([]*x509.Certificate, error) {
	const op = "signer.Trust.Chain"
	if len(extra) > maxExtraCerts {
		extra = extra[:maxExtraCerts]
	}
	candidates := append(append([]*x509.Certificate{}, t.Intermediates...), extra...)
	// why is the reason found farthest up the chain: where the search got
	// closest to an anchor.
	why, whyDepth := "", -1
	note := func(depth int, msg string) {
		if depth > whyDepth {
			why, whyDepth = msg, depth
		}
	}
	var walk func(path []*x509.Certificate) []*x509.Certificate
	walk = func(path []*x509.Certificate) []*x509.Certificate {
		cur := path[len(path)-1]
		depth := len(path) - 1
		if len(path) > maxChainLen {
			note(depth, "la cadena de certificados es demasiado larga")
			return nil
		}
		named := false // some CA has the name of cur's issuer
		try := func(issuer *x509.Certificate, anchor bool) []*x509.Certificate {
			if !bytes.Equal(cur.RawIssuer, issuer.RawSubject) || containsCert(path, issuer) {
				return nil
			}
			named = true
			if err := issuedBy(cur, issuer, depth); err != nil {
				note(depth, fmt.Sprintf("el certificado «%s» dice ser de «%s», pero %s",
					cur.Subject.CommonName, issuer.Subject.CommonName, err))
				return nil
			}
			if at.Before(issuer.NotBefore) || at.After(issuer.NotAfter) {
				note(depth, fmt.Sprintf("la autoridad «%s» no estaba vigente al firmar (%s; vigente del %s al %s)",
					issuer.Subject.CommonName, at.Format(time.RFC3339), issuer.NotBefore.Format(time.DateOnly), issuer.NotAfter.Format(time.DateOnly)))
				return nil
			}
			next := append(path[:len(path):len(path)], issuer)
			if anchor {
				return next
			}
			return walk(next)
		}
		for _, a := range t.Anchors {
			if p := try(a, true); p != nil {
				return p
			}
		}
		for _, c := range candidates {
			if p := try(c, false); p != nil {
				return p
			}
		}
		switch {
		case named: // the reason is noted above
		case depth == 0 && bytes.Equal(cur.RawIssuer, cur.RawSubject):
			note(depth, fmt.Sprintf("el certificado «%s» es autofirmado: no lo emitió una autoridad certificadora acreditada", cur.Subject.CommonName))
		case bytes.Equal(cur.RawIssuer, cur.RawSubject):
			note(depth, fmt.Sprintf("la autoridad «%s» de la cadena es autofirmada y no es una autoridad certificadora acreditada conocida", cur.Subject.CommonName))
		default:
			note(depth, fmt.Sprintf("«%s», emisor de «%s», no es una autoridad certificadora acreditada conocida",
				cur.Issuer.CommonName, cur.Subject.CommonName))
		}
		return nil
	}
	if at.Before(cert.NotBefore) || at.After(cert.NotAfter) {
		return nil, invalid(op, fmt.Sprintf("cadena no confiable: el certificado «%s» no estaba vigente al firmar (%s; vigente del %s al %s)",
			cert.Subject.CommonName, at.Format(time.RFC3339), cert.NotBefore.Format(time.DateOnly), cert.NotAfter.Format(time.DateOnly)), ErrUntrusted)
	}
	if chain := walk([]*x509.Certificate{cert}); chain != nil {
		return chain, nil
	}
	return nil, invalid(op, "cadena no confiable: "+why, ErrUntrusted)
}

// issuedBy checks that parent, whose subject is child's issuer, signed child
// and may issue certificates at this depth (the number of CAs below parent
// in the path, child's position). It returns why not, in Spanish.
func issuedBy(child, parent *x509.Certificate, depth int) error {
	if err := parent.CheckSignature(child.SignatureAlgorithm, child.RawTBSCertificate, child.Signature); err != nil {
		return errors.New("la firma del certificado no es de esa autoridad")
	}
	if !parent.BasicConstraintsValid || !parent.IsCA {
		return errors.New("ese certificado no es de una autoridad certificadora")
	}
	if parent.KeyUsage != 0 && parent.KeyUsage&x509.KeyUsageCertSign == 0 {
		return errors.New("esa autoridad no puede firmar certificados")
	}
	if parent.MaxPathLen >= 0 && depth > parent.MaxPathLen {
		return errors.New("la cadena excede el largo que esa autoridad permite")
	}
	return nil
}

func containsCert(path []*x509.Certificate, c *x509.Certificate) bool {
	for _, p := range path {
		if p.Equal(c) {
			return true
		}
	}
	return false
}
