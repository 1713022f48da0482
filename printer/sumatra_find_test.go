package printer

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestFindSumatra: the lookup's order, first hit wins, over a fake machine
// whose files are a set of paths.
func TestFindSumatra(t *testing.T) {
	t.Parallel()
	j := filepath.Join
	var (
		agent   = j("/opt", "cfe-agent", "cfe-agent.exe")
		sub     = j("/opt", "cfe-agent", "SumatraPDF", SumatraExe)
		beside  = j("/opt", "cfe-agent", SumatraExe)
		install = j("/inst", "SumatraPDF", SumatraExe)
		pf      = j("/pf", "SumatraPDF", SumatraExe)
		pf86    = j("/pf86", "SumatraPDF", SumatraExe)
		local   = j("/local", "SumatraPDF", SumatraExe)
		onPath  = j("/bin", SumatraExe)
		mine    = j("/mine", "Sumatra.exe")
	)
	all := []string{sub, beside, install, pf, pf86, local, onPath, mine}
	tests := []struct {
		name      string
		explicit  string
		files     []string
		want      string
		wantPlace SumatraPlace
		wantErr   string
	}{
		{"the profile's path first", mine, all, mine, SumatraFromProfile, ""},
		{"the profile's path missing is an error naming it", j("/nope", "S.exe"), all, "", "", j("/nope", "S.exe")},
		{"the installer's layout beside the agent", "", all, sub, SumatraBesideAgent, ""},
		{"a bare SumatraPDF.exe beside the agent", "", all[1:], beside, SumatraBesideAgent, ""},
		{"the installer's folder from the registry", "", all[2:], install, SumatraInstallDir, ""},
		{"Program Files", "", all[3:], pf, SumatraProgramFiles, ""},
		{"Program Files (x86)", "", all[4:], pf86, SumatraProgramFilesX86, ""},
		{"the per-user install", "", all[5:], local, SumatraLocalAppData, ""},
		{"PATH last", "", all[6:], onPath, SumatraOnPath, ""},
		{"none: what to do", "", []string{mine}, "", "", "reinstale el agente con su instalador (MSI)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := make(map[string]bool)
			for _, f := range tt.files {
				files[f] = true
			}
			env := SumatraEnv{
				Executable: agent,
				InstallDir: "/inst",
				Getenv: func(k string) string {
					return map[string]string{"ProgramFiles": "/pf", "ProgramFiles(x86)": "/pf86", "LOCALAPPDATA": "/local"}[k]
				},
				IsFile: func(p string) bool { return files[p] },
				LookPath: func(f string) (string, error) {
					if p := j("/bin", f); files[p] {
						return p, nil
					}
					return "", exec.ErrNotFound
				},
			}
			got, err := FindSumatra(tt.explicit, env)
			if tt.wantErr != "" {
				wantError(t, err, cfe.ENOTFOUND, tt.wantErr)
				return
			}
			if err != nil || got.Path != tt.want || got.Place != tt.wantPlace {
				t.Errorf("FindSumatra = %+v, %v; want %s (%s)", got, err, tt.want, tt.wantPlace)
			}
		})
	}
}

// TestFindSumatra_emptyEnvironment: variables that are not set and an
// unknown executable are skipped, not searched at the root.
func TestFindSumatra_emptyEnvironment(t *testing.T) {
	t.Parallel()
	var asked []string
	env := SumatraEnv{Getenv: func(string) string { return "" },
		IsFile:   func(p string) bool { asked = append(asked, p); return true },
		LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	_, err := FindSumatra("", env)
	if !errors.Is(err, exec.ErrNotFound) || len(asked) != 0 {
		t.Errorf("FindSumatra = %v after looking at %q; want not found without looking", err, asked)
	}
}

// TestSumatra_PrintFindsBesideTheAgent: with no path in the profile, Print
// runs the SumatraPDF of the installer's layout.
func TestSumatra_PrintFindsBesideTheAgent(t *testing.T) {
	t.Parallel()
	exe, _ := fakeSumatra(t)
	agentDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(agentDir, "SumatraPDF"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(exe, filepath.Join(agentDir, "SumatraPDF", SumatraExe)); err != nil {
		t.Fatal(err)
	}
	env := func() SumatraEnv {
		return SumatraEnv{Executable: filepath.Join(agentDir, "cfe-agent"), Getenv: func(string) string { return "" },
			IsFile: isFile, LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	}
	// The script writes its arguments beside itself: now in agentDir/SumatraPDF.
	res, err := (&Sumatra{Printer: "Caja 1", Env: env}).Print(context.Background(), Job{Name: "e-Ticket A-2", PDF: testPDF})
	if err != nil || res.State != StateCompleted {
		t.Fatalf("Print: %+v, %v", res, err)
	}
	args, err := os.ReadFile(filepath.Join(agentDir, "SumatraPDF", "args"))
	if err != nil || !strings.Contains(string(args), "Caja 1") {
		t.Errorf("the SumatraPDF beside the agent did not print: %q, %v", args, err)
	}
}
