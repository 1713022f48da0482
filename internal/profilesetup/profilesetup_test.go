package profilesetup_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/profilesetup"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

const ruc = "219999830019" // a RUC with a right check digit

var now = time.Date(2026, time.March, 14, 10, 30, 0, 0, cfe.Montevideo)

// authority is a certification authority of the tests: the trust its
// certificates reach.
type authority struct {
	cert *x509.Certificate
	key  *rsa.PrivateKey
}

var testCA = sync.OnceValues(func() (*authority, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Autoridad de Prueba"},
		NotBefore: now.AddDate(-5, 0, 0), NotAfter: now.AddDate(5, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, MaxPathLen: 1}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return &authority{cert: cert, key: key}, err
})

// trust is a Config.Trust that reaches the tests' authority.
func trust() (signer.Trust, error) {
	ca, err := testCA()
	if err != nil {
		return signer.Trust{}, err
	}
	return signer.Trust{Anchors: []*x509.Certificate{ca.cert}}, nil
}

// certFile writes a PKCS#12 file (password "clave") of a certificate for
// rucOf valid from notBefore to notAfter, issued by the tests' authority
// or, when selfSigned, by itself.
func certFile(t *testing.T, rucOf string, notBefore, notAfter time.Time, selfSigned bool) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:   pkix.Name{CommonName: "Almacén La Esquina S.R.L.", SerialNumber: "RUC" + rucOf, Country: []string{"UY"}},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature}
	parent, parentKey := tmpl, key
	if !selfSigned {
		ca, err := testCA()
		if err != nil {
			t.Fatal(err)
		}
		parent, parentKey = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p12, err := (&signer.Credentials{Key: key, Certificate: cert}).EncodePKCS12("clave")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "firma.p12")
	if err := os.WriteFile(f, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// caeFile writes a CAE file like DGI's for rucOf (e-Ticket serie A, 1 to
// 5000, granted a month before now, expiring two years after), signed with a
// test certificate that the file carries.
func caeFile(t *testing.T, rucOf, name string) string {
	t.Helper()
	granted, expires := now.AddDate(0, -1, 0).Format(time.DateOnly), now.AddDate(2, 0, 0).Format(time.DateOnly)
	xml := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<ns0:CAE xmlns:ns0="http://cfe.dgi.gub.uy" version="1.0">`+
		`<ns0:TmstFrma>%sT10:00:00-03:00</ns0:TmstFrma><ns0:DA><ns0:RucE>%s</ns0:RucE><ns0:TCFE>101</ns0:TCFE>`+
		`<ns0:Serie>A</ns0:Serie><ns0:DNro>1</ns0:DNro><ns0:HNro>5000</ns0:HNro><ns0:TA>E</ns0:TA>`+
		`<ns0:NA>90261234567</ns0:NA><ns0:FA>%s</ns0:FA><ns0:FVD>%s</ns0:FVD></ns0:DA></ns0:CAE>`, granted, rucOf, granted, expires)
	creds, err := signer.GenerateTestCertificate("214844360018", "DGI de prueba", now.AddDate(0, -2, 0))
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, signed.XML, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// setup is a data directory with the default configuration (its sandbox
// profile active, with a UI of 6.4208) and a draft of the profile
// "esquina" in it.
func setup(t *testing.T) (dataDir string, d *profilesetup.Draft) {
	t.Helper()
	dataDir = t.TempDir()
	cfg, _, err := profiles.EnsureDefaultWith(dataDir, profiles.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	d, err = profilesetup.New(cfg, profilesetup.Config{Name: "Esquina", Trust: trust, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return dataDir, d
}

// company sets a valid company on d, and the footer's resolution.
func company(t *testing.T, d *profilesetup.Draft) {
	t.Helper()
	for field, answer := range map[string]string{
		profilesetup.FieldRUC: ruc, profilesetup.FieldRazonSocial: "ALMACÉN LA ESQUINA S.R.L.",
		profilesetup.FieldNombreComercial: "-", profilesetup.FieldCodigoSucursal: "2", profilesetup.FieldSucursal: "-",
		profilesetup.FieldDomicilioFiscal: "Rivera 1234", profilesetup.FieldCiudad: "Montevideo",
		profilesetup.FieldDepartamento: "Montevideo",
	} {
		if err := d.SetCompany(field, answer); err != nil {
			t.Fatalf("%s %q: %v", field, answer, err)
		}
	}
	if err := d.SetResolucion("1234/2016"); err != nil {
		t.Fatal(err)
	}
}

// TestNew: the name is the profile's in lower case, a name in use is
// refused, and the UI's value offered is the active profile's.
func TestNew(t *testing.T) {
	t.Parallel()
	_, d := setup(t)
	if d.Name() != "esquina" || d.DefaultValorUI() != "6.4208" {
		t.Errorf("name %q, UI offered %q; want esquina and the active profile's 6.4208", d.Name(), d.DefaultValorUI())
	}
	cfg, _, err := profiles.EnsureDefaultWith(t.TempDir(), profiles.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = profilesetup.New(cfg, profilesetup.Config{Name: "SANDBOX"})
	if cfe.ErrorCode(err) != cfe.ECONFLICT || !strings.Contains(cfe.ErrorMessage(err), `ya existe un perfil "sandbox"`) {
		t.Errorf("New of the existing profile = %v, want ECONFLICT naming it", err)
	}
}

// TestDraft_SetCompany: each field is checked by DGI's rule for it alone.
func TestDraft_SetCompany(t *testing.T) {
	t.Parallel()
	tests := []struct {
		field, answer string
		refusal       string // a part of the refusal; "" when accepted
	}{
		{profilesetup.FieldRUC, "214844360017", "RUC inválido: 12 dígitos con dígito verificador correcto"},
		{profilesetup.FieldRUC, ruc, ""},
		{profilesetup.FieldRazonSocial, "", "obligatorio"},
		{profilesetup.FieldRazonSocial, "ALMACÉN LA ESQUINA S.R.L.", ""},
		{profilesetup.FieldNombreComercial, "-", ""},
		{profilesetup.FieldCodigoSucursal, "0", "obligatorio: el código de la casa principal o sucursal que asignó DGI (1 a 9999)"},
		{profilesetup.FieldCodigoSucursal, "dos", "obligatorio: el código de la casa principal o sucursal que asignó DGI (1 a 9999)"},
		{profilesetup.FieldCodigoSucursal, "2", ""},
		{profilesetup.FieldSucursal, "-", ""},
		{profilesetup.FieldDomicilioFiscal, "", "obligatorio"},
		{profilesetup.FieldCiudad, "Montevideo", ""},
		{"telefono", "29001234", "no field"},
	}
	_, d := setup(t)
	for _, tc := range tests {
		err := d.SetCompany(tc.field, tc.answer)
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s %q refused: %v", tc.field, tc.answer, err)
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
			t.Errorf("%s %q: %v, want the refusal %q", tc.field, tc.answer, err, tc.refusal)
		}
	}
}

// TestDraft_Footer: the date of entry or the resolution, and the web site.
func TestDraft_Footer(t *testing.T) {
	t.Parallel()
	_, d := setup(t)
	if err := d.SetFechaEmisor("2026-13-01"); err == nil || !strings.Contains(err.Error(), "se espera una fecha AAAA-MM-DD") {
		t.Errorf("a month 13: %v", err)
	}
	if err := d.SetFechaEmisor("2020-03-01"); err != nil || !d.HasFechaEmisor() {
		t.Errorf("2020-03-01: %v, set %v", err, d.HasFechaEmisor())
	}
	if err := d.SetResolucion("1234/2016"); err == nil || !strings.Contains(err.Error(), "no ambas") {
		t.Errorf("a resolution beside a date: %v", err)
	}
	if err := d.SetFechaEmisor("-"); err != nil || d.HasFechaEmisor() {
		t.Errorf("«-»: %v, set %v; want no date", err, d.HasFechaEmisor())
	}
	if err := d.SetResolucion("mil/2016"); err == nil || !strings.Contains(err.Error(), "como 1234/2016") {
		t.Errorf("a resolution that is no number/year: %v", err)
	}
	if err := d.SetResolucion("1234/2016"); err != nil {
		t.Errorf("1234/2016: %v", err)
	}
	if err := d.SetWeb("www sin esquema"); err == nil || !strings.Contains(err.Error(), "se espera la dirección web") {
		t.Errorf("a web address without scheme: %v", err)
	}
	for _, ok := range []string{"https://www.laesquina.com.uy/cfe", "-"} {
		if err := d.SetWeb(ok); err != nil {
			t.Errorf("web %q: %v", ok, err)
		}
	}
}

// TestDraft_SetValorUI: a positive number with up to 4 decimals, a decimal
// comma read as a point.
func TestDraft_SetValorUI(t *testing.T) {
	t.Parallel()
	_, d := setup(t)
	for _, bad := range []string{"0", "-1", "6.42081", "seis", ""} {
		if err := d.SetValorUI(bad); err == nil || !strings.Contains(err.Error(), "mayor que 0 con hasta 4 decimales") {
			t.Errorf("SetValorUI(%q) = %v, want it refused", bad, err)
		}
	}
	for _, good := range []string{"6,4208", "6.4208", "7"} {
		if err := d.SetValorUI(good); err != nil {
			t.Errorf("SetValorUI(%q) = %v", good, err)
		}
	}
}

// TestDraft_Certificate: the file, the password and each reason a
// certificate cannot sign for the company.
func TestDraft_Certificate(t *testing.T) {
	t.Parallel()
	good := certFile(t, ruc, now.AddDate(0, -1, 0), now.AddDate(1, 0, 0), false)

	t.Run("the file", func(t *testing.T) {
		t.Parallel()
		_, d := setup(t)
		if err := d.ReadCertificate(strings.TrimSuffix(good, ".p12") + ".pem"); err == nil || err.Error() != "se espera un archivo .p12 o .pfx" {
			t.Errorf("a .pem: %v", err)
		}
		if err := d.ReadCertificate("/no/existe.p12"); err == nil || err.Error() != "el archivo /no/existe.p12 no existe" {
			t.Errorf("a missing file: %v", err)
		}
		notP12 := filepath.Join(t.TempDir(), "otro.pfx")
		if err := os.WriteFile(notP12, []byte("no es un certificado"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := d.ReadCertificate(notP12); err != nil {
			t.Fatal(err)
		}
		if err := d.OpenCertificate("clave"); err == nil || errors.Is(err, profilesetup.ErrWrongPassword) {
			t.Errorf("a file that is no PKCS#12: %v, want an error other than the password's", err)
		}
		if err := d.ReadCertificate(good); err != nil {
			t.Fatal(err)
		}
		if err := d.OpenCertificate("mal"); !errors.Is(err, profilesetup.ErrWrongPassword) {
			t.Errorf("a wrong password: %v, want ErrWrongPassword", err)
		}
	})

	testCreds, err := signer.GenerateTestCertificate(ruc, "Almacén La Esquina S.R.L.", now.AddDate(0, -1, 0))
	if err != nil {
		t.Fatal(err)
	}
	testP12, err := testCreds.EncodePKCS12("clave")
	if err != nil {
		t.Fatal(err)
	}
	testFile := filepath.Join(t.TempDir(), "prueba.p12")
	if err := os.WriteFile(testFile, testP12, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		file      string
		problem   string // a part of it; "" when the certificate can sign
		untrusted bool
	}{
		{"valid and trusted", good, "", false},
		{"expired", certFile(t, ruc, now.AddDate(-2, 0, 0), now.AddDate(0, 0, -1), false), "el certificado venció el 2026-03-13", false},
		{"not valid yet", certFile(t, ruc, now.AddDate(0, 0, 2), now.AddDate(1, 0, 0), false), "el certificado recién es válido desde el 2026-03-16", false},
		{"another company's", certFile(t, "214844360018", now.AddDate(0, -1, 0), now.AddDate(1, 0, 0), false), "es del RUC 214844360018, no del " + ruc, false},
		{"a test certificate", testFile, "es un certificado de prueba, sin valor fiscal", false},
		{"self-signed", certFile(t, ruc, now.AddDate(0, -1, 0), now.AddDate(1, 0, 0), true), "cadena no confiable", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, d := setup(t)
			company(t, d)
			if err := d.ReadCertificate(tc.file); err != nil {
				t.Fatal(err)
			}
			if err := d.OpenCertificate("clave"); err != nil {
				t.Fatal(err)
			}
			problem, untrusted := d.CertificateProblem()
			if (tc.problem == "") != (problem == "") || !strings.Contains(problem, tc.problem) || untrusted != tc.untrusted {
				t.Errorf("CertificateProblem = %q, untrusted %v; want %q, untrusted %v", problem, untrusted, tc.problem, tc.untrusted)
			}
			if tc.problem == "" && d.CertificateSummary() != "Almacén La Esquina S.R.L., RUC "+ruc+", vence el 2027-03-14" {
				t.Errorf("CertificateSummary = %q", d.CertificateSummary())
			}
		})
	}

	t.Run("without the accredited authorities every chain is untrusted", func(t *testing.T) {
		t.Parallel()
		cfg, _, err := profiles.EnsureDefaultWith(t.TempDir(), profiles.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := profilesetup.New(cfg, profilesetup.Config{Name: "esquina", Now: func() time.Time { return now },
			Trust: func() (signer.Trust, error) {
				return signer.Trust{}, &cfe.Error{Code: cfe.EINTERNAL, Message: "sin autoridades"}
			}})
		if err != nil {
			t.Fatal(err)
		}
		company(t, d)
		if err := d.ReadCertificate(good); err != nil {
			t.Fatal(err)
		}
		if err := d.OpenCertificate("clave"); err != nil {
			t.Fatal(err)
		}
		if problem, untrusted := d.CertificateProblem(); problem != "sin autoridades" || !untrusted {
			t.Errorf("CertificateProblem = %q, untrusted %v", problem, untrusted)
		}
	})
}

// TestDraft_AddCAE: DGI's CAE files, each checked as cae import checks it.
func TestDraft_AddCAE(t *testing.T) {
	t.Parallel()
	_, d := setup(t)
	company(t, d)
	foreign := caeFile(t, "214844360018", "CAE_otro.xml")
	_, err := d.AddCAE(foreign)
	if cfe.ErrorCode(err) != cfe.EINVALID || !strings.HasPrefix(cfe.ErrorMessage(err), "CAE_otro.xml: el archivo CAE no es válido") {
		t.Errorf("another company's CAE: %v", err)
	}
	if _, err := d.AddCAE("/no/existe.xml"); err == nil || err.Error() != "el archivo /no/existe.xml no existe" {
		t.Errorf("a missing file: %v", err)
	}
	good := caeFile(t, ruc, "CAE_101_A.xml")
	summary, err := d.AddCAE(good)
	if err != nil || summary != "e-Ticket serie A, números 1 a 5000, vence 2028-03-14" {
		t.Errorf("AddCAE = %q, %v", summary, err)
	}
	if _, err := d.AddCAE(caeFile(t, ruc, "CAE_101_A.xml")); err == nil || err.Error() != "ya se indicó un archivo CAE_101_A.xml" {
		t.Errorf("a second file of the same name: %v", err)
	}
	if d.CAECount() != 1 {
		t.Errorf("%d CAE files kept, want 1", d.CAECount())
	}
}

// TestDraft_SetPrinter: one of the machine's printers, a folder, or none.
func TestDraft_SetPrinter(t *testing.T) {
	t.Parallel()
	_, d := setup(t)
	system := []printer.SystemPrinter{{Name: "Caja_1", State: printer.PrinterIdle}}
	if err := d.SetPrinter("Caja_Inexistente", system); err == nil ||
		err.Error() != "el equipo no tiene una impresora «Caja_Inexistente»: elija una de la lista o una carpeta (ruta completa)" {
		t.Errorf("a printer the machine has not: %v", err)
	}
	file := filepath.Join(t.TempDir(), "archivo")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.SetPrinter(filepath.Join(file, "pdf"), system); err == nil || !strings.Contains(err.Error(), "no se puede escribir en la carpeta") {
		t.Errorf("a folder under a file: %v", err)
	}
	folder := filepath.Join(t.TempDir(), "pdf", "caja")
	if err := d.SetPrinter(folder, system); err != nil {
		t.Fatalf("a new folder: %v", err)
	}
	if st, err := os.Stat(folder); err != nil || !st.IsDir() {
		t.Errorf("the folder was not made: %v", err)
	}
	for _, ok := range []string{"Caja_1", "-"} {
		if err := d.SetPrinter(ok, system); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestDraft_Create: what was set up is written into the data directory and
// config.yaml, and the profile loads as the agent reads it; a refused
// creation leaves nothing behind.
func TestDraft_Create(t *testing.T) {
	t.Parallel()
	cert := certFile(t, ruc, now.AddDate(0, -1, 0), now.AddDate(1, 0, 0), false)
	cae := caeFile(t, ruc, "CAE_101_A.xml")
	ready := func(t *testing.T) (string, *profilesetup.Draft) {
		t.Helper()
		dataDir, d := setup(t)
		company(t, d)
		if err := d.SetValorUI("6,5"); err != nil {
			t.Fatal(err)
		}
		if err := d.ReadCertificate(cert); err != nil {
			t.Fatal(err)
		}
		if err := d.OpenCertificate("clave"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.AddCAE(cae); err != nil {
			t.Fatal(err)
		}
		return dataDir, d
	}

	t.Run("everything checked", func(t *testing.T) {
		t.Parallel()
		dataDir, d := ready(t)
		pdfs := filepath.Join(t.TempDir(), "pdf")
		if err := d.SetPrinter(pdfs, nil); err != nil {
			t.Fatal(err)
		}
		path, err := d.Create(dataDir, true)
		if err != nil || path != filepath.Join(dataDir, profiles.FileName) {
			t.Fatalf("Create = %s, %v", path, err)
		}
		for src, dst := range map[string]string{cert: filepath.Join(dataDir, "certs", "esquina.p12"),
			cae: filepath.Join(dataDir, "cae", "esquina", "CAE_101_A.xml")} {
			a, _ := os.ReadFile(src)
			b, err := os.ReadFile(dst)
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s is not a copy of %s (%v)", dst, src, err)
			}
		}
		cfg, err := profiles.Load(dataDir)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := cfg.Profile("esquina")
		if !ok || cfg.Active != "esquina" {
			t.Fatalf("profile esquina loaded %v, active %q", ok, cfg.Active)
		}
		if p.Environment != profiles.Produccion || p.Company.RUC != ruc || p.Company.CdgDGISucur != 2 ||
			p.Company.Resolucion != "1234/2016" || p.Company.NombreComercial != "" || !p.Tax.ValorUI.Equal(decimalOf(t, "6.5")) ||
			string(p.Certificate.Password) != "clave" || len(p.CAE.Files) != 1 ||
			p.DefaultPrinter != profilesetup.PrinterAlias || p.Printers[profilesetup.PrinterAlias].Dir != pdfs {
			t.Errorf("the loaded profile: %+v", p)
		}
	})

	t.Run("a certificate already in the data directory is not overwritten", func(t *testing.T) {
		t.Parallel()
		dataDir, d := ready(t)
		before, err := os.ReadFile(filepath.Join(dataDir, profiles.FileName))
		if err != nil {
			t.Fatal(err)
		}
		there := filepath.Join(dataDir, "certs", "esquina.p12")
		if err := os.MkdirAll(filepath.Dir(there), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(there, []byte("el de antes"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Create(dataDir, false); cfe.ErrorCode(err) != cfe.ECONFLICT || !strings.Contains(cfe.ErrorMessage(err), "no se sobrescribe") {
			t.Fatalf("Create = %v, want ECONFLICT", err)
		}
		after, _ := os.ReadFile(filepath.Join(dataDir, profiles.FileName))
		kept, _ := os.ReadFile(there)
		if !bytes.Equal(before, after) || string(kept) != "el de antes" {
			t.Error("a refused Create changed config.yaml or the certificate that was there")
		}
		if _, err := os.Stat(filepath.Join(dataDir, "cae", "esquina", "CAE_101_A.xml")); err == nil {
			t.Error("a refused Create left a CAE file")
		}
	})

	t.Run("a CAE file already there undoes the certificate", func(t *testing.T) {
		t.Parallel()
		dataDir, d := ready(t)
		there := filepath.Join(dataDir, "cae", "esquina", "CAE_101_A.xml")
		if err := os.MkdirAll(filepath.Dir(there), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(there, []byte("otro"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Create(dataDir, false); cfe.ErrorCode(err) != cfe.ECONFLICT {
			t.Fatalf("Create = %v, want ECONFLICT", err)
		}
		if _, err := os.Stat(filepath.Join(dataDir, "certs", "esquina.p12")); err == nil {
			t.Error("the certificate copied before the refusal was left")
		}
		if cfg, err := profiles.Load(dataDir); err != nil {
			t.Fatal(err)
		} else if _, ok := cfg.Profile("esquina"); ok {
			t.Error("the profile was added")
		}
	})

	t.Run("a profile breaking the configuration's rules is not added", func(t *testing.T) {
		t.Parallel()
		cfg, _, err := profiles.EnsureDefaultWith(t.TempDir(), profiles.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := profilesetup.New(cfg, profilesetup.Config{Name: "no válido", Trust: trust, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		dataDir := t.TempDir()
		if _, _, err := profiles.EnsureDefaultWith(dataDir, profiles.Overrides{}); err != nil {
			t.Fatal(err)
		}
		company(t, d)
		if err := d.ReadCertificate(cert); err != nil {
			t.Fatal(err)
		}
		if err := d.OpenCertificate("clave"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Create(dataDir, false); cfe.ErrorCode(err) != cfe.EINVALID {
			t.Fatalf("Create = %v, want EINVALID for the name", err)
		}
		if _, err := os.Stat(filepath.Join(dataDir, "certs", "no válido.p12")); err == nil {
			t.Error("the certificate copied before the refusal was left")
		}
	})

	t.Run("without a certificate nothing is created", func(t *testing.T) {
		t.Parallel()
		dataDir, d := setup(t)
		company(t, d)
		if _, err := d.Create(dataDir, false); err == nil {
			t.Fatal("Create without a certificate succeeded")
		}
		if _, err := os.Stat(filepath.Join(dataDir, "certs")); err == nil {
			t.Error("Create without a certificate wrote the certs folder")
		}
	})
}

func decimalOf(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
