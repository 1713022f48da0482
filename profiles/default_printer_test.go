package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestSetDefaultPrinter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, _, err := EnsureDefault(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	raw, _ := os.ReadFile(path)
	// A second printer to switch to, appended under the default's printers.
	withTwo := strings.Replace(string(raw), "    default_printer: archivo",
		"      otra:\n        backend: dir\n        dir: otra\n    default_printer: archivo", 1)
	if err := os.WriteFile(path, []byte(withTwo), 0o600); err != nil {
		t.Fatal(err)
	}

	if err := SetDefaultPrinter(dir, "sandbox", "OTRA"); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := cfg.Profile("sandbox"); p.DefaultPrinter != "otra" {
		t.Errorf("default printer %q, want otra", p.DefaultPrinter)
	}
	after, _ := os.ReadFile(path)
	if !strings.Contains(string(after), "# Impresoras por nombre.") {
		t.Error("the file's comments were lost")
	}

	for _, c := range []struct{ profile, alias string }{{"sandbox", "nadie"}, {"nadie", "archivo"}} {
		err := SetDefaultPrinter(dir, c.profile, c.alias)
		if cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Errorf("SetDefaultPrinter(%s, %s) = %v, want ENOTFOUND", c.profile, c.alias, err)
		}
	}
	if unchanged, _ := os.ReadFile(path); string(unchanged) != string(after) {
		t.Error("a refused change touched the file")
	}
}
