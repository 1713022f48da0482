package main_test

import (
	"bytes"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// cfe-agent envelope writes both of DGI's envelopes from the agent's store:
// each validates against DGI's XSD, holds the signed CFEs byte for byte, and
// each CFE cut out of it verifies with xmlsec1 under the Caratula's
// certificate; cfe-agent verify accepts them, and refuses a tampered one.
func TestEnvelope_WritesAndVerifies(t *testing.T) {
	testtool.Require(t, "xmllint")
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	ticket := signCFE(t, a.baseURL, example(t, "e-ticket.json"))
	factura := signCFE(t, a.baseURL, example(t, "e-factura.json"))
	a.stop(t)
	ticketXML, facturaXML := []byte(ticket["xml_firmado"].(string)), []byte(factura["xml_firmado"].(string))
	today := time.Now().In(cfe.Montevideo).Format(time.DateOnly)
	dir := t.TempDir()

	check := func(t *testing.T, file, xsd string, want ...[]byte) *cfe.Envelope {
		t.Helper()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		testtool.MustValidateXSD(t, testtool.XSD(t, xsd), b)
		e, err := cfe.ParseEnvelope(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.CFEs) != len(want) {
			t.Fatalf("%d CFEs, want %d", len(e.CFEs), len(want))
		}
		certPEM := filepath.Join(dir, "caratula.pem")
		if err := os.WriteFile(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.Caratula.Certificate}), 0o600); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if !bytes.Equal(e.CFEs[i].XML, w) {
				t.Errorf("CFE %d is not the stored CFE byte for byte", i+1)
			}
			if out, ok := testtool.XMLSecVerify(t, e.CFEs[i].XML, certPEM); !ok {
				t.Errorf("xmlsec1 rejects CFE %d with the Caratula's certificate:\n%s", i+1, out)
			}
		}
		return e
	}

	dgi := filepath.Join(dir, "dgi.xml")
	t.Run("DGI's envelope by date", func(t *testing.T) {
		out, code := runCLI(t, env, "envelope", "--desde", today, "--id-emisor", "15", "-o", dgi)
		if code != 0 || !strings.Contains(out, "sobre EnvioCFE para el RUC "+cfe.RUCDGI+" con 2 CFE (Idemisor 15)") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		e := check(t, dgi, "EnvioCFE.xsd", ticketXML, facturaXML)
		if e.Kind != cfe.EnvelopeDGI || e.Caratula.RutReceptor != cfe.RUCDGI || e.Caratula.IdEmisor != 15 {
			t.Errorf("caratula %+v", e.Caratula)
		}
		out, code = runCLI(t, env, "verify", "--profile-cert", dgi)
		if code != 0 || !strings.HasPrefix(out, "OK") || !strings.Contains(out, "XSD EnvioCFE.xsd válido") || strings.Count(out, "  OK   CFE ") != 2 {
			t.Errorf("verify: exit %d\n%s", code, out)
		}
	})
	t.Run("DGI's envelope by type", func(t *testing.T) {
		f := filepath.Join(dir, "dgi-111.xml")
		if out, code := runCLI(t, env, "envelope", "--desde", today, "--hasta", today, "--tipo", "111", "-o", f); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		check(t, f, "EnvioCFE.xsd", facturaXML)
	})
	t.Run("the receiver's envelope by uuid", func(t *testing.T) {
		f := filepath.Join(dir, "receptor.xml")
		out, code := runCLI(t, env, "envelope", "--receptor", cfe.RUCDGI, "--uuid", factura["uuid"].(string), "-o", f)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if e := check(t, f, "EnvioCFE_entreEmpresas.xsd", facturaXML); e.Kind != cfe.EnvelopeReceiver {
			t.Errorf("kind %v", e.Kind)
		}
		out, code = runCLI(t, env, "verify", "--profile-cert", f)
		if code != 0 || !strings.Contains(out, "XSD EnvioCFE_entreEmpresas.xsd válido") {
			t.Errorf("verify: exit %d\n%s", code, out)
		}
	})
	t.Run("the receiver's envelope by date takes only its CFEs", func(t *testing.T) {
		f := filepath.Join(dir, "receptor-fecha.xml")
		if out, code := runCLI(t, env, "envelope", "--receptor", cfe.RUCDGI, "--desde", today, "-o", f); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		check(t, f, "EnvioCFE_entreEmpresas.xsd", facturaXML)
	})
	t.Run("a tampered envelope fails verify", func(t *testing.T) {
		b, err := os.ReadFile(dgi)
		if err != nil {
			t.Fatal(err)
		}
		changed := bytes.Replace(b, []byte("<NomItem>Servicio de mantenimiento"), []byte("<NomItem>Servicio de Mantenimiento"), 1)
		if bytes.Equal(changed, b) {
			t.Fatal("nothing to tamper with")
		}
		f := filepath.Join(dir, "tampered.xml")
		if err := os.WriteFile(f, changed, 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := runCLI(t, env, "verify", "--profile-cert", f)
		if code != 1 || !strings.HasPrefix(out, "FAIL") || !strings.Contains(out, "1 de 2 CFE del sobre no pasan la verificación") ||
			!strings.Contains(out, "DigestValue no coincide") {
			t.Errorf("exit %d\n%s", code, out)
		}
		// A Caratula that miscounts its CFEs fails too.
		f2 := filepath.Join(dir, "miscounted.xml")
		if err := os.WriteFile(f2, bytes.Replace(b, []byte("<CantCFE>2<"), []byte("<CantCFE>3<"), 1), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, code := runCLI(t, env, "verify", "--profile-cert", f2); code != 1 || !strings.Contains(out, "CantCFE") {
			t.Errorf("miscounted: exit %d\n%s", code, out)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"nothing selected", []string{"envelope"}, "--uuid o con --desde"},
		{"a bad RUC", []string{"envelope", "--receptor", "214844360011", "--desde", today}, "no es un RUC válido"},
		{"a CFE not addressed to the receiver", []string{"envelope", "--receptor", cfe.RUCDGI, "--uuid", ticket["uuid"].(string)}, "no está dirigido al RUC"},
		{"an unknown uuid", []string{"envelope", "--uuid", "no-existe"}, "no-existe"},
		{"no CFE that day", []string{"envelope", "--desde", "2020-01-01"}, "ningún CFE firmado"},
		{"Idemisor too long", []string{"envelope", "--desde", today, "--id-emisor", "10000000000"}, "--id-emisor"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			out, code := runCLI(t, env, append(c.args, "-o", filepath.Join(dir, "refused.xml"))...)
			if code == 0 || !strings.Contains(out, c.msg) {
				t.Errorf("exit %d, want an error with %q:\n%s", code, c.msg, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "refused.xml")); err == nil {
				t.Errorf("%s: a refused envelope was written", c.name)
			}
		})
	}
}
