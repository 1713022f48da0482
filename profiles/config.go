package profiles

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// FileName is the name of the configuration file inside the data directory.
const FileName = "config.yaml"

// DefaultListen is the local module's address when a profile names none.
const DefaultListen = "127.0.0.1:18787"

// Config is the content of config.yaml: named profiles and the active one.
// Profile names are lower case (see the package comment).
type Config struct {
	Active   string             `yaml:"active"`
	Profiles map[string]Profile `yaml:"profiles"`
}

// Environment says which hosted environment a profile works against. The two
// share nothing: not data, not credentials, not the local store.
type Environment string

// The two environments.
const (
	Produccion Environment = "produccion"
	Sandbox    Environment = "sandbox"
)

// Profile is everything one agent needs to work for one company in one
// environment.
type Profile struct {
	Environment  Environment  `yaml:"environment"`
	Company      Company      `yaml:"company"`
	IssuingPoint IssuingPoint `yaml:"issuing_point"`
	// Listen is the local module's address: an IP and a port, such as
	// 127.0.0.1:18787, a LAN address, or 0.0.0.0:18787 for every interface.
	Listen string `yaml:"listen"`
	LAN    LAN    `yaml:"lan"`
	// AllowedOrigins are the browser origins (scheme://host[:port]) that may
	// call the local module.
	AllowedOrigins []string           `yaml:"allowed_origins,omitempty"`
	Certificate    Certificate        `yaml:"certificate"`
	CAE            CAE                `yaml:"cae"`
	Tax            Tax                `yaml:"tax"`
	Printers       map[string]Printer `yaml:"printers,omitempty"`
	DefaultPrinter string             `yaml:"default_printer,omitempty"`
	Print          Print              `yaml:"print"`
	Hosted         Hosted             `yaml:"hosted"`
	Backup         Backup             `yaml:"backup,omitempty"`
	Archive        Archive            `yaml:"archive,omitempty"`
	// DGI says how CFEs reach DGI: through the hosted service (provider,
	// the default) or sent by the agent itself (direct); see dgi.go.
	DGI DGI `yaml:"dgi,omitempty"`
	// Caja configures the shop's own screens (/caja): the supervisor's PIN
	// for credit notes; see caja.go.
	Caja Caja `yaml:"caja,omitempty"`
}

// Company is the issuing company as DGI knows it; see Profile.Emisor.
type Company struct {
	RUC             string   `yaml:"ruc"`
	RazonSocial     string   `yaml:"razon_social"`
	NombreComercial string   `yaml:"nombre_comercial,omitempty"`
	Giro            string   `yaml:"giro,omitempty"`
	Telefonos       []string `yaml:"telefonos,omitempty"`
	Correo          string   `yaml:"correo,omitempty"`
	Sucursal        string   `yaml:"sucursal,omitempty"` // the branch's free name (EmiSucursal)
	CdgDGISucur     int      `yaml:"cdg_dgi_sucur"`      // the branch code registered at DGI
	DomicilioFiscal string   `yaml:"domicilio_fiscal"`
	Ciudad          string   `yaml:"ciudad"`
	Departamento    string   `yaml:"departamento"`
	// FechaEmisor is the date the company entered the CFE regime; the
	// printed footer says "Fecha emisor: dd/mm/aaaa". A company incorporated
	// by a DGI resolution gives Resolucion instead.
	FechaEmisor Date `yaml:"fecha_emisor,omitempty"`
	// Resolucion is the number and year of the resolution that incorporated
	// the company ("1234/2016"); the footer says "Res. 1234/2016".
	Resolucion string `yaml:"resolucion,omitempty"`
	// WebURL is the company's web site (http or https), where it publishes
	// its e-Tickets: their footer says "Puede verificar comprobante en" it.
	WebURL string `yaml:"web_url,omitempty"`
}

// Date is a civil date, written AAAA-MM-DD (YYYY-MM-DD) in config.yaml.
type Date struct{ cfe.Date }

// MarshalYAML writes d as YYYY-MM-DD.
func (d Date) MarshalYAML() (any, error) { return d.String(), nil }

// IssuingPoint is the hosted service's issuing point (punto de emisión) this
// agent acts as. The service's 0/1 flags are booleans here; RangosCAE holds the
// service's RangoCae<code> fields keyed by CFE type.
type IssuingPoint struct {
	IdPde                     int64              `yaml:"id_pde"`
	Empresa                   int64              `yaml:"empresa"`
	CodigoTerminal            string             `yaml:"codigo_terminal"`
	Sucursal                  int64              `yaml:"sucursal"`
	Deshabilitada             bool               `yaml:"deshabilitada,omitempty"`
	PuedeSolicitarCertificado bool               `yaml:"puede_solicitar_certificado,omitempty"`
	PuedeSolicitarClaveCert   bool               `yaml:"puede_solicitar_clave_cert,omitempty"`
	PuedeSolicitarRango       bool               `yaml:"puede_solicitar_rango,omitempty"`
	PuedeEnviarCfe            bool               `yaml:"puede_enviar_cfe,omitempty"`
	PuedeSolicitarFirma       bool               `yaml:"puede_solicitar_firma,omitempty"`
	PuedeAnularCfe            bool               `yaml:"puede_anular_cfe,omitempty"`
	RangosCAE                 map[cfe.Type]int64 `yaml:"rangos_cae,omitempty"`
	ActualizacionHabilitada   bool               `yaml:"actualizacion_habilitada,omitempty"`
	TipoActualizacionCliente  string             `yaml:"tipo_actualizacion_cliente,omitempty"`
	CodigoTerminalTransAct    string             `yaml:"codigo_terminal_trans_act,omitempty"`
	PosIdPosLink              string             `yaml:"pos_id_pos_link,omitempty"`
}

// LAN opens the local module to other machines. Callers that are not on
// loopback must present one of the per-terminal tokens.
type LAN struct {
	Enabled bool     `yaml:"enabled"`
	Tokens  []Secret `yaml:"tokens,omitempty"`
	// AllowedHosts are extra names accepted in the Host header, besides the
	// listen address and the loopback names.
	AllowedHosts []string `yaml:"allowed_hosts,omitempty"`
}

// Algorithm is the XML signature algorithm.
type Algorithm string

// The signature algorithms DGI accepts. DGI's own samples use RSA-SHA1.
const (
	RSASHA1   Algorithm = "rsa-sha1"
	RSASHA256 Algorithm = "rsa-sha256"
)

// Certificate is the company's signing certificate: a PKCS#12 file (.p12,
// .pfx) or a PEM certificate whose key is in KeyPath or in the same file.
type Certificate struct {
	Path      string    `yaml:"path"`
	Password  Secret    `yaml:"password,omitempty"`
	KeyPath   string    `yaml:"key_path,omitempty"`
	Algorithm Algorithm `yaml:"algorithm"`
}

// CAE lists DGI CAE files to import and when to warn about ranges running
// out. The ranges themselves live in the store.
type CAE struct {
	Files                []string `yaml:"files,omitempty"`
	WarnRemainingPct     int      `yaml:"warn_remaining_pct"`      // warn when this share of a range is left
	WarnDaysBeforeExpiry int      `yaml:"warn_days_before_expiry"` // warn this many days before a range expires
}

// Tax holds the values DGI's rules depend on that change by decree.
type Tax struct {
	IVATasaBasica decimal.Decimal `yaml:"iva_tasa_basica"` // percent
	IVATasaMin    decimal.Decimal `yaml:"iva_tasa_min"`    // percent
	// TopeUI is the net amount, in UI, above which an e-Ticket must identify
	// its receptor.
	TopeUI decimal.Decimal `yaml:"tope_ui"`
	// ValorUI is the value of one UI in pesos at the end of the previous year.
	ValorUI decimal.Decimal `yaml:"valor_ui"`
}

// Backend is the way a printer receives jobs.
type Backend string

// The printer backends.
const (
	BackendCUPS    Backend = "cups"    // CUPS over IPP
	BackendLP      Backend = "lp"      // the lp command
	BackendDir     Backend = "dir"     // PDF files written to a directory
	BackendWindows Backend = "windows" // SumatraPDF on Windows; the spooler's RAW datatype for escpos
	BackendTCP     Backend = "tcp"     // escpos: a network printer's raw port (9100)
	BackendDevice  Backend = "device"  // escpos: a device file (USB /dev/usb/lp0, serial /dev/ttyS0, COM3)
)

// Protocol is the language a printer is sent.
type Protocol string

// The protocols.
const (
	ProtocolPDF    Protocol = "pdf"    // the printed representation as a PDF (default)
	ProtocolESCPOS Protocol = "escpos" // raw ESC/POS for thermal receipt printers
)

// Printer is one named printer.
type Printer struct {
	Backend Backend `yaml:"backend"`
	// Protocol is pdf (default) or escpos; escpos printers take the
	// receipt as ESC/POS with ESCPOS's options (backends tcp, device, cups,
	// lp and windows).
	Protocol    Protocol `yaml:"protocol,omitempty"`
	Address     string   `yaml:"address,omitempty"`      // tcp: host[:port], port 9100 by default
	Device      string   `yaml:"device,omitempty"`       // device: the device file
	ESCPOS      ESCPOS   `yaml:"escpos,omitempty"`       // escpos: the printer's options
	Queue       string   `yaml:"queue,omitempty"`        // cups, lp and windows: the printer's queue or name
	Dir         string   `yaml:"dir,omitempty"`          // dir: where the PDFs go
	SumatraPath string   `yaml:"sumatra_path,omitempty"` // windows: SumatraPDF.exe, when not in its usual place
	Media       string   `yaml:"media,omitempty"`        // the media name the backend understands
	// Copies is the count of copies per CFE type; types not listed get
	// DefaultCopies, and 1 when that is 0 (printer.Manager.Copies decides).
	Copies        map[cfe.Type]int `yaml:"copies,omitempty"`
	DefaultCopies int              `yaml:"default_copies,omitempty"`
}

// ESCPOS are the options of an ESC/POS printer; zero values take the
// defaults in brackets.
type ESCPOS struct {
	PaperMM   int    `yaml:"paper_mm,omitempty"`   // 80 or 58 [80]
	Columns   int    `yaml:"columns,omitempty"`    // 48 or 42 on 80 mm, 32 on 58 mm [48, 32]
	CodePage  string `yaml:"code_page,omitempty"`  // cp858, cp850, cp437 or cp1252 [cp858]
	CodeTable int    `yaml:"code_table,omitempty"` // ESC t number of CodePage on this printer [Epson's]
	DPI       int    `yaml:"dpi,omitempty"`        // dot density, 150 to 600 [203]
	QR        string `yaml:"qr,omitempty"`         // native (GS ( k) or raster (image) [native]
	Cut       string `yaml:"cut,omitempty"`        // partial, full or none [partial]
	// DrawerKick opens the cash drawer after each receipt.
	DrawerKick bool `yaml:"drawer_kick,omitempty"`
	// Status asks the printer for paper and cover (DLE EOT) before and
	// after each job, over tcp and device [true on tcp, false on device:
	// many USB printers do not answer].
	Status *bool `yaml:"status,omitempty"`
}

// StatusQuery reports whether the printer's status is asked on backend b.
func (e ESCPOS) StatusQuery(b Backend) bool {
	if e.Status != nil {
		return *e.Status
	}
	return b == BackendTCP
}

// Format is a built-in layout of the printed representation.
type Format string

// The built-in layouts.
const (
	FormatEstandar Format = "Estandar" // A4
	FormatRollo    Format = "Rollo"    // 80 mm roll
	FormatRollo58  Format = "Rollo58"  // 58 mm roll
)

var formats = []Format{FormatEstandar, FormatRollo, FormatRollo58}

// Print configures the printed representation. Names are resolved, and the
// layout of each request chosen, where printing happens (pdf.Catalog and the
// printing package); Validate only checks that FormatoRepImpresa names one.
type Print struct {
	// FormatoRepImpresa is the layout used when a request names none: a
	// built-in Format or the name of a template.
	FormatoRepImpresa string              `yaml:"formato_rep_impresa"`
	Templates         map[string]Template `yaml:"templates,omitempty"`
	// ConstanciaIVAAlDia prints the "IVA al día" constancia in the footer
	// where DGI's rules allow it (the CFE does not say the emitter is not al
	// día, and the emitter is no monotributista). Default true.
	ConstanciaIVAAlDia bool `yaml:"constancia_iva_al_dia"`
}

// Template is a named custom layout: a built-in base with options.
type Template struct {
	Base     Format `yaml:"base"`
	Logo     string `yaml:"logo,omitempty"`      // PNG or JPEG printed in the header
	Leyenda  string `yaml:"leyenda,omitempty"`   // extra legend printed at the foot
	FontSize int    `yaml:"font_size,omitempty"` // body font size in points; 0 keeps the base's
}

// Hosted is the hosted service: its address and credentials. A profile with
// no BaseURL works offline only.
type Hosted struct {
	BaseURL  string        `yaml:"base_url,omitempty"`
	APIKey   Secret        `yaml:"api_key,omitempty"` // xx_test_… in sandbox, xx_live_… in produccion
	Username string        `yaml:"username,omitempty"`
	Secret   Secret        `yaml:"secret,omitempty"`
	Timeout  time.Duration `yaml:"timeout,omitempty"`
}

// Profile returns the profile called name (case-insensitive).
func (c *Config) Profile(name string) (Profile, bool) {
	p, ok := c.Profiles[strings.ToLower(name)]
	return p, ok
}

// ActiveProfile returns the active profile.
func (c *Config) ActiveProfile() (Profile, bool) { return c.Profile(c.Active) }

// StorePath returns the bbolt file of a profile: one per profile and
// environment, so that production and sandbox, or two profiles, never share a
// store. It returns "" when c has no such profile.
func (c *Config) StorePath(dataDir, profileName string) string {
	p, ok := c.Profile(profileName)
	if !ok {
		return ""
	}
	return filepath.Join(dataDir, "store", string(p.Environment), strings.ToLower(profileName)+".db")
}

// Emisor returns the company as the CFE's zone A emitter.
func (p Profile) Emisor() cfe.Emisor {
	c := p.Company
	return cfe.Emisor{
		RUCEmisor:    c.RUC,
		RznSoc:       c.RazonSocial,
		NomComercial: c.NombreComercial,
		GiroEmis:     c.Giro,
		Telefono:     slices.Clone(c.Telefonos),
		CorreoEmisor: c.Correo,
		EmiSucursal:  c.Sucursal,
		CdgDGISucur:  c.CdgDGISucur,
		DomFiscal:    c.DomicilioFiscal,
		Ciudad:       c.Ciudad,
		Departamento: c.Departamento,
	}
}

// Printer returns the printer called alias (case-insensitive). An empty alias
// means DefaultPrinter, or the only printer when there is just one.
func (p Profile) Printer(alias string) (Printer, bool) {
	if alias == "" {
		alias = p.DefaultPrinter
	}
	if alias == "" && len(p.Printers) == 1 {
		for _, pr := range p.Printers {
			return pr, true
		}
	}
	pr, ok := p.Printers[strings.ToLower(alias)]
	return pr, ok
}

// Resolve returns a copy of p whose relative paths (certificate, key, CAE
// files, printer directories, SumatraPDF, template logos) are made absolute
// against dataDir. p itself is not changed.
func (p Profile) Resolve(dataDir string) Profile {
	abs := func(path string) string {
		if path == "" || filepath.IsAbs(path) {
			return path
		}
		return filepath.Join(dataDir, path)
	}
	r := p.clone()
	r.Certificate.Path = abs(r.Certificate.Path)
	r.Certificate.KeyPath = abs(r.Certificate.KeyPath)
	for i, f := range r.CAE.Files {
		r.CAE.Files[i] = abs(f)
	}
	for alias, pr := range r.Printers {
		pr.Dir = abs(pr.Dir)
		pr.SumatraPath = abs(pr.SumatraPath)
		r.Printers[alias] = pr
	}
	r.Backup.Folder = abs(r.Backup.Folder)
	for name, t := range r.Print.Templates {
		t.Logo = abs(t.Logo)
		r.Print.Templates[name] = t
	}
	return r
}

// clone returns a deep copy of p: no slice or map is shared with p.
func (p Profile) clone() Profile {
	r := p
	r.Company.Telefonos = slices.Clone(p.Company.Telefonos)
	r.IssuingPoint.RangosCAE = maps.Clone(p.IssuingPoint.RangosCAE)
	r.LAN.Tokens = slices.Clone(p.LAN.Tokens)
	r.LAN.AllowedHosts = slices.Clone(p.LAN.AllowedHosts)
	r.AllowedOrigins = slices.Clone(p.AllowedOrigins)
	r.CAE.Files = slices.Clone(p.CAE.Files)
	r.Printers = maps.Clone(p.Printers)
	for alias, pr := range r.Printers {
		pr.Copies = maps.Clone(pr.Copies)
		if pr.ESCPOS.Status != nil {
			status := *pr.ESCPOS.Status
			pr.ESCPOS.Status = &status
		}
		r.Printers[alias] = pr
	}
	r.Print.Templates = maps.Clone(p.Print.Templates)
	return r
}

// clone returns a deep copy of c.
func (c *Config) clone() *Config {
	r := &Config{Active: c.Active, Profiles: make(map[string]Profile, len(c.Profiles))}
	for name, p := range c.Profiles {
		r.Profiles[name] = p.clone()
	}
	return r
}
