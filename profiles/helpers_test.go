package profiles

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Secrets of validConfig, distinctive so that a leak is easy to find.
const (
	secretCertPassword = "clave-del-p12-Zx81"
	secretLiveKey      = "xx_live_4f0a9c2e7b11d3aa"
	secretTestKey      = "xx_test_9e8d7c6b5a493827"
	secretHosted       = "contrasena-del-servicio-Qw7"
	secretToken1       = "qn63-g4qp-qfm9-nps3-zwrz-117y-jea6"
	secretToken2       = "a8sx-bhhe-jskv-5w64-8kb1-3ag6-yb99"
)

var allSecrets = []string{secretCertPassword, secretLiveKey, secretTestKey, secretHosted, secretToken1, secretToken2}

// validConfig returns a complete, valid configuration: a production profile
// "caja1" (active, LAN mode, every section filled in) and a sandbox profile
// "pruebas".
func validConfig() *Config {
	caja1 := Profile{
		Environment: Produccion,
		Company: Company{
			RUC:             "214844360018", // DGI's own RUC: a real check digit
			RazonSocial:     "ALMACÉN LA ESQUINA S.R.L.",
			NombreComercial: "La Esquina",
			Giro:            "Venta al por menor",
			Telefonos:       []string{"29001234", "099123456"},
			Correo:          "ventas@laesquina.com.uy",
			Sucursal:        "Centro",
			CdgDGISucur:     2,
			DomicilioFiscal: "Rincón 500",
			Ciudad:          "Montevideo",
			Departamento:    "Montevideo",
			FechaEmisor:     Date{cfe.Date{Year: 2012, Month: time.October, Day: 1}},
			WebURL:          "https://www.laesquina.com.uy/comprobantes",
		},
		IssuingPoint: IssuingPoint{
			IdPde: 17, Empresa: 4, CodigoTerminal: "CAJA1", Sucursal: 2,
			PuedeEnviarCfe: true, PuedeSolicitarFirma: true,
			RangosCAE: map[cfe.Type]int64{cfe.ETicket: 31, cfe.EFactura: 32},
		},
		Listen: "0.0.0.0:18787",
		LAN: LAN{
			Enabled:      true,
			Tokens:       []Secret{secretToken1, secretToken2},
			AllowedHosts: []string{"caja1.local", "192.168.1.20"},
		},
		AllowedOrigins: []string{"http://localhost:3000", "https://pos.laesquina.com.uy"},
		Certificate:    Certificate{Path: "certs/empresa.p12", Password: secretCertPassword, Algorithm: RSASHA1},
		CAE:            CAE{Files: []string{"cae/101.xml"}, WarnRemainingPct: 15, WarnDaysBeforeExpiry: 20},
		Tax: Tax{
			IVATasaBasica: decimal.RequireFromString("22"),
			IVATasaMin:    decimal.RequireFromString("10"),
			TopeUI:        decimal.RequireFromString("5000"),
			ValorUI:       decimal.RequireFromString("6.1234"),
		},
		Printers: map[string]Printer{
			"mostrador": {Backend: BackendCUPS, Queue: "EPSON_TM_T20", Media: "roll-80",
				Copies: map[cfe.Type]int{cfe.EFactura: 2}, DefaultCopies: 1},
			"archivo": {Backend: BackendDir, Dir: "impresiones"},
		},
		DefaultPrinter: "mostrador",
		Print: Print{
			FormatoRepImpresa:  "ticket",
			ConstanciaIVAAlDia: true,
			Templates: map[string]Template{
				"ticket": {Base: FormatRollo, Logo: "logo.png", Leyenda: "Gracias por su compra", FontSize: 8},
			},
		},
		Hosted: Hosted{
			BaseURL:  "https://api.servicio.example",
			APIKey:   secretLiveKey,
			Username: "caja1@laesquina",
			Secret:   secretHosted,
			Timeout:  20 * time.Second,
		},
	}
	pruebas := caja1.clone()
	pruebas.Environment = Sandbox
	pruebas.Company.RUC = "219999830019"
	pruebas.Company.FechaEmisor, pruebas.Company.Resolucion = Date{}, "1234/2016"
	pruebas.Listen = DefaultListen
	pruebas.LAN = LAN{}
	pruebas.AllowedOrigins = nil
	pruebas.Certificate = Certificate{Path: "certs/sandbox.p12", Algorithm: RSASHA256}
	pruebas.Hosted = Hosted{BaseURL: "http://127.0.0.1:18788", APIKey: secretTestKey, Timeout: 30 * time.Second}
	return &Config{Active: "caja1", Profiles: map[string]Profile{"caja1": caja1, "pruebas": pruebas}}
}

// clearEnv unsets every variable the package reads, for the test's duration:
// an empty variable overrides nothing.
func clearEnv(t *testing.T) {
	t.Helper()
	t.Setenv(EnvProfile, "")
	t.Setenv(EnvDataDir, "")
	for _, o := range envOverrides {
		t.Setenv(EnvPrefix+o.name, "")
	}
}

// writeConfig writes text as dir/config.yaml.
func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readConfig returns the bytes of dir/config.yaml.
func readConfig(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantInvalid checks that err is an EINVALID *cfe.Error whose fields are
// exactly the given ones (in any order).
func wantInvalid(t *testing.T, err error, fields ...string) *cfe.Error {
	t.Helper()
	var e *cfe.Error
	if !errors.As(err, &e) || e.Code != cfe.EINVALID {
		t.Fatalf("error = %v, want an EINVALID *cfe.Error", err)
	}
	var got []string
	for _, f := range e.Fields {
		got = append(got, f.Campo)
		if f.Mensaje == "" {
			t.Errorf("field %s has no message", f.Campo)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(fields))
	if !slices.Equal(got, want) {
		t.Fatalf("invalid fields = %q, want %q (error: %v)", got, want, err)
	}
	return e
}
