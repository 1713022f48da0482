package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Seed is known data loaded at start (--seed FILE), mainly for tests: the
// values of keys and passwords are chosen by the file. Entries whose
// username, RUC or key already exist are left as they are, so a server can
// restart with the same file.
type Seed struct {
	Companies []SeedCompany `json:"companies"`
	Users     []SeedUser    `json:"users"`
	APIKeys   []SeedKey     `json:"apiKeys"`
}

// SeedCompany is a company; limits, when positive, are its keys' defaults.
// The footer fields are those of the agent's profile (company.fecha_emisor,
// company.resolucion, company.web_url, print.constancia_iva_al_dia) with the
// same rules (cfe.CheckFooter): fechaEmisor (YYYY-MM-DD) or resolucion
// ("1234/2016"), not both; webUrl http or https; constanciaIvaAlDia true
// when omitted.
type SeedCompany struct {
	RUC               string           `json:"ruc"`
	RazonSocial       string           `json:"razonSocial"`
	FormatoRepImpresa string           `json:"formatoRepImpresa,omitempty"`
	DomicilioFiscal   string           `json:"domicilioFiscal,omitempty"`
	Ciudad            string           `json:"ciudad,omitempty"`
	Departamento      string           `json:"departamento,omitempty"`
	Plantillas        []TemplateConfig `json:"plantillas,omitempty"` // custom print templates
	LimitePorMinuto   int              `json:"limitePorMinuto,omitempty"`
	LimitePorHora     int              `json:"limitePorHora,omitempty"`

	// The printed footer's data.
	FechaEmisor        string `json:"fechaEmisor,omitempty"`
	Resolucion         string `json:"resolucion,omitempty"`
	WebURL             string `json:"webUrl,omitempty"`
	ConstanciaIVAAlDia *bool  `json:"constanciaIvaAlDia,omitempty"`
}

// SeedUser is a user of the companies named by RUC.
type SeedUser struct {
	Username string   `json:"username"`
	Email    string   `json:"email"`
	Password string   `json:"password"`
	Empresas []string `json:"empresas"` // RUCs
}

// SeedKey is a company API key with a known value (it must start with the
// environment's prefix).
type SeedKey struct {
	Empresa         string `json:"empresa"` // RUC
	Nombre          string `json:"nombre"`
	Descripcion     string `json:"descripcion,omitempty"`
	Key             string `json:"key"`
	LimitePorMinuto int    `json:"limitePorMinuto,omitempty"`
	LimitePorHora   int    `json:"limitePorHora,omitempty"`
}

// LoadSeed reads a seed file.
func LoadSeed(path string) (*Seed, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Seed
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("seed %s: %w", path, err)
	}
	return &s, nil
}

// seeder writes seed entries in one transaction.
type seeder struct {
	tx     *bolt.Tx
	prefix string
	cost   int
}

// company adds c with one issuing point. ECONFLICT when its RUC exists.
func (sd seeder) company(c SeedCompany) (*data.Company, error) {
	var required []cfe.FieldError
	if !cfe.ValidRUC(c.RUC) {
		required = append(required, cfe.FieldError{Campo: "ruc", Mensaje: "se esperan 12 dígitos que terminen en el dígito verificador de DGI"})
	}
	if strings.TrimSpace(c.RazonSocial) == "" {
		required = append(required, cfe.FieldError{Campo: "razonSocial", Mensaje: "falta la razón social"})
	}
	if err := web.Invalid(required...); err != nil {
		return nil, fmt.Errorf("company %q: %w", c.RUC, err)
	}
	rec := &data.Company{RUC: c.RUC, RazonSocial: c.RazonSocial, FormatoRepImpresa: orDefault(c.FormatoRepImpresa, defaultFormato),
		DomFiscal: orDefault(c.DomicilioFiscal, defaultDomFiscal), Ciudad: orDefault(c.Ciudad, defaultCiudad),
		Departamento: orDefault(c.Departamento, defaultDepartamento), Templates: c.Plantillas,
		PerMinute: c.LimitePorMinuto, PerHour: c.LimitePorHora, Resolucion: c.Resolucion, WebURL: c.WebURL,
		OmitIVAConstancia: c.ConstanciaIVAAlDia != nil && !*c.ConstanciaIVAAlDia}
	if err := c.footer(rec); err != nil {
		return nil, fmt.Errorf("company %s: %w", c.RUC, err)
	}
	cat, err := issuing.Catalog(rec.Templates)
	if err != nil {
		return nil, fmt.Errorf("company %s: %w", c.RUC, err)
	}
	if _, err := cat.Template(rec.FormatoRepImpresa); err != nil {
		return nil, fmt.Errorf("company %s: formatoRepImpresa: %w", c.RUC, err)
	}
	if err := data.PutCompany(sd.tx, rec); err != nil {
		return nil, err
	}
	return rec, data.PutPoint(sd.tx, data.NewIssuingPoint(rec.ID, defaultTerminal))
}

// footer reads c's Fecha emisor into rec and checks rec's footer data with
// the rules of the agent's profile, reporting every field in error.
func (c SeedCompany) footer(rec *data.Company) error {
	var fields []cfe.FieldError
	if c.FechaEmisor != "" {
		d, err := cfe.ParseDate(c.FechaEmisor)
		if err != nil {
			fields = append(fields, cfe.FieldError{Campo: "fechaEmisor", Mensaje: err.Error()})
		}
		rec.FechaEmisor = d
	}
	return web.Invalid(append(fields, cfe.CheckFooter(rec.FechaEmisor, rec.Resolucion, rec.WebURL)...)...)
}

// user adds u. ECONFLICT when the username exists.
func (sd seeder) user(u SeedUser) (*data.User, error) {
	if u.Username == "" || u.Password == "" {
		return nil, fmt.Errorf("user: username and password are required")
	}
	if _, err := data.UserByName(sd.tx, u.Username); err == nil {
		return nil, &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf("user %q exists", u.Username)}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), sd.cost)
	if err != nil {
		return nil, err
	}
	rec := &data.User{Username: strings.TrimSpace(u.Username), Email: u.Email, PasswordHash: hash, Companies: []int64{}}
	for _, ruc := range u.Empresas {
		id, ok := data.CompanyByRUC(sd.tx, ruc)
		if !ok {
			return nil, fmt.Errorf("user %q: no company with RUC %s", u.Username, ruc)
		}
		rec.Companies = append(rec.Companies, id)
	}
	return rec, data.PutUser(sd.tx, rec)
}

// key adds k. ECONFLICT when the same key exists.
func (sd seeder) key(k SeedKey, now func() time.Time) error {
	if !strings.HasPrefix(k.Key, sd.prefix) || len(k.Key) < len(sd.prefix)+16 {
		return fmt.Errorf("api key %q: must start with %s and have at least 16 more characters", k.Nombre, sd.prefix)
	}
	company, ok := data.CompanyByRUC(sd.tx, k.Empresa)
	if !ok {
		return fmt.Errorf("api key %q: no company with RUC %s", k.Nombre, k.Empresa)
	}
	return data.PutKey(sd.tx, &data.APIKey{Company: company, Nombre: k.Nombre, Descripcion: k.Descripcion,
		Hint: auth.KeyHint(k.Key, sd.prefix), Hash: auth.HashSecret(k.Key), Created: now().UTC(),
		PerMinute: k.LimitePorMinuto, PerHour: k.LimitePorHora})
}

// apply adds every entry of s, skipping those that already exist.
func (sd seeder) apply(s *Seed, now func() time.Time) error {
	for _, c := range s.Companies {
		if _, err := sd.company(c); skipConflict(err) != nil {
			return err
		}
	}
	for _, u := range s.Users {
		if _, err := sd.user(u); skipConflict(err) != nil {
			return err
		}
	}
	for _, k := range s.APIKeys {
		if err := sd.key(k, now); skipConflict(err) != nil {
			return err
		}
	}
	return nil
}

func skipConflict(err error) error {
	if cfe.ErrorCode(err) == cfe.ECONFLICT {
		return nil
	}
	return err
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
