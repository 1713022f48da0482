package profiles

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestConfig_StorePath(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	cfg := validConfig() // caja1 in produccion, pruebas in sandbox
	caja2 := cfg.Profiles["caja1"]
	cfg.Profiles["caja2"] = caja2 // a second production profile of the same company
	// Names chosen to collide if name and environment were simply concatenated.
	cfg.Profiles["pruebas-sandbox"] = cfg.Profiles["pruebas"]
	cfg.Profiles["pruebas-"] = cfg.Profiles["pruebas"]

	seen := map[string]string{}
	for name := range cfg.Profiles {
		path := cfg.StorePath(dataDir, name)
		if other, dup := seen[path]; dup {
			t.Errorf("profiles %s and %s share the store %s", name, other, path)
		}
		seen[path] = name
		if !strings.HasPrefix(path, dataDir+string(filepath.Separator)) {
			t.Errorf("store %s is outside the data directory", path)
		}
	}

	// The same profile in the other environment gets another store.
	prod := cfg.StorePath(dataDir, "caja1")
	p := cfg.Profiles["caja1"]
	p.Environment = Sandbox
	cfg.Profiles["caja1"] = p
	if sandbox := cfg.StorePath(dataDir, "caja1"); sandbox == prod {
		t.Errorf("caja1 uses %s in both environments", prod)
	} else if _, taken := seen[sandbox]; taken {
		t.Errorf("caja1 in sandbox takes the store of %s", seen[sandbox])
	}

	if got, want := cfg.StorePath(dataDir, "CAJA2"), cfg.StorePath(dataDir, "caja2"); got != want {
		t.Errorf("StorePath is case-sensitive: %s vs %s", got, want)
	}
	if got := cfg.StorePath(dataDir, "caja9"); got != "" {
		t.Errorf("StorePath of an unknown profile = %q, want empty", got)
	}
}

func TestProfile_Emisor(t *testing.T) {
	t.Parallel()
	p := validConfig().Profiles["caja1"]
	e := p.Emisor()
	c := p.Company
	want := cfe.Emisor{
		RUCEmisor: c.RUC, RznSoc: c.RazonSocial, NomComercial: c.NombreComercial, GiroEmis: c.Giro,
		Telefono: []string{"29001234", "099123456"}, CorreoEmisor: c.Correo, EmiSucursal: c.Sucursal,
		CdgDGISucur: c.CdgDGISucur, DomFiscal: c.DomicilioFiscal, Ciudad: c.Ciudad, Departamento: c.Departamento,
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("Emisor = %+v, want %+v", e, want)
	}
	e.Telefono[0] = "otro"
	if p.Company.Telefonos[0] == "otro" {
		t.Error("Emisor shares the profile's phone slice")
	}
}

func TestProfile_Resolve(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "datos")
	p := validConfig().Profiles["caja1"]
	abs := filepath.Join(t.TempDir(), "cae", "111.xml")
	p.CAE.Files = append(p.CAE.Files, abs)
	r := p.Resolve(dataDir)

	in := func(rel string) string { return filepath.Join(dataDir, filepath.FromSlash(rel)) }
	checks := []struct{ name, got, want string }{
		{"certificate.path", r.Certificate.Path, in("certs/empresa.p12")},
		{"cae.files[0]", r.CAE.Files[0], in("cae/101.xml")},
		{"cae.files[1] (absolute)", r.CAE.Files[1], abs},
		{"printers.archivo.dir", r.Printers["archivo"].Dir, in("impresiones")},
		{"printers.mostrador.dir (unset)", r.Printers["mostrador"].Dir, ""},
		{"print.templates.ticket.logo", r.Print.Templates["ticket"].Logo, in("logo.png")},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	// p keeps its relative paths: Resolve shares no slice or map with it.
	if p.CAE.Files[0] != "cae/101.xml" || p.Printers["archivo"].Dir != "impresiones" || p.Print.Templates["ticket"].Logo != "logo.png" {
		t.Error("Resolve changed the profile it was called on")
	}
}

func TestProfile_Printer(t *testing.T) {
	t.Parallel()
	p := validConfig().Profiles["caja1"] // mostrador (default, cups) and archivo (dir)
	tests := []struct {
		name, alias, defaultPrinter string
		only                        bool // keep only the archivo printer
		want                        Backend
		ok                          bool
	}{
		{"by alias", "archivo", "mostrador", false, BackendDir, true},
		{"alias in another case", "ARCHIVO", "mostrador", false, BackendDir, true},
		{"empty alias is the default", "", "mostrador", false, BackendCUPS, true},
		{"no default among two", "", "", false, "", false},
		{"the only printer without default", "", "", true, BackendDir, true},
		{"unknown alias", "cocina", "mostrador", false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := p.clone()
			q.DefaultPrinter = tt.defaultPrinter
			if tt.only {
				delete(q.Printers, "mostrador")
			}
			pr, ok := q.Printer(tt.alias)
			if ok != tt.ok || pr.Backend != tt.want {
				t.Errorf("Printer(%q) = %q, %v; want %q, %v", tt.alias, pr.Backend, ok, tt.want, tt.ok)
			}
		})
	}
}
