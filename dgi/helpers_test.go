package dgi

import (
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
)

// Test credentials are made once per process: RSA key generation is slow.
var (
	credsOnce sync.Once
	creds     [3]*signer.Credentials
	credsErr  error
)

// testCreds returns test credentials: 0 a company's, 1 another company's,
// 2 a stand-in for DGI's.
func testCreds(t testing.TB, i int) *signer.Credentials {
	t.Helper()
	credsOnce.Do(func() {
		for j, c := range []struct{ ruc, name string }{{"219999830019", "Empresa de Prueba S.A."}, {"211111110015", "Alfa S.A."}, {"214844360018", "DGI"}} {
			if creds[j], credsErr = signer.GenerateTestCertificate(c.ruc, c.name, time.Now().Add(-time.Hour)); credsErr != nil {
				return
			}
		}
	})
	if credsErr != nil {
		t.Fatal(credsErr)
	}
	return creds[i]
}

// certFile writes c's certificate as PEM into a temporary file.
func certFile(t testing.TB, c *signer.Credentials) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// xmlsecVerifySOAP verifies a WS-Security-signed SOAP message with xmlsec1:
// the Body's wsu:Id is declared as an ID, and the key is certPEM's (xmlsec1
// does not follow wsse:SecurityTokenReference).
func xmlsecVerifySOAP(t testing.TB, msg []byte, certPEM string) (string, bool) {
	t.Helper()
	bin := testtool.Require(t, "xmlsec1")
	f := filepath.Join(t.TempDir(), "soap.xml")
	if err := os.WriteFile(f, msg, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--verify", "--id-attr:Id", "http://schemas.xmlsoap.org/soap/envelope/:Body",
		"--pubkey-cert-pem", certPEM, f).CombinedOutput()
	return string(out), err == nil
}

func mustDate(t testing.TB, s string) cfe.Date {
	t.Helper()
	d, err := cfe.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
