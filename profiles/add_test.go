package profiles

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestAdd(t *testing.T) {
	t.Parallel()
	newProfile := func() Profile {
		return Profile{Environment: Produccion,
			Company: Company{RUC: "214844360018", RazonSocial: "ALMACÉN LA ESQUINA S.R.L.", CdgDGISucur: 2,
				DomicilioFiscal: "Rivera 1234", Ciudad: "Montevideo", Departamento: "Montevideo",
				FechaEmisor: Date{cfe.Date{Year: 2020, Month: 3, Day: 1}}},
			Certificate:    Certificate{Path: "certs/esquina.p12", Password: Secret(secretCertPassword)},
			CAE:            CAE{Files: []string{"cae/esquina/CAE_101.xml"}},
			Printers:       map[string]Printer{"caja": {Backend: BackendCUPS, Queue: "Star_TSP100"}},
			DefaultPrinter: "caja",
			Tax:            Tax{ValorUI: decimal.RequireFromString("6.1234")},
		}
	}
	tests := []struct {
		name     string
		profile  string
		edit     func(*Profile)
		activate bool
		code     string // "" for success
		field    string
	}{
		{name: "a production profile", profile: "esquina"},
		{name: "made active", profile: "esquina", activate: true},
		{name: "a name taken", profile: "sandbox", code: cfe.ECONFLICT},
		{name: "a bad name", profile: "La Esquina", code: cfe.EINVALID, field: "profiles.la esquina"},
		{name: "a bad RUC", profile: "esquina", edit: func(p *Profile) { p.Company.RUC = "214844360017" },
			code: cfe.EINVALID, field: "profiles.esquina.company.ruc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, _, err := EnsureDefault(dir); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			p := newProfile()
			if tt.edit != nil {
				tt.edit(&p)
			}
			err = Add(dir, tt.profile, p, tt.activate)
			after, _ := os.ReadFile(filepath.Join(dir, FileName))
			if tt.code != "" {
				if cfe.ErrorCode(err) != tt.code {
					t.Fatalf("Add = %v, want %s", err, tt.code)
				}
				if tt.field != "" && !hasField(cfe.ErrorFields(err), tt.field) {
					t.Errorf("fields %v, want %s", cfe.ErrorFields(err), tt.field)
				}
				if !bytes.Equal(before, after) {
					t.Error("a refused Add changed config.yaml")
				}
				return
			}
			if err != nil {
				t.Fatalf("Add: %v", err)
			}
			if !bytes.HasPrefix(after, []byte("# Configuración de cfe-agent.")) ||
				!bytes.Contains(after, []byte("# produccion o sandbox.")) {
				t.Errorf("the file's comments were lost:\n%s", after)
			}
			cfg, err := Load(dir)
			if err != nil {
				t.Fatalf("Load after Add: %v", err)
			}
			wantActive := "sandbox"
			if tt.activate {
				wantActive = tt.profile
			}
			if cfg.Active != wantActive {
				t.Errorf("active %q, want %q", cfg.Active, wantActive)
			}
			got, ok := cfg.Profile(tt.profile)
			if !ok {
				t.Fatalf("profile %s not in %v", tt.profile, cfg.Profiles)
			}
			want := newProfile()
			if got.Company.RUC != want.Company.RUC || got.Company.FechaEmisor != want.Company.FechaEmisor ||
				got.Certificate.Password != want.Certificate.Password || got.Printers["caja"].Queue != "Star_TSP100" ||
				len(got.CAE.Files) != 1 || got.DefaultPrinter != "caja" || got.Environment != Produccion ||
				!got.Tax.ValorUI.Equal(want.Tax.ValorUI) {
				t.Errorf("profile read back %+v, want the fields given", got)
			}
			// Fields left unset take Load's defaults.
			if got.Listen != DefaultListen || got.Certificate.Algorithm != RSASHA1 ||
				!got.Tax.IVATasaBasica.Equal(cfe.DefaultTaxConfig().IVATasaBasica) || !got.Print.ConstanciaIVAAlDia {
				t.Errorf("defaults not applied: listen %q algorithm %q tax %v constancia %v", got.Listen,
					got.Certificate.Algorithm, got.Tax.IVATasaBasica, got.Print.ConstanciaIVAAlDia)
			}
			if _, ok := cfg.Profile("sandbox"); !ok {
				t.Error("the existing profile was lost")
			}
		})
	}
}

func hasField(fields []cfe.FieldError, campo string) bool {
	for _, f := range fields {
		if f.Campo == campo {
			return true
		}
	}
	return false
}
