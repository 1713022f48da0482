package main_test

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnostics exports the archive of a running agent whose profile holds
// secrets, and checks it holds logs, config, state and versions, but no secret.
func TestDiagnostics(t *testing.T) {
	const apiKey, password = "xx_test_0a1b2c3d4e5f", "pass-del-p12-secreta"
	dataDir := t.TempDir()
	env := procEnv(t, dataDir, "CFE_AGENT_HOSTED_API_KEY="+apiKey, "CFE_AGENT_HOSTED_URL=https://hosted.example",
		"CFE_AGENT_CERTIFICATE_PASSWORD="+password)
	// On port 0: the command finds the running agent through its run file.
	p := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	p.signExample("7f3e4d5c-6a7b-4c8d-9e0f-1a2b3c4d5e6f")

	out := filepath.Join(t.TempDir(), "diag.zip")
	cmd := exec.Command(agentBinary(t), "diagnostics", "-o", out)
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("diagnostics: %v\n%s", err, b)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
	}
	for _, name := range []string{"versions.txt", "config.yaml", "state.json", "doctor.txt", "logs/cfe-agent.log"} {
		if _, ok := files[name]; !ok {
			t.Errorf("archive lacks %s (has %v)", name, keys(files))
		}
	}
	for name, content := range files {
		for _, s := range []string{apiKey, password} {
			if strings.Contains(content, s) {
				t.Errorf("%s holds a secret", name)
			}
		}
	}
	var st struct {
		Profile  string `json:"profile"`
		Receipts struct {
			SignedToday int `json:"signed_today"`
		} `json:"receipts"`
	}
	if err := json.Unmarshal([]byte(files["state.json"]), &st); err != nil || st.Receipts.SignedToday != 1 {
		t.Errorf("state.json is not the running agent's state (%v): %s", err, files["state.json"])
	}
	if !strings.Contains(files["doctor.txt"], "OK ") {
		t.Errorf("doctor.txt holds no passed check:\n%s", files["doctor.txt"])
	}
	if !strings.Contains(files["logs/cfe-agent.log"], `msg="cfe signed"`) {
		t.Errorf("log in the archive lacks the signing:\n%s", files["logs/cfe-agent.log"])
	}
	if !strings.Contains(files["config.yaml"], "api_key: '***'") && !strings.Contains(files["config.yaml"], `api_key: "***"`) {
		t.Errorf("config.yaml does not show the masked key:\n%s", files["config.yaml"])
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
