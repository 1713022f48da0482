package profiles

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// wantMode checks a file's permission bits (Unix only: Windows has none).
func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	if runtime.GOOS == "windows" {
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s mode = %o, want %o", path, got, want)
	}
}

// onlyConfig checks that dir holds config.yaml and nothing else (no
// temporary file left behind).
func onlyConfig(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != FileName {
			t.Errorf("unexpected file %s in the data directory", e.Name())
		}
	}
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestEnsureDefault(t *testing.T) {
	clearEnv(t)
	dataDir := filepath.Join(t.TempDir(), "nuevo", "cfe-agent")
	cfg, created, err := EnsureDefault(dataDir)
	if err != nil || !created {
		t.Fatalf("EnsureDefault = created %v, %v", created, err)
	}
	path := filepath.Join(dataDir, FileName)
	wantMode(t, path, 0o600)
	wantMode(t, dataDir, 0o700)
	onlyConfig(t, dataDir)
	text := readConfig(t, dataDir)
	if !bytes.HasPrefix(text, []byte("# ")) || !bytes.Equal(text, defaultYAML) {
		t.Error("the file is not the embedded, commented default")
	}

	// What the brief asks of the first-run profile.
	if cfg.Active != "sandbox" || len(cfg.Profiles) != 1 {
		t.Fatalf("Active = %q with %d profiles", cfg.Active, len(cfg.Profiles))
	}
	p := cfg.Profiles["sandbox"]
	checks := []struct {
		name      string
		got, want any
	}{
		{"environment", p.Environment, Sandbox},
		{"listen", p.Listen, "127.0.0.1:18787"},
		{"lan.enabled", p.LAN.Enabled, false},
		{"company.ruc", p.Company.RUC, "219999830019"},
		{"company.razon_social", p.Company.RazonSocial, "EMPRESA DE PRUEBA S.A."},
		{"certificate.path", p.Certificate.Path, "certs/sandbox.p12"},
		{"default_printer", p.DefaultPrinter, "archivo"},
		{"printers.archivo.backend", p.Printers["archivo"].Backend, BackendDir},
		{"printers.archivo.dir", p.Resolve(dataDir).Printers["archivo"].Dir, filepath.Join(dataDir, "impresiones")},
		{"print.formato_rep_impresa", p.Print.FormatoRepImpresa, "Estandar"},
		{"hosted.api_key", p.Hosted.APIKey, Secret("")},
		// Test values, so that the default agent prints a complete footer.
		{"company.fecha_emisor", p.Company.FechaEmisor.String(), "2012-10-01"},
		{"company.resolucion", p.Company.Resolucion, ""},
		{"company.web_url", p.Company.WebURL, "https://www.ejemplo.com.uy/comprobantes"},
		{"print.constancia_iva_al_dia", p.Print.ConstanciaIVAAlDia, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The first-run tax settings are the ones the domain states, UI value included.
	tax, want := p.Tax, cfe.DefaultTaxConfig()
	if !tax.IVATasaBasica.Equal(want.IVATasaBasica) || !tax.IVATasaMin.Equal(want.IVATasaMin) ||
		!tax.TopeUI.Equal(want.TopeUI) || !tax.ValorUI.Equal(want.ValorUI) {
		t.Errorf("tax = %+v, want cfe.DefaultTaxConfig() %+v", tax, want)
	}

	// A second call keeps the file, even after the user changed it.
	edited := append(bytes.Clone(text), "# editado a mano\n"...)
	writeConfig(t, dataDir, string(edited))
	if _, created, err := EnsureDefault(dataDir); err != nil || created {
		t.Fatalf("second EnsureDefault = created %v, %v", created, err)
	}
	if !bytes.Equal(readConfig(t, dataDir), edited) {
		t.Error("the second call overwrote config.yaml")
	}
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestEnsureDefault_concurrent(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	var wg sync.WaitGroup
	var mu sync.Mutex
	createdCount := 0
	for range 8 {
		wg.Go(func() {
			_, created, err := EnsureDefault(dataDir)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if created {
				createdCount++
			}
		})
	}
	wg.Wait()
	if createdCount != 1 {
		t.Errorf("%d calls report creating the file, want exactly 1", createdCount)
	}
	onlyConfig(t, dataDir)
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestSave(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	cfg := validConfig()
	if err := Save(dataDir, cfg); err != nil {
		t.Fatal(err)
	}
	wantMode(t, filepath.Join(dataDir, FileName), 0o600)
	onlyConfig(t, dataDir)
	loaded := mustLoad(t, dataDir)
	if !sameYAML(t, loaded, cfg) {
		t.Errorf("Load(Save(cfg)) differs from cfg:\n%s", mustYAML(t, loaded))
	}

	t.Run("replaces the file", func(t *testing.T) {
		cfg := validConfig()
		cfg.Active = "pruebas"
		if err := Save(dataDir, cfg); err != nil {
			t.Fatal(err)
		}
		if got := mustLoad(t, dataDir).Active; got != "pruebas" {
			t.Errorf("Active = %q after saving pruebas", got)
		}
		onlyConfig(t, dataDir)
	})

	t.Run("invalid config writes nothing", func(t *testing.T) {
		before := readConfig(t, dataDir)
		bad := validConfig()
		p := bad.Profiles["caja1"]
		p.Listen = "en todas partes"
		bad.Profiles["caja1"] = p
		wantInvalid(t, Save(dataDir, bad), "profiles.caja1.listen")
		if !bytes.Equal(readConfig(t, dataDir), before) {
			t.Error("a rejected Save changed config.yaml")
		}
	})

	t.Run("failed write leaves no temporary file", func(t *testing.T) {
		dir := t.TempDir()
		// config.yaml is a non-empty directory: the final rename fails.
		if err := os.MkdirAll(filepath.Join(dir, FileName, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := Save(dir, validConfig()); err == nil {
			t.Fatal("Save over a directory succeeded")
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("data directory holds %d entries, want only config.yaml", len(entries))
		}
	})
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestUse(t *testing.T) {
	clearEnv(t)
	dataDir := useFixture(t, "two-profiles.yaml")

	// Environment overrides must not reach the file.
	t.Setenv("CFE_AGENT_HOSTED_API_KEY", secretLiveKey)
	if err := Use(dataDir, "Pruebas"); err != nil {
		t.Fatal(err)
	}
	text := string(readConfig(t, dataDir))
	if strings.Contains(text, secretLiveKey) {
		t.Error("Use wrote an environment override into config.yaml")
	}
	if !strings.Contains(text, "# Two profiles: caja1 in production") {
		t.Error("Use dropped the file's comments")
	}
	if !strings.Contains(text, "\nactive: pruebas\n") {
		t.Errorf("config.yaml has no active: pruebas:\n%s", text)
	}
	clearEnv(t)
	if got := mustLoad(t, dataDir).Active; got != "pruebas" {
		t.Errorf("Active = %q after Use", got)
	}
	wantMode(t, filepath.Join(dataDir, FileName), 0o600)
	onlyConfig(t, dataDir)

	t.Run("unknown profile", func(t *testing.T) {
		before := readConfig(t, dataDir)
		err := Use(dataDir, "caja9")
		if cfe.ErrorCode(err) != cfe.ENOTFOUND || !strings.Contains(cfe.ErrorMessage(err), "caja9") {
			t.Errorf("error = %v, want ENOTFOUND naming caja9", err)
		}
		if !bytes.Equal(readConfig(t, dataDir), before) {
			t.Error("a failed Use changed config.yaml")
		}
	})
	t.Run("invalid file", func(t *testing.T) {
		dir := useFixture(t, "two-profiles.yaml")
		text := strings.Replace(string(readConfig(t, dir)), `ruc: "219999830019"`, `ruc: "219999830018"`, 1)
		writeConfig(t, dir, text)
		wantInvalid(t, Use(dir, "caja1"), "profiles.pruebas.company.ruc")
		if string(readConfig(t, dir)) != text {
			t.Error("a rejected Use changed config.yaml")
		}
	})
	t.Run("file without active", func(t *testing.T) {
		dir := useFixture(t, "two-profiles.yaml")
		writeConfig(t, dir, strings.Replace(string(readConfig(t, dir)), "active: caja1\n", "", 1))
		if err := Use(dir, "caja1"); err != nil {
			t.Fatal(err)
		}
		if got := mustLoad(t, dir).Active; got != "caja1" {
			t.Errorf("Active = %q", got)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if err := Use(t.TempDir(), "caja1"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Errorf("error = %v, want ENOTFOUND", err)
		}
	})
}
