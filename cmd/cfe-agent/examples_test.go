package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// postJSON posts body to url and returns the status, headers and body.
func postJSON(t *testing.T, url string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// TestExamples_SignedByAgent signs every example request (examples/*.json)
// through a real agent on its embedded sandbox profile: each is answered
// codigo_respuesta 00 with its own uuid and type, and each signed CFE is
// valid against DGI's schema (xmllint) and its signature verifies (xmlsec1).
// The examples cover every CFE type and case the README promises.
func TestExamples_SignedByAgent(t *testing.T) {
	testtool.Require(t, "xmllint")
	testtool.Require(t, "xmlsec1")
	files, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")

	signed := map[string][]byte{}
	types := map[int]string{}
	var currencies []string
	for _, f := range files {
		name := filepath.Base(f)
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ex struct {
			UUID string `json:"uuid"`
			CFE  struct {
				IdDoc struct {
					TipoCfe int `json:"tipoCfe"`
				} `json:"idDoc"`
				Totales struct {
					TipoMoneda string `json:"tipoMoneda"`
				} `json:"totales"`
			} `json:"cfe"`
		}
		if err := json.Unmarshal(body, &ex); err != nil || ex.UUID == "" {
			t.Errorf("%s: not a request with a uuid (%v)", name, err)
			continue
		}
		status, _, raw := postJSON(t, p.baseURL+"/sign-cfe", body)
		var res apitype.SignResponse
		if err := json.Unmarshal(raw, &res); err != nil || status != http.StatusOK || res.CodigoRespuesta != "00" {
			t.Errorf("%s: HTTP %d, codigo %q: %s %v", name, status, res.CodigoRespuesta, res.MensajeRespuesta, res.Errores)
			continue
		}
		if res.UUID != ex.UUID || int(res.TipoCFE) != ex.CFE.IdDoc.TipoCfe {
			t.Errorf("%s: signed uuid %s type %d, the example has %s and %d", name, res.UUID, res.TipoCFE, ex.UUID, ex.CFE.IdDoc.TipoCfe)
		}
		signed[strings.TrimSuffix(name, ".json")+".xml"] = []byte(res.XMLFirmado)
		types[ex.CFE.IdDoc.TipoCfe] = name
		currencies = append(currencies, ex.CFE.Totales.TipoMoneda)
	}
	for _, want := range []int{101, 102, 111, 112, 113, 121, 122, 123, 124, 131, 132, 133, 151, 181, 182} {
		if _, ok := types[want]; !ok {
			t.Errorf("no example of type %d signs", want)
		}
	}
	if !slices.Contains(currencies, "USD") {
		t.Error("no example in foreign currency signs")
	}
	if len(signed) == 0 {
		t.Fatal("nothing was signed")
	}
	for name, out := range testtool.ValidateXSDBatch(t, testtool.XSD(t, "CFEDGI.xsd"), signed) {
		t.Errorf("%s is not valid against CFEDGI.xsd:\n%s", name, out)
	}
	for name, out := range testtool.XMLSecVerifyBatch(t, signed) {
		t.Errorf("xmlsec1 does not verify %s:\n%s", name, out)
	}
}
