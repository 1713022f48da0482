//go:build windows

package printer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindSumatra_windows: the lookup on a real Windows file system and
// environment (run under Wine in CI): the installer's layout beside the
// agent first, then %ProgramFiles%, with Windows paths.
// Serial: it sets the process's environment (t.Setenv), which is what it tests.
func TestFindSumatra_windows(t *testing.T) {
	place := func(dir string) string {
		t.Helper()
		p := filepath.Join(dir, "SumatraPDF", SumatraExe)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("MZ"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	agentDir, pf, empty := tempDir(t), tempDir(t), tempDir(t)
	beside, inPF := place(agentDir), place(pf)
	t.Setenv("ProgramFiles", pf)
	t.Setenv("ProgramFiles(x86)", empty)
	t.Setenv("LOCALAPPDATA", empty)

	env := DefaultSumatraEnv()
	env.InstallDir = ""
	env.Executable = filepath.Join(agentDir, "cfe-agent.exe")
	got, err := FindSumatra("", env)
	if err != nil || !strings.EqualFold(got.Path, beside) || got.Place != SumatraBesideAgent {
		t.Errorf("beside the agent: %+v, %v; want %s", got, err, beside)
	}
	if !strings.Contains(got.Path, `\SumatraPDF\SumatraPDF.exe`) {
		t.Errorf("path %q is not a Windows path", got.Path)
	}

	env.Executable = filepath.Join(empty, "cfe-agent.exe")
	got, err = FindSumatra("", env)
	if err != nil || !strings.EqualFold(got.Path, inPF) || got.Place != SumatraProgramFiles {
		t.Errorf("Program Files: %+v, %v; want %s", got, err, inPF)
	}

	if _, err := FindSumatra(filepath.Join(empty, "otro.exe"), env); err == nil ||
		!strings.Contains(err.Error(), filepath.Join(empty, "otro.exe")) {
		t.Errorf("a missing sumatra_path: %v; want an error naming it", err)
	}
}

// tempDir is t.TempDir with a cleanup that only logs: Wine 8.0's
// unlinkat, which os.RemoveAll uses, fails with "Invalid function".
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cfe-agent-sumatra-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("removing %s: %v", dir, err)
		}
	})
	return dir
}
