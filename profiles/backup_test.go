package profiles

import (
	"path/filepath"
	"testing"
	"time"
)

func TestValidator_Backup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b    Backup
		want []string
	}{
		{"none", Backup{}, nil},
		{"folder only", Backup{Folder: "/mnt/usb/copias"}, nil},
		{"all keys", Backup{Folder: "copias", Keep: 30, Period: 12 * time.Hour, EveryN: 500}, nil},
		{"negative keep", Backup{Folder: "x", Keep: -1}, []string{"profiles.caja1.backup.keep"}},
		{"period too short", Backup{Folder: "x", Period: time.Second}, []string{"profiles.caja1.backup.period"}},
		{"negative every_n", Backup{Folder: "x", EveryN: -5}, []string{"profiles.caja1.backup.every_n"}},
		{"keys without folder", Backup{Keep: 3}, []string{"profiles.caja1.backup.folder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			p := c.Profiles["caja1"]
			p.Backup = tc.b
			c.Profiles["caja1"] = p
			err := c.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantInvalid(t, err, tc.want...)
		})
	}
}

// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoad_Backup(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	writeConfig(t, dir, `active: caja
profiles:
  caja:
    environment: sandbox
    company: {ruc: "219999830019", razon_social: "X", domicilio_fiscal: "Calle 1", ciudad: "Montevideo", departamento: "Montevideo", cdg_dgi_sucur: 1}
    certificate: {path: cert.p12}
    tax: {valor_ui: "6.1"}
    backup:
      folder: copias
      keep: 3
      period: 6h
      every_n: 100
`)
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := cfg.ActiveProfile()
	b := p.Resolve(dir).Backup
	if b.Folder != filepath.Join(dir, "copias") || b.KeepOrDefault() != 3 || b.PeriodOrDefault() != 6*time.Hour || b.EveryN != 100 {
		t.Fatalf("backup = %+v", b)
	}
	if d := (Backup{}); d.KeepOrDefault() != DefaultBackupKeep || d.PeriodOrDefault() != DefaultBackupPeriod || d.Enabled() {
		t.Fatalf("defaults of %+v", d)
	}
}
