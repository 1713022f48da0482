package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMachineDir_programData: on Windows the machine-wide folder is
// %ProgramData%\cfe-agent (run under Wine by internal/wintest).
func TestMachineDir_programData(t *testing.T) {
	t.Setenv(EnvMachineDir, "")
	dir, err := MachineDir()
	want := filepath.Join(os.Getenv("ProgramData"), "cfe-agent")
	if err != nil || os.Getenv("ProgramData") == "" || !strings.EqualFold(dir, want) {
		t.Fatalf("MachineDir() = %q, %v; want %q", dir, err, want)
	}
}
