// Package profilesetup is the use case behind "cfe-agent profile add": it
// checks, one answer at a time, what a new production profile needs (the
// company as DGI has it registered, the footer's date of entry or
// resolution, the UI's value, the signing certificate and its password,
// DGI's CAE files, the printer) and, once every answer is valid, creates
// the profile (Draft.Create): the certificate and the CAE files copied into
// the data directory, the profile added to config.yaml without touching the
// others. Nothing is written before.
//
// The questions, their order, their wording and the command line's options
// are the CLI's (cmd/cfe-agent). Each Set method takes the technician's
// answer as typed, with the CLI's convention «-» for "none" where a field is
// optional, and returns why it is refused, in Spanish, ready to be shown.
package profilesetup

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// PrinterAlias is the alias the profile gives the printer it sets up.
const PrinterAlias = "caja"

// ErrWrongPassword is OpenCertificate's error (in its chain) when the
// password does not open the certificate file.
var ErrWrongPassword = signer.ErrWrongPassword

// Config describes a profile to set up.
type Config struct {
	// Name is the new profile's name (lower case is used).
	Name string
	// Trust returns the accredited certification authorities a certificate's
	// chain must reach (the ones the binary carries); when it fails every
	// chain counts as untrusted.
	Trust func() (signer.Trust, error)
	// Now is the clock (the certificate's validity, the CAE files'
	// expiry); time.Now when nil.
	Now func() time.Time
}

// Draft is a production profile being set up: the answers accepted so far.
type Draft struct {
	name    string
	trust   func() (signer.Trust, error)
	now     func() time.Time
	defUI   string
	p       profiles.Profile
	cert    []byte // the certificate file read last
	creds   *signer.Credentials
	pass    string
	caes    []caeFile
	printer *profiles.Printer
}

// caeFile is a checked CAE file and the name it gets in the data directory.
type caeFile struct {
	file    string
	content []byte
}

// New starts setting up the profile c.Name beside those of cfg. Errors:
// ECONFLICT when cfg has a profile of that name.
func New(cfg *profiles.Config, c Config) (*Draft, error) {
	name := strings.ToLower(c.Name)
	if _, ok := cfg.Profile(name); ok {
		return nil, cfe.Errorf(cfe.ECONFLICT, "ya existe un perfil %q (vea cfe-agent profile list)", name)
	}
	d := &Draft{name: name, trust: c.Trust, now: c.Now, p: profiles.Profile{Environment: profiles.Produccion}}
	if d.now == nil {
		d.now = time.Now
	}
	if active, ok := cfg.ActiveProfile(); ok && active.Tax.ValorUI.IsPositive() {
		d.defUI = active.Tax.ValorUI.String()
	}
	return d, nil
}

// Name is the profile's name, in lower case.
func (d *Draft) Name() string { return d.name }

// The company's fields, by the names cfe.CheckEmisor gives them.
const (
	FieldRUC             = "ruc"
	FieldRazonSocial     = "razonSocial"
	FieldNombreComercial = "nombreComercial"
	FieldCodigoSucursal  = "codigoSucursal"
	FieldSucursal        = "sucursal"
	FieldDomicilioFiscal = "domicilioFiscal"
	FieldCiudad          = "ciudad"
	FieldDepartamento    = "departamento"
)

// SetCompany sets the company's field (one of the Field constants) to
// answer and checks it with DGI's rule for the emitter (cfe.CheckEmisor),
// whatever the fields not set yet hold. The optional ones (nombre
// comercial, sucursal) take «-» for none; the branch code is a number.
func (d *Draft) SetCompany(field, answer string) error {
	c := &d.p.Company
	switch field {
	case FieldRUC:
		c.RUC = answer
	case FieldRazonSocial:
		c.RazonSocial = answer
	case FieldNombreComercial:
		c.NombreComercial = strings.TrimPrefix(answer, "-")
	case FieldCodigoSucursal:
		c.CdgDGISucur, _ = strconv.Atoi(answer) // not a number: 0, which the rule refuses
	case FieldSucursal:
		c.Sucursal = strings.TrimPrefix(answer, "-")
	case FieldDomicilioFiscal:
		c.DomicilioFiscal = answer
	case FieldCiudad:
		c.Ciudad = answer
	case FieldDepartamento:
		c.Departamento = answer
	default:
		return fmt.Errorf("profilesetup: the company has no field %q", field)
	}
	for _, fe := range cfe.CheckEmisor(d.p.Emisor()) {
		if fe.Campo == field {
			return errors.New(fe.Mensaje)
		}
	}
	return nil
}

// The printed footer: the date the company entered the CFE regime, or the
// DGI resolution that incorporated it (whoever entered by resolution prints
// only the resolution), and the web site where it publishes its e-Tickets.
// Each answer is checked with DGI's rules for the footer (cfe.CheckFooter).

// SetFechaEmisor sets the date of entry to the regime: AAAA-MM-DD, or «-»
// for none (the company entered by resolution).
func (d *Draft) SetFechaEmisor(answer string) error {
	c := &d.p.Company
	c.FechaEmisor = profiles.Date{}
	if answer != "-" {
		t, err := time.Parse(time.DateOnly, answer)
		if err != nil {
			return errors.New("se espera una fecha AAAA-MM-DD, como 2020-03-01")
		}
		c.FechaEmisor = profiles.Date{Date: cfe.DateOf(t)}
	}
	return d.footer("fechaEmisor")
}

// HasFechaEmisor reports whether a date of entry was set: without one the
// resolution is needed.
func (d *Draft) HasFechaEmisor() bool { return !d.p.Company.FechaEmisor.IsZero() }

// SetResolucion sets DGI's resolution (number/year).
func (d *Draft) SetResolucion(answer string) error {
	d.p.Company.Resolucion = answer
	return d.footer("resolucion")
}

// SetWeb sets the web site where the company publishes its e-Tickets; «-»
// for none.
func (d *Draft) SetWeb(answer string) error {
	d.p.Company.WebURL = strings.TrimPrefix(answer, "-")
	return d.footer("webUrl")
}

func (d *Draft) footer(field string) error {
	c := d.p.Company
	for _, fe := range cfe.CheckFooter(c.FechaEmisor.Date, c.Resolucion, c.WebURL) {
		if fe.Campo == field {
			return errors.New(fe.Mensaje)
		}
	}
	return nil
}

// DefaultValorUI is the UI's value to offer: the active profile's, "" when
// it has none.
func (d *Draft) DefaultValorUI() string { return d.defUI }

// SetValorUI sets the value of the UI in pesos at the end of the previous
// year: a number greater than 0 with up to 4 decimals (a decimal comma is
// read as a point).
func (d *Draft) SetValorUI(answer string) error {
	v, err := decimal.NewFromString(strings.ReplaceAll(answer, ",", "."))
	if err != nil || !v.IsPositive() || !v.Equal(v.Truncate(4)) {
		return errors.New("se espera un número mayor que 0 con hasta 4 decimales, como 6.4208")
	}
	d.p.Tax.ValorUI = v
	return nil
}

// ReadCertificate reads the signing certificate's file, a .p12 or .pfx; the
// certificate opened before, if any, is forgotten.
func (d *Draft) ReadCertificate(path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".p12" && ext != ".pfx" {
		return errors.New("se espera un archivo .p12 o .pfx")
	}
	b, err := readFile(path)
	if err != nil {
		return err
	}
	d.cert, d.creds, d.pass = b, nil, ""
	return nil
}

// OpenCertificate opens the file ReadCertificate read with password.
// Errors: ErrWrongPassword in the chain when the password is wrong; another
// (a *cfe.Error saying why) when the file is no certificate the agent can
// use, whatever the password.
func (d *Draft) OpenCertificate(password string) error {
	if d.cert == nil {
		return errors.New("profilesetup: no certificate file read")
	}
	creds, err := signer.LoadPKCS12(d.cert, password)
	if err != nil {
		return err
	}
	d.creds, d.pass = creds, password
	return nil
}

// CertificateProblem says why the opened certificate cannot sign for the
// company, or "": expired or not valid yet, of another RUC, a test
// certificate, or (untrusted set) a chain that reaches no accredited
// authority, which DGI would refuse but the technician may accept.
func (d *Draft) CertificateProblem() (problem string, untrusted bool) {
	if d.creds == nil {
		return "no se abrió ningún certificado", false
	}
	now := d.now()
	i := signer.CertInfo(d.creds.Certificate, now)
	switch {
	case i.Expired:
		return fmt.Sprintf("el certificado venció el %s", i.NotAfter.In(cfe.Montevideo).Format(time.DateOnly)), false
	case i.NotYetValid:
		return fmt.Sprintf("el certificado recién es válido desde el %s", i.NotBefore.In(cfe.Montevideo).Format(time.DateOnly)), false
	case i.RUC != d.p.Company.RUC:
		return fmt.Sprintf("el certificado es del RUC %s, no del %s", cmp.Or(i.RUC, "(ninguno)"), d.p.Company.RUC), false
	case i.Test:
		return "es un certificado de prueba, sin valor fiscal: no sirve para producción", false
	}
	err := errors.New("profilesetup: no trust given")
	if d.trust != nil {
		var trust signer.Trust
		if trust, err = d.trust(); err == nil {
			_, err = trust.Chain(d.creds.Certificate, d.creds.Chain, now)
		}
	}
	if err != nil {
		return cfe.ErrorMessage(err), true
	}
	return "", false
}

// CertificateSummary names the opened certificate: its holder, RUC and
// expiry.
func (d *Draft) CertificateSummary() string {
	if d.creds == nil {
		return ""
	}
	i := signer.CertInfo(d.creds.Certificate, d.now())
	return fmt.Sprintf("%s, RUC %s, vence el %s", i.CommonName, i.RUC, i.NotAfter.In(cfe.Montevideo).Format(time.DateOnly))
}

// AddCAE adds one of DGI's CAE files, checked as "cae import" checks it
// (DGI's signature, the company's RUC, not expired), and returns what it
// authorizes (type, serie, numbers, expiry). A file of the same name given
// before is refused.
func (d *Draft) AddCAE(path string) (summary string, err error) {
	b, err := readFile(path)
	if err != nil {
		return "", err
	}
	base := filepath.Base(path)
	today := cfe.DateOf(d.now().In(cfe.Montevideo))
	r, err := signer.ParseCAEFile(b, signer.CAEOptions{RUC: d.p.Company.RUC, Today: today})
	if err != nil {
		return "", prefixed(base, err)
	}
	if slices.ContainsFunc(d.caes, func(c caeFile) bool { return c.file == base }) {
		return "", fmt.Errorf("ya se indicó un archivo %s", base)
	}
	d.caes = append(d.caes, caeFile{file: base, content: b})
	return fmt.Sprintf("%s serie %s, números %d a %d, vence %s", r.Type.Name(), r.Serie, r.DNro, r.HNro, r.Vencimiento), nil
}

// CAECount is how many CAE files were added.
func (d *Draft) CAECount() int { return len(d.caes) }

// Create writes what was set up: the certificate as certs/NAME.p12 and the
// CAE files under cae/NAME/ in dataDir (a file already there is not
// overwritten: ECONFLICT), then adds the profile to config.yaml
// (profiles.Add; activate makes it the active one). On any failure what was
// written is removed. It returns config.yaml's path.
func (d *Draft) Create(dataDir string, activate bool) (string, error) {
	if d.creds == nil {
		return "", errors.New("profilesetup: the certificate was not opened")
	}
	p := d.p
	var written []string
	undo := func() {
		for _, f := range written {
			_ = os.Remove(f)
		}
	}
	write := func(rel string, b []byte) error {
		path := filepath.Join(dataDir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if _, err := os.Stat(path); err == nil {
			return cfe.Errorf(cfe.ECONFLICT, "ya existe %s: no se sobrescribe", path)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	p.Certificate = profiles.Certificate{Path: filepath.Join("certs", d.name+".p12"), Password: profiles.Secret(d.pass)}
	if err := write(p.Certificate.Path, d.cert); err != nil {
		undo()
		return "", err
	}
	for _, c := range d.caes {
		rel := filepath.Join("cae", d.name, c.file)
		if err := write(rel, c.content); err != nil {
			undo()
			return "", err
		}
		p.CAE.Files = append(p.CAE.Files, rel)
	}
	if d.printer != nil {
		p.Printers = map[string]profiles.Printer{PrinterAlias: *d.printer}
		p.DefaultPrinter = PrinterAlias
	}
	if err := profiles.Add(dataDir, d.name, p, activate); err != nil {
		undo()
		return "", err
	}
	return filepath.Join(dataDir, profiles.FileName), nil
}

// readFile reads a file the technician named, saying in Spanish why it
// cannot.
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("el archivo %s no existe", path)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("no se puede leer %s: permiso denegado", path)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("no se puede leer %s: %w", path, err)
	}
	return b, nil
}

// prefixed is err with prefix before its message, keeping its code and
// fields (so that the CLI shows "prefix: message" and each field).
func prefixed(prefix string, err error) error {
	if cfe.ErrorCode(err) == cfe.EINTERNAL {
		return fmt.Errorf("%s: %s", prefix, err.Error())
	}
	return &cfe.Error{Code: cfe.ErrorCode(err), Message: prefix + ": " + cfe.ErrorMessage(err), Fields: cfe.ErrorFields(err), Err: err}
}
