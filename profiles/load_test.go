package profiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// useFixture copies testdata/name to a new data directory as config.yaml.
func useFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeConfig(t, dir, string(b))
	return dir
}

func mustLoad(t *testing.T, dir string) *Config {
	t.Helper()
	cfg, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_fixture(t *testing.T) {
	clearEnv(t)
	cfg := mustLoad(t, useFixture(t, "two-profiles.yaml"))
	if cfg.Active != "caja1" || len(cfg.Profiles) != 2 {
		t.Fatalf("Active = %q, %d profiles", cfg.Active, len(cfg.Profiles))
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		t.Fatal("no active profile")
	}
	if p.Environment != Produccion || p.Company.RUC != "214844360018" || p.Company.RazonSocial != "ALMACÉN LA ESQUINA S.R.L." {
		t.Errorf("company = %+v", p.Company)
	}
	// YAML numbers where text is expected are read as text.
	if !slices.Equal(p.Company.Telefonos, []string{"29001234"}) {
		t.Errorf("Telefonos = %q", p.Company.Telefonos)
	}
	// The service's 0/1 flags read as booleans; type codes as map keys.
	ip := p.IssuingPoint
	if ip.IdPde != 17 || !ip.PuedeEnviarCfe || ip.PuedeAnularCfe || ip.RangosCAE[cfe.ETicket] != 31 || ip.RangosCAE[cfe.EFactura] != 32 {
		t.Errorf("IssuingPoint = %+v", ip)
	}
	if got := p.Printers["mostrador"].Copies[cfe.EFactura]; got != 2 {
		t.Errorf("copies of 111 = %d, want 2", got)
	}
	// An unquoted YAML decimal keeps the digits that were written.
	if got := p.Tax.ValorUI.String(); got != "6.1234" {
		t.Errorf("ValorUI = %s, want 6.1234", got)
	}
	// The footer's data: an unquoted YAML date reads as that civil date.
	if p.Company.WebURL != "https://www.laesquina.com.uy/tickets" || p.Print.ConstanciaIVAAlDia {
		t.Errorf("caja1 web_url = %q, constancia_iva_al_dia = %v", p.Company.WebURL, p.Print.ConstanciaIVAAlDia)
	}
	if got := cfg.Profiles["pruebas"].Company.FechaEmisor.Date; got != (cfe.Date{Year: 2012, Month: time.October, Day: 1}) {
		t.Errorf("pruebas fecha_emisor = %v, want 2012-10-01", got)
	}
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_defaults(t *testing.T) {
	clearEnv(t)
	cfg := mustLoad(t, useFixture(t, "two-profiles.yaml"))
	p := cfg.Profiles["pruebas"] // leaves out every key that has a default
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen", p.Listen, DefaultListen},
		{"certificate.algorithm", p.Certificate.Algorithm, RSASHA1},
		{"cae.warn_remaining_pct", p.CAE.WarnRemainingPct, 10},
		{"cae.warn_days_before_expiry", p.CAE.WarnDaysBeforeExpiry, 30},
		{"tax.iva_tasa_basica", p.Tax.IVATasaBasica.String(), "22"},
		{"tax.iva_tasa_min", p.Tax.IVATasaMin.String(), "10"},
		{"tax.tope_ui", p.Tax.TopeUI.String(), "5000"},
		{"print.formato_rep_impresa", p.Print.FormatoRepImpresa, "Estandar"},
		{"print.constancia_iva_al_dia", p.Print.ConstanciaIVAAlDia, true},
		{"hosted.timeout", p.Hosted.Timeout, 30 * time.Second},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want the default %v", c.name, c.got, c.want)
		}
	}
	// A value written in the file wins over the default, even 0.
	if got := cfg.Profiles["caja1"].CAE.WarnRemainingPct; got != 0 {
		t.Errorf("explicit warn_remaining_pct: 0 read as %d", got)
	}
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_namesAreCaseInsensitive(t *testing.T) {
	clearEnv(t)
	dir := useFixture(t, "two-profiles.yaml")
	text := strings.Replace(string(readConfig(t, dir)), "active: caja1", "active: CAJA1", 1)
	text = strings.Replace(text, "  caja1:", "  Caja1:", 1)
	text = strings.Replace(text, "      mostrador:", "      Mostrador:", 1)
	writeConfig(t, dir, text)
	cfg := mustLoad(t, dir)
	if cfg.Active != "caja1" {
		t.Errorf("Active = %q, want caja1", cfg.Active)
	}
	p, ok := cfg.Profile("CaJa1")
	if !ok {
		t.Fatal(`Profile("CaJa1") not found`)
	}
	if _, ok := p.Printer("MOSTRADOR"); !ok {
		t.Error(`Printer("MOSTRADOR") not found`)
	}
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_errors(t *testing.T) {
	clearEnv(t)
	fixture, err := os.ReadFile(filepath.Join("testdata", "two-profiles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// edit replaces old with new in the fixture, failing if old is absent.
	edit := func(old, new string) string {
		if !strings.Contains(string(fixture), old) {
			t.Fatalf("fixture has no %q", old)
		}
		return strings.Replace(string(fixture), old, new, 1)
	}
	tests := []struct {
		name   string
		text   string
		fields []string
	}{
		{"not YAML", "active: [caja1\nprofiles: {", []string{FileName}},
		{"unknown key", edit("    environment: produccion", "    environment: produccion\n    lsten: 127.0.0.1:1"),
			[]string{"profiles.caja1.lsten"}},
		{"misspelt nested key", edit("      razon_social: ALMACÉN", "      razon_socal: ALMACÉN"),
			[]string{"profiles.caja1.company.razon_socal", "profiles.caja1.company.razon_social"}},
		{"text for an integer", edit("cdg_dgi_sucur: 2", "cdg_dgi_sucur: dos"), []string{"profiles.caja1.company.cdg_dgi_sucur"}},
		{"text for a decimal", edit("valor_ui: 6.1234", "valor_ui: seis"), []string{"profiles.caja1.tax.valor_ui"}},
		{"text for a boolean", edit("puede_enviar_cfe: 1", "puede_enviar_cfe: tal vez"), []string{"profiles.caja1.issuing_point.puede_enviar_cfe"}},
		{"text for a type code", edit("        111: 2", "        factura: 2"), []string{"profiles.caja1.printers.mostrador.copies.factura"}},
		{"text for copies", edit("        111: 2", "        111: dos"), []string{"profiles.caja1.printers.mostrador.copies[111]"}},
		{"bad duration", edit("      base_url: https://api.servicio.example", "      base_url: https://api.servicio.example\n      timeout: pronto"),
			[]string{"profiles.caja1.hosted.timeout"}},
		{"rule broken", edit(`ruc: "214844360018"`, `ruc: "214844360017"`), []string{"profiles.caja1.company.ruc"}},
		{"date in another format", edit("      ciudad: Montevideo\n", "      ciudad: Montevideo\n      fecha_emisor: 01/10/2012\n"),
			[]string{"profiles.caja1.company.fecha_emisor"}},
		{"date that does not exist", edit("      ciudad: Montevideo\n", "      ciudad: Montevideo\n      fecha_emisor: 2012-02-30\n"),
			[]string{"profiles.caja1.company.fecha_emisor"}},
		{"unquoted resolution (a YAML number)", edit("      ciudad: Montevideo\n", "      ciudad: Montevideo\n      resolucion: 1234\n"),
			[]string{"profiles.caja1.company.resolucion"}},
		{"unknown active profile", edit("active: caja1", "active: caja9"), []string{"active"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeConfig(t, dir, tt.text)
			_, err := Load(dir)
			e := wantInvalid(t, err, tt.fields...)
			if e.Op != "profiles.Load" {
				t.Errorf("Op = %q", e.Op)
			}
		})
	}

	t.Run("syntax error names the line", func(t *testing.T) {
		dir := t.TempDir()
		writeConfig(t, dir, "active: caja1\nprofiles:\n  caja1: [\n")
		_, err := Load(dir)
		if msg := cfe.ErrorMessage(err); !strings.Contains(msg, "línea") {
			t.Errorf("message %q does not name the line", msg)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := Load(t.TempDir())
		if cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Errorf("error = %v, want ENOTFOUND", err)
		}
	})
}

// TestLoad_env sets each documented variable and checks the field it
// overrides in the active profile, and that the other profile is untouched.
// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_env(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, p Profile)
	}{
		{"environment", map[string]string{"CFE_AGENT_ENVIRONMENT": "sandbox"}, func(t *testing.T, p Profile) {
			if p.Environment != Sandbox {
				t.Errorf("Environment = %q", p.Environment)
			}
		}},
		{"listen", map[string]string{"CFE_AGENT_LISTEN": "127.0.0.2:9000"}, func(t *testing.T, p Profile) {
			if p.Listen != "127.0.0.2:9000" {
				t.Errorf("Listen = %q", p.Listen)
			}
		}},
		{"LAN mode", map[string]string{
			"CFE_AGENT_LISTEN":      "0.0.0.0:18787",
			"CFE_AGENT_LAN_ENABLED": "true",
			"CFE_AGENT_LAN_TOKENS":  secretToken1 + ", " + secretToken2,
		}, func(t *testing.T, p Profile) {
			if !p.LAN.Enabled || !slices.Equal(p.LAN.Tokens, []Secret{secretToken1, secretToken2}) || p.Listen != "0.0.0.0:18787" {
				t.Errorf("LAN = %+v, listen %q", p.LAN, p.Listen)
			}
		}},
		{"certificate", map[string]string{
			"CFE_AGENT_CERTIFICATE_PATH":     "/etc/cfe-agent/empresa.pfx",
			"CFE_AGENT_CERTIFICATE_PASSWORD": secretCertPassword,
		}, func(t *testing.T, p Profile) {
			if p.Certificate.Path != "/etc/cfe-agent/empresa.pfx" || p.Certificate.Password.Value() != secretCertPassword {
				t.Errorf("Certificate = %q, password set %v", p.Certificate.Path, p.Certificate.Password != "")
			}
		}},
		{"footer with Fecha emisor", map[string]string{
			"CFE_AGENT_COMPANY_FECHA_EMISOR":        "2015-03-02",
			"CFE_AGENT_COMPANY_WEB_URL":             "https://laesquina.com.uy/cfe",
			"CFE_AGENT_PRINT_CONSTANCIA_IVA_AL_DIA": "true",
		}, func(t *testing.T, p Profile) {
			c := p.Company
			if c.FechaEmisor.Date != (cfe.Date{Year: 2015, Month: time.March, Day: 2}) || c.WebURL != "https://laesquina.com.uy/cfe" ||
				!p.Print.ConstanciaIVAAlDia {
				t.Errorf("fecha_emisor %v, web_url %q, constancia_iva_al_dia %v", c.FechaEmisor, c.WebURL, p.Print.ConstanciaIVAAlDia)
			}
		}},
		{"footer with a resolution", map[string]string{"CFE_AGENT_COMPANY_RESOLUCION": "798/2012"}, func(t *testing.T, p Profile) {
			if p.Company.Resolucion != "798/2012" || !p.Company.FechaEmisor.IsZero() {
				t.Errorf("resolucion %q, fecha_emisor %v", p.Company.Resolucion, p.Company.FechaEmisor)
			}
		}},
		{"default printer", map[string]string{"CFE_AGENT_DEFAULT_PRINTER": "archivo"}, func(t *testing.T, p Profile) {
			if pr, _ := p.Printer(""); p.DefaultPrinter != "archivo" || pr.Backend != BackendDir {
				t.Errorf("DefaultPrinter = %q", p.DefaultPrinter)
			}
		}},
		{"hosted", map[string]string{
			"CFE_AGENT_HOSTED_URL":      "https://otro.servicio.example",
			"CFE_AGENT_HOSTED_API_KEY":  secretLiveKey,
			"CFE_AGENT_HOSTED_USERNAME": "caja1@laesquina",
			"CFE_AGENT_HOSTED_SECRET":   secretHosted,
			"CFE_AGENT_HOSTED_TIMEOUT":  "45s",
		}, func(t *testing.T, p Profile) {
			h := p.Hosted
			if h.BaseURL != "https://otro.servicio.example" || h.APIKey.Value() != secretLiveKey ||
				h.Username != "caja1@laesquina" || h.Secret.Value() != secretHosted || h.Timeout != 45*time.Second {
				t.Errorf("Hosted = %+v", h)
			}
		}},
		{"empty variable overrides nothing", map[string]string{"CFE_AGENT_LISTEN": ""}, func(t *testing.T, p Profile) {
			if p.Listen != DefaultListen {
				t.Errorf("Listen = %q", p.Listen)
			}
		}},
	}

	// Every documented variable is exercised above.
	tested := map[string]bool{}
	for _, tt := range tests {
		for k := range tt.env {
			tested[k] = true
		}
	}
	for _, o := range envOverrides {
		if !tested[EnvPrefix+o.name] {
			t.Errorf("no test sets %s%s", EnvPrefix, o.name)
		}
	}

	clearEnv(t)
	dir := useFixture(t, "two-profiles.yaml")
	base := mustLoad(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			cfg := mustLoad(t, dir)
			tt.check(t, cfg.Profiles["caja1"])
			if !sameYAML(t, cfg.Profiles["pruebas"], base.Profiles["pruebas"]) {
				t.Error("an override reached the inactive profile")
			}
		})
	}

	t.Run("profile selects the active one", func(t *testing.T) {
		t.Setenv("CFE_AGENT_PROFILE", "Pruebas")
		t.Setenv("CFE_AGENT_LISTEN", "127.0.0.3:9000")
		cfg := mustLoad(t, dir)
		if cfg.Active != "pruebas" {
			t.Fatalf("Active = %q", cfg.Active)
		}
		if cfg.Profiles["pruebas"].Listen != "127.0.0.3:9000" {
			t.Errorf("pruebas listen = %q", cfg.Profiles["pruebas"].Listen)
		}
		if !sameYAML(t, cfg.Profiles["caja1"], base.Profiles["caja1"]) {
			t.Error("an override reached caja1, which is no longer active")
		}
	})

	t.Run("invalid values are validated", func(t *testing.T) {
		for _, tt := range []struct{ env, value, field string }{
			{"CFE_AGENT_PROFILE", "caja9", "CFE_AGENT_PROFILE"},
			{"CFE_AGENT_ENVIRONMENT", "staging", "profiles.caja1.environment"},
			{"CFE_AGENT_LISTEN", "localhost", "profiles.caja1.listen"},
			{"CFE_AGENT_LAN_ENABLED", "quizás", "profiles.caja1.lan.enabled"},
			{"CFE_AGENT_HOSTED_URL", "http://api.servicio.example", "profiles.caja1.hosted.base_url"},
			{"CFE_AGENT_HOSTED_API_KEY", secretTestKey, "profiles.caja1.hosted.api_key"},
			{"CFE_AGENT_HOSTED_TIMEOUT", "pronto", "profiles.caja1.hosted.timeout"},
			{"CFE_AGENT_COMPANY_FECHA_EMISOR", "2-3-2015", "profiles.caja1.company.fecha_emisor"},
			{"CFE_AGENT_COMPANY_RESOLUCION", "Res. 798/2012", "profiles.caja1.company.resolucion"},
			{"CFE_AGENT_COMPANY_WEB_URL", "laesquina.com.uy", "profiles.caja1.company.web_url"},
			{"CFE_AGENT_PRINT_CONSTANCIA_IVA_AL_DIA", "sí", "profiles.caja1.print.constancia_iva_al_dia"},
			{"CFE_AGENT_LAN_TOKENS", secretToken1 + ",1111111111111111", "profiles.caja1.lan.tokens[1]"},
		} {
			t.Run(tt.env, func(t *testing.T) {
				t.Setenv(tt.env, tt.value)
				_, err := Load(dir)
				e := wantInvalid(t, err, tt.field)
				if strings.Contains(err.Error(), secretTestKey) || strings.Contains(err.Error(), "1111") {
					t.Errorf("error %q shows the secret", err)
				}
				if tt.env != "CFE_AGENT_PROFILE" && !strings.Contains(e.Fields[0].Mensaje, "(valor de "+tt.env+")") {
					t.Errorf("message %q does not name %s", e.Fields[0].Mensaje, tt.env)
				}
			})
		}
	})
}

// sameYAML reports whether a and b encode to the same YAML.
func sameYAML(t *testing.T, a, b any) bool {
	t.Helper()
	ya, err := yaml.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	yb, err := yaml.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ya) == string(yb)
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestDataDir(t *testing.T) {
	clearEnv(t)
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome) // os.UserConfigDir on Unix
	t.Setenv("AppData", cfgHome)         // and on Windows
	flag, env := t.TempDir(), t.TempDir()

	tests := []struct {
		name, flag, env, want string
	}{
		{"flag wins", flag, env, flag},
		{"environment without flag", "", env, env},
		{"user configuration directory", "", "", filepath.Join(cfgHome, "cfe-agent")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDataDir, tt.env)
			got, err := DataDir(tt.flag)
			if err != nil || got != tt.want {
				t.Errorf("DataDir(%q) = %q, %v; want %q", tt.flag, got, err, tt.want)
			}
		})
	}
	t.Run("relative flag becomes absolute", func(t *testing.T) {
		got, err := DataDir("datos")
		if err != nil || !filepath.IsAbs(got) || filepath.Base(got) != "datos" {
			t.Errorf("DataDir(datos) = %q, %v", got, err)
		}
	})
}

// FuzzLoad checks that no config.yaml makes Load panic, and that every
// failure is a *cfe.Error naming at least one field.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{"testdata/two-profiles.yaml", "default.yaml"} {
		b, err := os.ReadFile(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("profiles: 3\n"))
	f.Add([]byte("active: a\nprofiles:\n  a:\n    lan:\n      tokens: x\n    hosted:\n      timeout: [1]\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), text, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(dir)
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("Load returned a config that does not validate: %v", verr)
			}
			return
		}
		if cfe.ErrorCode(err) != cfe.EINVALID || len(cfe.ErrorFields(err)) == 0 {
			t.Fatalf("Load error = %v (code %s), want EINVALID with fields", err, cfe.ErrorCode(err))
		}
	})
}
