package profiles

import (
	"os"
	"testing"
)

// TestLoadWith checks the command line's overrides: they pick the profile
// and its address above the environment and the file, obey the rules of a
// value written in the file, reach no other profile and leave the process
// environment alone.
// Serial: it sets the process's environment (clearEnv, t.Setenv), which the package reads.
func TestLoadWith(t *testing.T) {
	clearEnv(t)
	dir := useFixture(t, "two-profiles.yaml")
	base := mustLoad(t, dir)

	t.Run("overrides nothing when zero", func(t *testing.T) {
		cfg, err := LoadWith(dir, Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if !sameYAML(t, cfg, base) {
			t.Error("the zero Overrides changed the configuration")
		}
	})

	tests := []struct {
		name       string
		env        map[string]string
		over       Overrides
		wantActive string
		wantListen string
	}{
		{"profile", nil, Overrides{Profile: "Pruebas"}, "pruebas", DefaultListen},
		{"listen on the file's active profile", nil, Overrides{Listen: "127.0.0.2:9000"}, "caja1", "127.0.0.2:9000"},
		{"listen on the chosen profile", nil, Overrides{Profile: "pruebas", Listen: "127.0.0.3:9000"}, "pruebas", "127.0.0.3:9000"},
		{"flags win over the environment",
			map[string]string{EnvProfile: "caja1", EnvPrefix + "LISTEN": "127.0.0.4:9000"},
			Overrides{Profile: "pruebas", Listen: "127.0.0.5:9000"}, "pruebas", "127.0.0.5:9000"},
		{"the environment still applies to the chosen profile",
			map[string]string{EnvPrefix + "LISTEN": "127.0.0.6:9000"},
			Overrides{Profile: "pruebas"}, "pruebas", "127.0.0.6:9000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			cfg, err := LoadWith(dir, tt.over)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Active != tt.wantActive {
				t.Fatalf("Active = %q, want %q", cfg.Active, tt.wantActive)
			}
			if got := cfg.Profiles[tt.wantActive].Listen; got != tt.wantListen {
				t.Errorf("%s listen = %q, want %q", tt.wantActive, got, tt.wantListen)
			}
			for name, p := range base.Profiles {
				if name != tt.wantActive && !sameYAML(t, cfg.Profiles[name], p) {
					t.Errorf("an override reached %s, which is not active", name)
				}
			}
			if got := os.Getenv(EnvProfile); got != tt.env[EnvProfile] {
				t.Errorf("$%s = %q after LoadWith, want it untouched", EnvProfile, got)
			}
			if got := os.Getenv(EnvPrefix + "LISTEN"); got != tt.env[EnvPrefix+"LISTEN"] {
				t.Errorf("$%sLISTEN = %q after LoadWith, want it untouched", EnvPrefix, got)
			}
		})
	}

	t.Run("refused as a value in the file is", func(t *testing.T) {
		for _, tt := range []struct {
			name  string
			over  Overrides
			field string
		}{
			{"unknown profile", Overrides{Profile: "caja9"}, EnvProfile},
			{"not IP:port", Overrides{Listen: "localhost"}, "profiles.caja1.listen"},
			// A LAN address needs LAN mode, as in the file.
			{"LAN address without LAN mode", Overrides{Listen: "0.0.0.0:18787"}, "profiles.caja1.listen"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := LoadWith(dir, tt.over)
				wantInvalid(t, err, tt.field)
			})
		}
	})

	t.Run("EnsureDefaultWith applies them", func(t *testing.T) {
		cfg, created, err := EnsureDefaultWith(dir, Overrides{Profile: "pruebas", Listen: "127.0.0.7:9000"})
		if err != nil || created {
			t.Fatalf("EnsureDefaultWith: created %v, %v", created, err)
		}
		if cfg.Active != "pruebas" || cfg.Profiles["pruebas"].Listen != "127.0.0.7:9000" {
			t.Errorf("Active %q, pruebas listen %q", cfg.Active, cfg.Profiles["pruebas"].Listen)
		}
	})
}
