package profiles

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestConfig_Validate_valid(t *testing.T) {
	t.Parallel()
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("validConfig: %v", err)
	}
}

// formato_rep_impresa names a built-in format or a template of the profile,
// in any case, as pdf.Catalog resolves it.
func TestConfig_Validate_printFormat(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Estandar", "estandar", "ROLLO58", "ticket", "Ticket"} {
		c := validConfig()
		p := c.Profiles["caja1"]
		p.Print.FormatoRepImpresa = name
		c.Profiles["caja1"] = p
		if err := c.Validate(); err != nil {
			t.Errorf("formato_rep_impresa %q: %v", name, err)
		}
	}
}

// TestConfig_Validate_invalid breaks one rule at a time in a valid
// configuration and checks that exactly the broken field is named.
func TestConfig_Validate_invalid(t *testing.T) {
	t.Parallel()
	const c1, pr = "profiles.caja1.", "profiles.pruebas."
	// caja1 edits the production profile; pruebas the sandbox one.
	caja1 := func(f func(p *Profile)) func(*Config) {
		return func(c *Config) { p := c.Profiles["caja1"]; f(&p); c.Profiles["caja1"] = p }
	}
	pruebas := func(f func(p *Profile)) func(*Config) {
		return func(c *Config) { p := c.Profiles["pruebas"]; f(&p); c.Profiles["pruebas"] = p }
	}
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"no profiles", func(c *Config) { c.Profiles = nil }, "profiles"},
		{"no active profile", func(c *Config) { c.Active = "" }, "active"},
		{"unknown active profile", func(c *Config) { c.Active = "caja9" }, "active"},
		{"profile name with a space", func(c *Config) { c.Profiles["caja 2"] = c.Profiles["pruebas"] }, "profiles.caja 2"},
		{"profile name in upper case", func(c *Config) { c.Profiles["Caja2"] = c.Profiles["pruebas"] }, "profiles.Caja2"},

		{"unknown environment", caja1(func(p *Profile) { p.Environment = "prod" }), c1 + "environment"},

		{"RUC check digit", caja1(func(p *Profile) { p.Company.RUC = "214844360017" }), c1 + "company.ruc"},
		{"RUC of 11 digits", caja1(func(p *Profile) { p.Company.RUC = "21484436001" }), c1 + "company.ruc"},
		{"RUC with a letter", caja1(func(p *Profile) { p.Company.RUC = "21484436001X" }), c1 + "company.ruc"},
		{"razon social missing", caja1(func(p *Profile) { p.Company.RazonSocial = "  " }), c1 + "company.razon_social"},
		{"razon social with a control character", caja1(func(p *Profile) { p.Company.RazonSocial = "La Esquina\x00" }), c1 + "company.razon_social"},
		{"phone over 20", caja1(func(p *Profile) { p.Company.Telefonos[0] = strings.Repeat("9", 21) }), c1 + "company.telefonos[0]"},
		{"nombre comercial over 30", caja1(func(p *Profile) { p.Company.NombreComercial = strings.Repeat("ñ", 31) }), c1 + "company.nombre_comercial"},
		{"giro over 60", caja1(func(p *Profile) { p.Company.Giro = strings.Repeat("g", 61) }), c1 + "company.giro"},
		{"three phones", caja1(func(p *Profile) { p.Company.Telefonos = []string{"1", "2", "3"} }), c1 + "company.telefonos"},
		{"empty phone", caja1(func(p *Profile) { p.Company.Telefonos = []string{"29001234", ""} }), c1 + "company.telefonos[1]"},
		{"bad e-mail", caja1(func(p *Profile) { p.Company.Correo = "ventas.laesquina" }), c1 + "company.correo"},
		{"DGI branch code 0", caja1(func(p *Profile) { p.Company.CdgDGISucur = 0 }), c1 + "company.cdg_dgi_sucur"},
		{"DGI branch code of 5 digits", caja1(func(p *Profile) { p.Company.CdgDGISucur = 10000 }), c1 + "company.cdg_dgi_sucur"},
		{"domicilio missing", caja1(func(p *Profile) { p.Company.DomicilioFiscal = "" }), c1 + "company.domicilio_fiscal"},
		{"ciudad over 30", caja1(func(p *Profile) { p.Company.Ciudad = strings.Repeat("c", 31) }), c1 + "company.ciudad"},
		{"departamento missing", caja1(func(p *Profile) { p.Company.Departamento = "" }), c1 + "company.departamento"},
		{"fecha emisor before 2000", caja1(func(p *Profile) { p.Company.FechaEmisor.Year = 1012 }), c1 + "company.fecha_emisor"},
		{"resolution and fecha emisor", pruebas(func(p *Profile) { p.Company.FechaEmisor = Date{cfe.Date{Year: 2016, Month: 5, Day: 2}} }), pr + "company.resolucion"},
		{"resolution with Res.", pruebas(func(p *Profile) { p.Company.Resolucion = "Res. 1234/2016" }), pr + "company.resolucion"},
		{"resolution without year", pruebas(func(p *Profile) { p.Company.Resolucion = "1234" }), pr + "company.resolucion"},
		{"resolution with a two-digit year", pruebas(func(p *Profile) { p.Company.Resolucion = "1234/16" }), pr + "company.resolucion"},
		{"resolution with a dash", pruebas(func(p *Profile) { p.Company.Resolucion = "1234-2016" }), pr + "company.resolucion"},
		{"resolution number 0", pruebas(func(p *Profile) { p.Company.Resolucion = "0/2016" }), pr + "company.resolucion"},
		{"web URL without scheme", caja1(func(p *Profile) { p.Company.WebURL = "www.laesquina.com.uy" }), c1 + "company.web_url"},
		{"web URL over FTP", caja1(func(p *Profile) { p.Company.WebURL = "ftp://www.laesquina.com.uy" }), c1 + "company.web_url"},
		{"web URL without host", caja1(func(p *Profile) { p.Company.WebURL = "https:///comprobantes" }), c1 + "company.web_url"},
		{"web URL with a password", caja1(func(p *Profile) { p.Company.WebURL = "https://ana:clave@laesquina.com.uy" }), c1 + "company.web_url"},
		{"web URL with a space", caja1(func(p *Profile) { p.Company.WebURL = "https://laesquina.com.uy/mis tickets" }), c1 + "company.web_url"},
		{"web URL over 120", caja1(func(p *Profile) { p.Company.WebURL = "https://laesquina.com.uy/" + strings.Repeat("a", 100) }), c1 + "company.web_url"},

		{"negative id_pde", caja1(func(p *Profile) { p.IssuingPoint.IdPde = -1 }), c1 + "issuing_point.id_pde"},
		{"CAE range of a contingency type", caja1(func(p *Profile) { p.IssuingPoint.RangosCAE[201] = 3 }), c1 + "issuing_point.rangos_cae[201]"},

		{"listen on a host name", caja1(func(p *Profile) { p.Listen = "localhost:18787" }), c1 + "listen"},
		{"listen without port", caja1(func(p *Profile) { p.Listen = "127.0.0.1" }), c1 + "listen"},
		{"listen on all interfaces without LAN mode", pruebas(func(p *Profile) { p.Listen = "0.0.0.0:18787" }), pr + "listen"},
		{"LAN mode without tokens", caja1(func(p *Profile) { p.LAN.Tokens = nil }), c1 + "lan.tokens"},
		{"short LAN token", caja1(func(p *Profile) { p.LAN.Tokens[1] = "corto" }), c1 + "lan.tokens[1]"},
		{"repeated LAN token", caja1(func(p *Profile) { p.LAN.Tokens[1] = p.LAN.Tokens[0] }), c1 + "lan.tokens[1]"},
		{"LAN token with a comma", caja1(func(p *Profile) { p.LAN.Tokens[0] = "token,caja-uno-0123456789" }), c1 + "lan.tokens[0]"},
		{"allowed host with scheme", caja1(func(p *Profile) { p.LAN.AllowedHosts = []string{"http://caja1.local"} }), c1 + "lan.allowed_hosts[0]"},
		{"allowed origin *", caja1(func(p *Profile) { p.AllowedOrigins = []string{"*"} }), c1 + "allowed_origins[0]"},
		{"allowed origin with a path", caja1(func(p *Profile) { p.AllowedOrigins[1] = "https://pos.example/app" }), c1 + "allowed_origins[1]"},
		{"allowed origin without scheme", caja1(func(p *Profile) { p.AllowedOrigins[0] = "localhost:3000" }), c1 + "allowed_origins[0]"},

		{"no certificate", caja1(func(p *Profile) { p.Certificate.Path = "" }), c1 + "certificate.path"},
		{"certificate of unknown kind", caja1(func(p *Profile) { p.Certificate.Path = "certs/empresa.txt" }), c1 + "certificate.path"},
		{"key path beside a .p12", caja1(func(p *Profile) { p.Certificate.KeyPath = "certs/key.pem" }), c1 + "certificate.key_path"},
		{"unknown algorithm", caja1(func(p *Profile) { p.Certificate.Algorithm = "rsa-md5" }), c1 + "certificate.algorithm"},

		{"CAE file not XML", caja1(func(p *Profile) { p.CAE.Files = []string{"cae/101.txt"} }), c1 + "cae.files[0]"},
		{"warn percentage over 100", caja1(func(p *Profile) { p.CAE.WarnRemainingPct = 101 }), c1 + "cae.warn_remaining_pct"},
		{"negative warn days", caja1(func(p *Profile) { p.CAE.WarnDaysBeforeExpiry = -1 }), c1 + "cae.warn_days_before_expiry"},

		{"zero basic rate", caja1(func(p *Profile) { p.Tax.IVATasaBasica = decimal.Zero }), c1 + "tax.iva_tasa_basica"},
		{"rate of 100", caja1(func(p *Profile) { p.Tax.IVATasaBasica = decimal.NewFromInt(100) }), c1 + "tax.iva_tasa_basica"},
		{"rate with 4 decimals", caja1(func(p *Profile) { p.Tax.IVATasaMin = decimal.RequireFromString("10.0001") }), c1 + "tax.iva_tasa_min"},
		{"minimum rate above basic", caja1(func(p *Profile) { p.Tax.IVATasaMin = decimal.NewFromInt(23) }), c1 + "tax.iva_tasa_min"},
		{"tope with decimals", caja1(func(p *Profile) { p.Tax.TopeUI = decimal.RequireFromString("5000.5") }), c1 + "tax.tope_ui"},
		{"no UI value", caja1(func(p *Profile) { p.Tax.ValorUI = decimal.Zero }), c1 + "tax.valor_ui"},
		{"UI value with 5 decimals", caja1(func(p *Profile) { p.Tax.ValorUI = decimal.RequireFromString("6.12345") }), c1 + "tax.valor_ui"},

		{"unknown printer backend", caja1(func(p *Profile) { p.Printers["archivo"] = Printer{Backend: "usb", Dir: "x"} }), c1 + "printers.archivo.backend"},
		{"CUPS printer without queue", caja1(func(p *Profile) { p.Printers["mostrador"] = Printer{Backend: BackendCUPS} }), c1 + "printers.mostrador.queue"},
		{"directory printer without dir", caja1(func(p *Profile) { p.Printers["archivo"] = Printer{Backend: BackendDir} }), c1 + "printers.archivo.dir"},
		{"SumatraPDF on CUPS", caja1(func(p *Profile) {
			p.Printers["mostrador"] = Printer{Backend: BackendCUPS, Queue: "Q", SumatraPath: "C:/SumatraPDF.exe"}
		}), c1 + "printers.mostrador.sumatra_path"},
		{"copies of an unknown type", caja1(func(p *Profile) { p.Printers["mostrador"].Copies[999] = 1 }), c1 + "printers.mostrador.copies[999]"},
		{"zero copies", caja1(func(p *Profile) { p.Printers["mostrador"].Copies[cfe.EFactura] = 0 }), c1 + "printers.mostrador.copies[111]"},
		{"printer alias with a dot", caja1(func(p *Profile) { p.Printers["caja.1"] = Printer{Backend: BackendDir, Dir: "x"} }), c1 + "printers.caja.1"},
		{"unknown default printer", caja1(func(p *Profile) { p.DefaultPrinter = "cocina" }), c1 + "default_printer"},

		{"unknown print format", caja1(func(p *Profile) { p.Print.FormatoRepImpresa = "Carta" }), c1 + "print.formato_rep_impresa"},
		{"no print format", caja1(func(p *Profile) { p.Print.FormatoRepImpresa = "" }), c1 + "print.formato_rep_impresa"},
		{"template of unknown base", caja1(func(p *Profile) {
			p.Print.Templates["ticket"] = Template{Base: "A5"}
		}), c1 + "print.templates.ticket.base"},
		{"template named like a format", caja1(func(p *Profile) {
			p.Print.Templates["rollo"] = Template{Base: FormatRollo}
		}), c1 + "print.templates.rollo"},
		{"template logo not an image", caja1(func(p *Profile) {
			p.Print.Templates["ticket"] = Template{Base: FormatRollo, Logo: "logo.pdf"}
		}), c1 + "print.templates.ticket.logo"},
		{"template font too large", caja1(func(p *Profile) {
			p.Print.Templates["ticket"] = Template{Base: FormatRollo, FontSize: 30}
		}), c1 + "print.templates.ticket.font_size"},

		{"hosted URL without scheme", caja1(func(p *Profile) { p.Hosted.BaseURL = "api.servicio.example" }), c1 + "hosted.base_url"},
		{"plain HTTP in production", caja1(func(p *Profile) { p.Hosted.BaseURL = "http://api.servicio.example" }), c1 + "hosted.base_url"},
		{"test key in production", caja1(func(p *Profile) { p.Hosted.APIKey = secretTestKey }), c1 + "hosted.api_key"},
		{"live key in sandbox", pruebas(func(p *Profile) { p.Hosted.APIKey = secretLiveKey }), pr + "hosted.api_key"},
		{"bare key prefix", pruebas(func(p *Profile) { p.Hosted.APIKey = Secret(apiKeyPrefixes[Sandbox]) }), pr + "hosted.api_key"},
		{"credentials without URL", pruebas(func(p *Profile) { p.Hosted.BaseURL = "" }), pr + "hosted.base_url"},
		{"username without secret", caja1(func(p *Profile) { p.Hosted.Secret = "" }), c1 + "hosted.secret"},
		{"secret without username", caja1(func(p *Profile) { p.Hosted.Username = "" }), c1 + "hosted.username"},
		{"no timeout", caja1(func(p *Profile) { p.Hosted.Timeout = 0 }), c1 + "hosted.timeout"},
		{"timeout of an hour", caja1(func(p *Profile) { p.Hosted.Timeout = time.Hour }), c1 + "hosted.timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig()
			tt.edit(cfg)
			e := wantInvalid(t, cfg.Validate(), tt.field)
			if e.Op != "profiles.Validate" {
				t.Errorf("Op = %q", e.Op)
			}
			// One broken rule: the message names the field and the rule.
			if !strings.HasPrefix(e.Message, tt.field+": ") {
				t.Errorf("Message = %q, want it to start with the field", e.Message)
			}
			for _, s := range allSecrets {
				if strings.Contains(e.Error(), s) {
					t.Errorf("error %q shows a secret", e.Error())
				}
			}
		})
	}
}

func TestConfig_Validate_collectsEveryError(t *testing.T) {
	t.Parallel()
	cfg := validConfig()
	p := cfg.Profiles["pruebas"]
	p.Environment = "test"
	p.Company.RUC = ""
	p.Listen = "x"
	cfg.Profiles["pruebas"] = p
	e := wantInvalid(t, cfg.Validate(),
		"profiles.pruebas.environment", "profiles.pruebas.company.ruc", "profiles.pruebas.listen")
	if e.Message != "la configuración tiene 3 errores" {
		t.Errorf("Message = %q", e.Message)
	}
}
