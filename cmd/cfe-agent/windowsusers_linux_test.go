package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgent_secondUserRefusesSandbox runs the agent as a second user of a
// machine whose first user issues real receipts (a production profile
// recorded in the machine folder, CFE_AGENT_MACHINE_DIR standing for
// %ProgramData%\cfe-agent): from its default data directory, with the
// built-in sandbox profile, it refuses to serve and says why and what to
// do, in the log too; given a data directory explicitly (a technician's
// test), it serves.
func TestAgent_secondUserRefusesSandbox(t *testing.T) {
	t.Parallel()
	machine := t.TempDir()
	if err := os.MkdirAll(filepath.Join(machine, "produccion"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := `{"usuario": "CAJA\\ana", "perfil": "tienda", "ruc": "214844360018", "razon_social": "Tienda SA"}`
	if err := os.WriteFile(filepath.Join(machine, "produccion", "caja_ana.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	// The default data directory: $XDG_CONFIG_HOME/cfe-agent, no
	// CFE_AGENT_DATA_DIR.
	var env []string
	for _, e := range procEnv(t, "", "CFE_AGENT_MACHINE_DIR="+machine) {
		if !strings.HasPrefix(e, "CFE_AGENT_DATA_DIR=") {
			env = append(env, e)
		}
	}
	cmd := exec.Command(agentBinary(t), "serve", "--listen", "127.0.0.1:0")
	cmd.Env = env
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the second user's agent did not refuse within 30 s:\n%s", out)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1:\n%s", err, out)
	}
	for _, want := range []string{`el usuario CAJA\ana usa el perfil de producción «tienda» (RUC 214844360018)`,
		"no inicia el perfil de prueba «sandbox» para que esta caja no firme comprobantes sin valor fiscal"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "cfe-agent", "logs", "*"))
	var logged bool
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		logged = logged || strings.Contains(string(b), "the agent could not start") && strings.Contains(string(b), "CAJA")
	}
	if !logged {
		t.Errorf("the refusal is not in the agent's log (%q)", logs)
	}

	p := startProc(t, procEnv(t, t.TempDir(), "CFE_AGENT_MACHINE_DIR="+machine), "serve", "--listen", "127.0.0.1:0")
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("an explicit data directory: exit status %d", code)
	}
}
