package main_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/signer"
)

// runCLISplit runs a one-shot command and returns its stdout, its stderr and
// its exit code.
func runCLISplit(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(agentBinary(t), args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errOut.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

// TestAgent_TechnicianCommandsWhileRunning: cae list, cert show and doctor
// read from the running agent (which holds the store's lock) and open the
// store themselves when it is stopped, with the same output both ways.
func TestAgent_TechnicianCommandsWhileRunning(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTicket(t, a.baseURL, "tecnico-1")
	signTicket(t, a.baseURL, "tecnico-2")

	live := map[string]string{}
	for _, args := range [][]string{{"cae", "list"}, {"cert", "show"}} {
		out, errOut, code := runCLISplit(t, env, args...)
		name := strings.Join(args, " ")
		if code != 0 || strings.Contains(out+errOut, "ya hay un agente") {
			t.Fatalf("%s with the agent running: exit %d\n%s%s", name, code, out, errOut)
		}
		if !strings.Contains(errOut, "el agente está en ejecución: datos leídos de su módulo local en "+a.baseURL) {
			t.Errorf("%s does not say it read the running agent:\n%s", name, errOut)
		}
		live[name] = out
	}
	// Two e-Tickets used from the sandbox's range of serie A.
	if !regexp.MustCompile(`(?m)^101\s+A\s+1\s+\d+\s+2\s+\d+\s+\d{4}-\d{2}-\d{2}\s+sandbox\s*$`).MatchString(live["cae list"]) {
		t.Errorf("cae list does not show the 2 e-Tickets used:\n%s", live["cae list"])
	}
	mustContainAll(t, "cert show", live["cert show"], "archivo: "+filepath.Join(dataDir, "certs"), "RUC: 219999830019",
		"ATENCIÓN: certificado de prueba, sin valor fiscal")

	out, code := runCLI(t, env, "doctor")
	if code != 0 || !strings.Contains(out, "OK   módulo local: el agente está en ejecución en "+a.baseURL) ||
		!regexp.MustCompile(`(?m)^OK   certificado: .*certificado de prueba del entorno sandbox`).MatchString(out) {
		t.Errorf("doctor with the agent running: exit %d\n%s", code, out)
	}
	// A profile whose certificate file changed since the agent started: the
	// agent still signs with the old one until it restarts.
	creds, err := signer.GenerateTestCertificate("219999830019", "Empresa de Prueba", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p12, err := creds.EncodePKCS12("clave")
	if err != nil {
		t.Fatal(err)
	}
	renewed := filepath.Join(t.TempDir(), "renovado.p12")
	if err := os.WriteFile(renewed, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ = runCLI(t, append(env, "CFE_AGENT_CERTIFICATE_PATH="+renewed, "CFE_AGENT_CERTIFICATE_PASSWORD=clave"), "doctor")
	if !regexp.MustCompile(`(?m)^WARN certificado: el agente en ejecución usa otro certificado \(.*, serie \d+, vence el .*\): reinícielo`).MatchString(out) {
		t.Errorf("doctor with a certificate file the running agent does not use:\n%s", out)
	}
	a.stop(t)

	for name, want := range live {
		out, errOut, code := runCLISplit(t, env, strings.Fields(name)...)
		if code != 0 || strings.Contains(errOut, "en ejecución") {
			t.Fatalf("%s with the agent stopped: exit %d\n%s%s", name, code, out, errOut)
		}
		if out != want {
			t.Errorf("%s differs between the running agent and the store:\nrunning:\n%s\nstore:\n%s", name, want, out)
		}
	}
}

// certFile writes a PKCS#12 file of a new self-signed certificate (no
// accredited CA issued it) for the RUC, valid from notBefore to notAfter.
func certFile(t *testing.T, ruc string, notBefore, notAfter time.Time) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	name := pkix.Name{CommonName: "Comercio de Prueba SA", SerialNumber: "RUC" + ruc, Country: []string{"UY"}}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: name, Issuer: name,
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p12, err := (&signer.Credentials{Key: key, Certificate: cert}).EncodePKCS12("clave")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "firma.p12")
	if err := os.WriteFile(f, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAgent_DoctorCertificateReasons: doctor's certificate line says why
// the certificate cannot be used.
func TestAgent_DoctorCertificateReasons(t *testing.T) {
	const ruc = "219999830019" // the default profile's
	now := time.Now()
	testCreds, err := signer.GenerateTestCertificate(ruc, "Comercio de Prueba SA", now)
	if err != nil {
		t.Fatal(err)
	}
	testP12, err := testCreds.EncodePKCS12("clave")
	if err != nil {
		t.Fatal(err)
	}
	testFile := filepath.Join(t.TempDir(), "prueba.p12")
	if err := os.WriteFile(testFile, testP12, 0o600); err != nil {
		t.Fatal(err)
	}
	year := 365 * 24 * time.Hour
	valid := certFile(t, ruc, now.Add(-time.Hour), now.Add(year))
	missing := filepath.Join(t.TempDir(), "no-esta.p12")

	tests := []struct {
		name       string
		production bool
		path, pass string
		want       string // a regexp of the certificate line
	}{
		{"file missing", true, missing, "clave", `^FAIL certificado: el archivo ` + regexp.QuoteMeta(missing) + ` no existe`},
		{"wrong password", false, testFile, "otra", `^FAIL certificado: la contraseña de ` + regexp.QuoteMeta(testFile) +
			` es incorrecta \(certificate.password en config.yaml, o CFE_AGENT_CERTIFICATE_PASSWORD\)`},
		{"expired", true, certFile(t, ruc, now.Add(-2*year), now.Add(-24*time.Hour)), "clave",
			`^FAIL certificado: Comercio de Prueba SA venció el \d{4}-\d{2}-\d{2}: importe el certificado renovado`},
		{"not yet valid", true, certFile(t, ruc, now.Add(48*time.Hour), now.Add(year)), "clave",
			`^FAIL certificado: Comercio de Prueba SA recién es válido desde el \d{4}-\d{2}-\d{2}`},
		{"another company's", true, certFile(t, "215555550010", now.Add(-time.Hour), now.Add(year)), "clave",
			`^FAIL certificado: Comercio de Prueba SA es del RUC 215555550010 y el perfil es del RUC 219999830019`},
		{"untrusted chain", true, valid, "clave", `^FAIL certificado: Comercio de Prueba SA, RUC 219999830019, vence el .*; cadena no confiable: `},
		{"untrusted chain outside production", false, valid, "clave", `^WARN certificado: .*; cadena no confiable: `},
		{"a test certificate in production", true, testFile, "clave",
			`^FAIL certificado: .* es un certificado de prueba, sin valor fiscal, en un perfil de producción`},
		{"a test certificate in the sandbox", false, testFile, "clave",
			`^OK   certificado: .*, RUC 219999830019, vence el .*; certificado de prueba del entorno sandbox, sin valor fiscal`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := t.TempDir()
			env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_CERTIFICATE_PATH="+tt.path,
				"CFE_AGENT_CERTIFICATE_PASSWORD="+tt.pass)
			if tt.production {
				if out, code := runCLI(t, env, "profile", "list"); code != 0 {
					t.Fatalf("profile list: %s", out)
				}
				cfgFile := filepath.Join(dataDir, "config.yaml")
				cfg, err := os.ReadFile(cfgFile)
				if err != nil {
					t.Fatal(err)
				}
				cfg = bytes.Replace(cfg, []byte("environment: sandbox"), []byte("environment: produccion"), 1)
				if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, _ := runCLI(t, env, "doctor")
			if !regexp.MustCompile(`(?m)` + tt.want).MatchString(out) {
				t.Errorf("doctor's certificate line does not match %s:\n%s", tt.want, out)
			}
		})
	}
}

// TestAgent_RunningWithoutCertificate: an agent whose certificate does not
// open says why in /state, and cert show and doctor report it.
func TestAgent_RunningWithoutCertificate(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	if out, code := runCLI(t, env, "cert", "show"); code != 0 { // makes the sandbox's test certificate
		t.Fatalf("cert show: exit %d\n%s", code, out)
	}
	wrong := append(env, "CFE_AGENT_CERTIFICATE_PASSWORD=otra")
	a := startAgent(t, wrong, "--listen", "127.0.0.1:0")
	_, st := getJSON(t, a.baseURL+"/state")
	if st["certificate"] != nil || st["certificate_error"] != "la contraseña del certificado es incorrecta" {
		t.Errorf("/state certificate %v, certificate_error %v", st["certificate"], st["certificate_error"])
	}
	if w := fmt.Sprint(st["warnings"]); !strings.Contains(w, "el certificado de firma no se puede usar: la contraseña del certificado es incorrecta") {
		t.Errorf("/state warnings lack the reason: %s", w)
	}
	out, errOut, code := runCLISplit(t, wrong, "cert", "show")
	if code == 0 || !strings.Contains(errOut,
		"el agente en ejecución no tiene un certificado de firma utilizable: la contraseña del certificado es incorrecta") {
		t.Errorf("cert show with the agent running without its certificate: exit %d\n%s%s", code, out, errOut)
	}
	out, code = runCLI(t, wrong, "doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^FAIL certificado: la contraseña de .*sandbox\.p12 es incorrecta`).MatchString(out) {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	// The file is right again (the profile's own password) but the running
	// agent still has none: doctor says to restart it.
	out, _ = runCLI(t, env, "doctor")
	if !regexp.MustCompile(`(?m)^OK   certificado: .*\n(?:.*\n)*?FAIL certificado: el agente en ejecución no pudo cargarlo \(la contraseña del certificado es incorrecta\): reinícielo`).MatchString(out) {
		t.Errorf("doctor with a good file and an agent without it:\n%s", out)
	}
}
