package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox"
)

const agentKey = "xx_test_agente-e2e-000000000000000001"

// startSandbox runs the real hosted-service emulator on a free loopback port
// with a key for the demo company (the default profile's RUC).
func startSandbox(t *testing.T) *sandbox.Server {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		DemoPassword: "demo-password", PasswordCost: bcrypt.MinCost,
		Seed: &sandbox.Seed{APIKeys: []sandbox.SeedKey{{Empresa: "219999830019", Nombre: "caja e2e", Key: agentKey}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Open(); err != nil {
		sb.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// TestAgent_DeliversAndProxies: an agent whose hosted service comes from the
// environment (CFE_AGENT_HOSTED_URL, CFE_AGENT_HOSTED_API_KEY) delivers what
// it signs, reports the service in /state, forwards hosted calls and passes
// doctor's hosted check.
func TestAgent_DeliversAndProxies(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t)
	env := agentEnv("CFE_AGENT_DATA_DIR="+t.TempDir(), "CFE_AGENT_HOSTED_URL="+sb.URL(), "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")

	// Before anything is signed, the idle deliverer's probe finds the service.
	var probe struct {
		Hosted struct {
			Reachable bool `json:"reachable"`
		} `json:"hosted"`
	}
	if !testtool.WaitUntil(t, 10*time.Second, func() bool {
		getInto(t, a.baseURL+"/state", nil, &probe)
		return probe.Hosted.Reachable
	}) {
		t.Fatalf("/state never reported the running service reachable:\n%s", a.logs)
	}

	res := signCFE(t, a.baseURL, example(t, "e-ticket.json"))
	if res["codigo_respuesta"] != "00" {
		t.Fatalf("sign-cfe = %v", res)
	}
	var state struct {
		Outbox struct {
			Pending  int `json:"pending"`
			Rejected int `json:"rejected"`
		} `json:"outbox"`
		Hosted *struct {
			URL       string `json:"base_url"`
			Reachable bool   `json:"reachable"`
			Auth      string `json:"auth"`
			LastError string `json:"last_error"`
			RateLimit *struct {
				LimitMinute     int `json:"limit_minute"`
				RemainingMinute int `json:"remaining_minute"`
			} `json:"rate_limit"`
		} `json:"hosted"`
	}
	if !testtool.WaitUntil(t, 20*time.Second, func() bool {
		getInto(t, a.baseURL+"/state", nil, &state)
		return state.Outbox.Pending == 0
	}) {
		t.Fatalf("the signed CFE was not delivered: %+v\n%s", state, a.logs)
	}
	h := state.Hosted
	switch {
	case h == nil:
		t.Fatal("/state has no hosted object")
	case h.URL != sb.URL() || !h.Reachable || h.Auth != "api_key" || h.LastError != "":
		t.Errorf("hosted %+v", *h)
	case h.RateLimit == nil || h.RateLimit.LimitMinute != 120 || h.RateLimit.RemainingMinute != 118:
		// Two requests: the search that asks where numbering stands before
		// the agent serves (one span: the sandbox ranges were authorized
		// today), and the delivery.
		t.Errorf("rate limit %+v, want the default 120 a minute with two requests used", h.RateLimit)
	}

	// The delivered CFE, read through the agent's proxy with the profile's key.
	var found []struct {
		ID     int64  `json:"id"`
		Serie  string `json:"serie"`
		Nro    int64  `json:"nro"`
		Origen string `json:"origen"`
	}
	getInto(t, a.baseURL+"/api/v1/cfeemitido/buscar?"+url.Values{"tipoFiltro": {"101"}}.Encode(), nil, &found)
	if len(found) != 1 || found[0].Origen != "agente" || found[0].Serie != res["serie"] || float64(found[0].Nro) != res["numero"] {
		t.Fatalf("the sandbox holds %+v, want the agent's %v-%v", found, res["serie"], res["numero"])
	}
	var detail struct {
		XmlFirmado string `json:"xmlFirmado"`
	}
	getInto(t, a.baseURL+"/api/v1/cfeemitido/"+strconv.FormatInt(found[0].ID, 10), nil, &detail)
	if detail.XmlFirmado != res["xml_firmado"] {
		t.Error("the service's copy is not the signed XML byte for byte")
	}

	out, code := runCLI(t, env, "doctor")
	// The running agent's view of its service (doctor reads it from /state).
	if !regexp.MustCompile(`(?m)^OK   servicio en la nube: ` + regexp.QuoteMeta(sb.URL()) +
		` responde \(comprobado el [^)]+\); autenticación: clave API de empresa; cupo de la clave: .* \[agente en ejecución\]$`).MatchString(out) {
		t.Errorf("doctor (exit %d) does not report the hosted service as usable:\n%s", code, out)
	}
	a.stop(t)
}

// TestAgent_DeliversAfterOutageAndRestart: CFEs signed while the service is
// down, before and after a restart of the agent, all reach it once it comes
// up, once each and in number order.
func TestAgent_DeliversAfterOutageAndRestart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the service is down
	env := agentEnv("CFE_AGENT_DATA_DIR="+t.TempDir(), "CFE_AGENT_HOSTED_URL=http://"+addr, "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	ticket := string(example(t, "e-ticket.json"))
	sign := func(a *runningAgent, from, to int) {
		for i := from; i <= to; i++ {
			body := strings.Replace(ticket, "3f2b8c1e-6d4a-4f7e-9b1c-2a5d8e7f0a01", fmt.Sprintf("corte-%02d", i), 1)
			if res := signCFE(t, a.baseURL, []byte(body)); res["numero"] != float64(i) {
				t.Fatalf("signature %d got number %v", i, res["numero"])
			}
		}
	}
	var state struct {
		Outbox struct {
			Pending int `json:"pending"`
		} `json:"outbox"`
		Hosted struct {
			Reachable bool   `json:"reachable"`
			LastError string `json:"last_error"`
		} `json:"hosted"`
	}

	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	sign(a, 1, 10)
	// The deliverer fails against the stopped service: wait for its error.
	testtool.WaitUntil(t, 20*time.Second, func() bool {
		getInto(t, a.baseURL+"/state", nil, &state)
		return state.Hosted.LastError != ""
	})
	if state.Outbox.Pending != 10 || state.Hosted.Reachable || state.Hosted.LastError == "" {
		t.Errorf("with the service down: %+v", state)
	}
	a.stop(t) // a clean exit while deliveries fail

	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	sign(a, 11, 20)
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), Listen: addr,
		DemoPassword: "demo-password", PasswordCost: bcrypt.MinCost,
		Seed: &sandbox.Seed{APIKeys: []sandbox.SeedKey{{Empresa: "219999830019", Nombre: "caja e2e", Key: agentKey}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Open(); err != nil {
		sb.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })

	if !testtool.WaitUntil(t, time.Minute, func() bool {
		getInto(t, a.baseURL+"/state", nil, &state)
		return state.Outbox.Pending == 0
	}) {
		t.Fatalf("%d CFEs still pending a minute after the service came up:\n%s", state.Outbox.Pending, a.logs)
	}
	a.stop(t)

	var got []struct {
		UUID   string `json:"uuid"`
		Nro    int64  `json:"nro"`
		Origen string `json:"origen"`
	}
	getInto(t, sb.URL()+"/api/v1/cfeemitido/buscar", http.Header{"X-Api-Key": {agentKey}}, &got)
	if len(got) != 20 {
		t.Fatalf("the service holds %d CFEs, want 20", len(got))
	}
	for i, c := range got { // in the service's id order: arrival order
		if c.Nro != int64(i+1) || c.UUID != fmt.Sprintf("corte-%02d", i+1) || c.Origen != "agente" {
			t.Errorf("arrival %d: %+v, want number %d (corte-%02d) from the agent", i+1, c, i+1, i+1)
		}
	}
}

func getInto(t *testing.T, u string, header http.Header, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
