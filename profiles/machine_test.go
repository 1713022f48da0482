package profiles

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestMachineDir: CFE_AGENT_MACHINE_DIR names the folder (made absolute);
// without it there is none off Windows.
func TestMachineDir(t *testing.T) {
	t.Setenv(EnvMachineDir, "maquina")
	dir, err := MachineDir()
	if want, _ := filepath.Abs("maquina"); err != nil || dir != want {
		t.Errorf("with %s: %q, %v", EnvMachineDir, dir, err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	t.Setenv(EnvMachineDir, "")
	if dir, err := MachineDir(); dir != "" || err != nil {
		t.Errorf("without %s: %q, %v; want none", EnvMachineDir, dir, err)
	}
}
