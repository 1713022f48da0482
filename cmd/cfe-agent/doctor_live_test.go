package main_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestDoctor_ReadsTheRunningAgent: an agent whose hosted service comes from
// its own environment (CFE_AGENT_HOSTED_URL and _API_KEY, which the
// technician's console does not have) runs; doctor, run from that console,
// reports the service the agent uses — not "no configurado" — and every
// line says where it was read from: the agent's /state, this console's
// configuration, or checked now. With the agent stopped the same lines
// come from the profile doctor opened.
func TestDoctor_ReadsTheRunningAgent(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t)
	dataDir := t.TempDir()
	a := startAgent(t, agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL="+sb.URL(),
		"CFE_AGENT_HOSTED_API_KEY="+agentKey), "--listen", "127.0.0.1:0")
	if !testtool.WaitUntil(t, 10*time.Second, func() bool {
		var st struct {
			Hosted *struct {
				Reachable *bool `json:"reachable"`
			} `json:"hosted"`
		}
		getInto(t, a.baseURL+"/state", nil, &st)
		return st.Hosted != nil && st.Hosted.Reachable != nil && *st.Hosted.Reachable
	}) {
		t.Fatalf("the agent never reported its hosted service reachable:\n%s", a.logs)
	}

	console := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir) // no hosted settings here
	out, _ := runCLI(t, console, "doctor")
	wantLines := []string{
		`(?m)^OK   fuente: el agente está en ejecución: las líneas \[agente en ejecución\] se leyeron de su módulo local \(` +
			regexp.QuoteMeta(a.baseURL) + `/state\)`,
		`(?m)^OK   servicio en la nube: ` + regexp.QuoteMeta(sb.URL()) + ` responde .*autenticación: clave API de empresa.* \[agente en ejecución\]$`,
		`(?m)^OK   zona horaria: .* \[agente en ejecución\]$`,
		`(?m)^OK   CAE 101: .* \[agente en ejecución\]$`,
		`(?m)^OK   envíos: .* \[agente en ejecución\]$`,
		`(?m)^OK   módulo local: el agente está en ejecución en .* \[agente en ejecución\]$`,
		`(?m)^\S+ +certificado: .* \[configuración de esta consola\]$`,
		`(?m)^OK   perfil: .* \[configuración de esta consola\]$`,
	}
	for _, re := range wantLines {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("doctor with the agent running lacks a line matching %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "no configurado") {
		t.Errorf("doctor says the hosted service is not configured while the agent delivers to it:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !regexp.MustCompile(`^(OK|WARN|FAIL) .*\[(agente en ejecución|configuración de esta consola|comprobado ahora desde esta consola)\]$`).MatchString(line) {
			t.Errorf("a doctor line does not say where it was read from: %q", line)
		}
	}

	// Stopped, the state's lines come from the profile doctor opens.
	a.stop(t)
	out, _ = runCLI(t, console, "doctor")
	for _, re := range []string{
		`(?m)^OK   fuente: el agente no está en ejecución: doctor abrió el perfil`,
		`(?m)^OK   zona horaria: .* \[perfil abierto por doctor\]$`,
		`(?m)^WARN servicio en la nube: no configurado: .* \[comprobado ahora desde esta consola\]$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("doctor with the agent stopped lacks a line matching %s:\n%s", re, out)
		}
	}
}

// TestCAEImport_SaysHowToStopTheAgent: "cae import" while the agent runs
// refuses, as before, and says how to stop that agent, the way it runs: an
// agent started with "serve" from a console is stopped with Ctrl+C or kill
// and its process id.
func TestCAEImport_SaysHowToStopTheAgent(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	out, code := runCLI(t, env, "cae", "import", "cae.xml")
	want := "este comando necesita el agente detenido. Deténgalo con Ctrl+C en la consola donde se ejecuta, o con «kill " +
		strconv.Itoa(a.cmd.Process.Pid) + "»"
	if code == 0 || !strings.Contains(out, "ya hay un agente ejecutándose con estos datos") || !strings.Contains(out, want) {
		t.Errorf("cae import with the agent running: exit %d, want the refusal with %q:\n%s", code, want, out)
	}
}
