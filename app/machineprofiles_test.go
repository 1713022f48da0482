package app

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// writeRecord records a production profile of user in the machine folder.
func writeRecord(t *testing.T, machine, user string) string {
	t.Helper()
	dir := filepath.Join(machine, "produccion")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(machineProduction{User: user, Profile: "tienda", RUC: "214844360018"})
	f := filepath.Join(dir, userFile(user))
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCheckTestModeAllowed: a sandbox profile from the default data
// directory is refused while another user of the machine records a
// production profile, naming that user and profile; a production profile,
// an explicit data directory, this user's own record or no record at all
// are served. (Not parallel: it sets the environment.)
func TestCheckTestModeAllowed(t *testing.T) {
	machine := t.TempDir()
	t.Setenv(profiles.EnvMachineDir, machine)
	t.Setenv(profiles.EnvDataDir, "")
	sandbox := &profiles.Config{Active: "sandbox", Profiles: map[string]profiles.Profile{"sandbox": {Environment: profiles.Sandbox}}}
	prod := &profiles.Config{Active: "tienda", Profiles: map[string]profiles.Profile{"tienda": {Environment: profiles.Produccion}}}

	if err := checkTestModeAllowed(Options{}, sandbox); err != nil {
		t.Fatalf("no record: %v", err)
	}
	writeRecord(t, machine, currentUser())
	if err := checkTestModeAllowed(Options{}, sandbox); err != nil {
		t.Fatalf("only this user's own record: %v", err)
	}
	writeRecord(t, machine, `CAJA\ana`)
	err := checkTestModeAllowed(Options{}, sandbox)
	if cfe.ErrorCode(err) != cfe.EINVALID {
		t.Fatalf("another user's production profile: %v, want EINVALID", err)
	}
	for _, want := range []string{`el usuario CAJA\ana usa el perfil de producción «tienda» (RUC 214844360018)`,
		"no inicia el perfil de prueba «sandbox»", "«cfe-agent profile add»"} {
		if !strings.Contains(cfe.ErrorMessage(err), want) {
			t.Errorf("message %q lacks %q", cfe.ErrorMessage(err), want)
		}
	}
	if err := checkTestModeAllowed(Options{}, prod); err != nil {
		t.Errorf("a production profile: %v", err)
	}
	if err := checkTestModeAllowed(Options{DataDir: t.TempDir()}, sandbox); err != nil {
		t.Errorf("--data-dir: %v", err)
	}
	t.Setenv(profiles.EnvDataDir, t.TempDir())
	if err := checkTestModeAllowed(Options{}, sandbox); err != nil {
		t.Errorf("CFE_AGENT_DATA_DIR: %v", err)
	}
}

// TestRecordProduction: an agent serving a production profile records it
// for the machine's other users; a sandbox profile keeps the record while
// the configuration still has a production profile, and drops it when it
// has none. (Not parallel: it sets the environment.)
func TestRecordProduction(t *testing.T) {
	machine := t.TempDir()
	t.Setenv(profiles.EnvMachineDir, machine)
	log := slog.New(slog.DiscardHandler)
	file := filepath.Join(machine, "produccion", userFile(currentUser()))
	tienda := profiles.Profile{Environment: profiles.Produccion, Company: profiles.Company{RUC: "214844360018", RazonSocial: "Tienda SA"}}
	cfg := &profiles.Config{Active: "tienda", Profiles: map[string]profiles.Profile{"tienda": tienda,
		"sandbox": {Environment: profiles.Sandbox}}}
	recordProduction(&Agent{Name: "tienda", Profile: tienda, Config: cfg, DataDir: "/datos"}, log)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no record: %v", err)
	}
	var rec machineProduction
	if err := json.Unmarshal(b, &rec); err != nil || rec.User != currentUser() || rec.Profile != "tienda" ||
		rec.RUC != "214844360018" || rec.RazonSocial != "Tienda SA" || rec.DataDir != "/datos" || rec.At.IsZero() {
		t.Fatalf("record %s: %+v, %v", b, rec, err)
	}
	recordProduction(&Agent{Name: "sandbox", Profile: cfg.Profiles["sandbox"], Config: cfg}, log)
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the sandbox profile of a configuration with a production one dropped the record: %v", err)
	}
	only := &profiles.Config{Active: "sandbox", Profiles: map[string]profiles.Profile{"sandbox": {Environment: profiles.Sandbox}}}
	recordProduction(&Agent{Name: "sandbox", Profile: only.Profiles["sandbox"], Config: only}, log)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a configuration without production kept the record: %v", err)
	}
}

func TestUserFile(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`CAJA\Ana`: "caja_ana.json", "josé.pérez": "jos_.p_rez.json", "ana": "ana.json"} {
		if got := userFile(in); got != want {
			t.Errorf("userFile(%q) = %q, want %q", in, got, want)
		}
	}
}
