package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// contingencyState is the part of /state this test reads.
type contingencyState struct {
	Status   string         `json:"status"`
	Warnings []string       `json:"warnings"`
	DGI      map[string]int `json:"dgi"`
	CAE      []struct {
		TipoCFE cfe.Type `json:"tipo_cfe"`
		Ranges  []struct {
			Serie string   `json:"serie"`
			Desde int64    `json:"desde"`
			Hasta int64    `json:"hasta"`
			Vence cfe.Date `json:"vence"`
			Used  int64    `json:"used"`
		} `json:"ranges"`
	} `json:"cae"`
}

// paperForm is a /sign-cfe body keying in a paper form of type typ (one of
// the example requests' shapes) with its serie, number and date; price is
// its one line's unit price.
func paperForm(t *testing.T, typ cfe.Type, uuid, serie string, nro int64, fecha, price, corrige string) []byte {
	t.Helper()
	body := map[string]any{"uuid": uuid, "cfe": map[string]any{
		"idDoc": map[string]any{"tipoCfe": int(typ), "serie": serie, "numero": nro, "fechaEmision": fecha, "formaPago": 1},
		"detalles": []map[string]any{{"indicadorFacturacion": 3, "nombreItem": "Servicio de mantenimiento",
			"cantidad": 1, "precioUnitario": price}},
	}}
	if typ == 211 {
		body["cfe"].(map[string]any)["receptor"] = map[string]any{"tipoDocumento": 2, "codigoPais": "UY",
			"documento": "214844360018", "razonSocial": "Dirección General Impositiva", "direccion": "Fernández Crespo 1534",
			"ciudad": "Montevideo", "departamento": "Montevideo"}
	}
	if corrige != "" {
		body["corrige"] = corrige
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgent_Contingency, over the real binaries (the agent in direct mode
// and `cfe-sandbox dgi`): the 201 range is read from /state's cae, a paper
// form from yesterday is keyed in with its serie and number through
// /sign-cfe and DGI receives it (AE); the refusals (a number outside the
// ranges, a number twice, a future date, an e-Factura Contingencia without
// a receptor) are 01 naming the field and change nothing; a CFC whose
// amount was mistyped is observed (C06), shown on /state, the status page
// and doctor, and sent again corrected under the same number until DGI
// receives it; a batch file is keyed in through the running agent, all or
// nothing.
func TestAgent_Contingency(t *testing.T) {
	t.Parallel()
	url, admin, cert := startDGIEmulatorProc(t)
	dataDir := directModeDataDir(t, url, cert)
	env := procEnv(t, dataDir)
	p := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	p.waitLine("sending signed CFEs to DGI directly")

	state := func() contingencyState {
		t.Helper()
		_, b := getAccept(t, p.baseURL+"/state", "application/json")
		var st contingencyState
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("/state: %v: %s", err, b)
		}
		return st
	}
	used := func(st contingencyState, typ cfe.Type) int64 {
		for _, c := range st.CAE {
			if c.TipoCFE == typ && len(c.Ranges) == 1 {
				return c.Ranges[0].Used
			}
		}
		t.Fatalf("/state's cae has no single range of type %d", typ)
		return 0
	}
	// The 201 range, from /state's cae.
	var serie string
	var desde, hasta int64
	for _, c := range state().CAE {
		if c.TipoCFE == 201 && len(c.Ranges) > 0 {
			serie, desde, hasta = c.Ranges[0].Serie, c.Ranges[0].Desde, c.Ranges[0].Hasta
		}
	}
	if serie == "" || hasta < desde+10 {
		t.Fatalf("no e-Ticket Contingencia range in /state's cae")
	}
	now := time.Now().In(cfe.Montevideo)
	yesterday, tomorrow := cfe.DateOf(now.AddDate(0, 0, -1)).String(), cfe.DateOf(now.AddDate(0, 0, 1)).String()
	sign := func(body []byte) *apitype.SignResponse {
		t.Helper()
		resp, err := p.client().SignCFE(context.Background(), body)
		if err != nil {
			t.Fatalf("/sign-cfe: %v", err)
		}
		return resp
	}

	// A form from yesterday, keyed in with its serie and number.
	nro := desde + 6
	res := sign(paperForm(t, 201, "paper-1", serie, nro, yesterday, "1220", ""))
	if res.CodigoRespuesta != "00" || res.TipoCFE != 201 || res.Serie != serie || res.Numero != nro {
		t.Fatalf("keying in 201 %s-%d: %+v", serie, nro, res)
	}
	testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), []byte(res.XMLFirmado))
	if out, ok := testtool.XMLSecVerify(t, []byte(res.XMLFirmado), ""); !ok {
		t.Fatalf("xmlsec1 rejects the keyed-in CFC:\n%s", out)
	}
	if !strings.Contains(res.XMLFirmado, "<FchEmis>"+yesterday+"</FchEmis>") {
		t.Errorf("the signed CFC does not carry the form's date %s", yesterday)
	}

	// The refusals: 01 naming the field, nothing stored.
	for _, tc := range []struct {
		name  string
		body  []byte
		campo string
		want  string
	}{
		{"a number outside the ranges", paperForm(t, 201, "r1", serie, hasta+1, yesterday, "100", ""), "cfe.idDoc.numero", "no está en los rangos CAE"},
		{"a number twice", paperForm(t, 201, "r2", serie, nro, yesterday, "100", ""), "cfe.idDoc.numero", "ya fue ingresado con el uuid paper-1"},
		{"a future date", paperForm(t, 201, "r3", serie, nro+1, tomorrow, "100", ""), "cfe.idDoc.fechaEmision", "no puede ser posterior"},
		{"e-Factura Contingencia without a receptor", regexp.MustCompile(`,"receptor":\{[^}]*\}`).ReplaceAll(
			paperForm(t, 211, "r4", serie, desde, yesterday, "100", ""), nil), "cfe.receptor", "obligatori"},
	} {
		before := state()
		res := sign(tc.body)
		found := false
		for _, e := range res.Errores {
			found = found || (e.Campo == tc.campo && strings.Contains(e.Mensaje, tc.want))
		}
		if res.CodigoRespuesta != "01" || !found {
			t.Errorf("%s: %s %s %+v; want 01 naming %s (%q)", tc.name, res.CodigoRespuesta, res.MensajeRespuesta, res.Errores, tc.campo, tc.want)
		}
		after := state()
		if used(after, 201) != used(before, 201) || used(after, 211) != used(before, 211) {
			t.Errorf("%s: the ranges' use changed", tc.name)
		}
	}

	// A mistyped amount: DGI observes it (C06).
	bad := sign(paperForm(t, 211, "paper-211", serie, desde+2, yesterday, "2000000", ""))
	if bad.CodigoRespuesta != "00" {
		t.Fatalf("keying in 211: %+v", bad)
	}
	var st contingencyState
	if !testtool.WaitUntil(t, time.Minute, func() bool {
		st = state()
		return st.DGI["observados"] == 1 && st.DGI["aceptados"] == 1
	}) {
		t.Fatalf("DGI's verdicts never reached /state: %+v", st)
	}
	observed := ""
	for _, w := range st.Warnings {
		if strings.Contains(w, "e-Factura Contingencia "+serie+"-"+fmt.Sprint(desde+2)) {
			observed = w
		}
	}
	if !strings.Contains(observed, "C06") || !strings.Contains(observed, "paper-211") || st.Status != "degraded" {
		t.Fatalf("status %s, warnings %q: want the observation naming the CFC, C06 and its uuid", st.Status, st.Warnings)
	}
	if _, page := getAccept(t, p.baseURL+"/", "text/html"); !strings.Contains(string(page), "C06") {
		t.Errorf("the status page does not show DGI's observation")
	}
	if out, _ := runCLI(t, env, "doctor"); !regexp.MustCompile(`(?m)^WARN DGI \(envío directo\): DGI observó el comprobante de contingencia .*C06`).MatchString(out) {
		t.Errorf("doctor does not show DGI's observation:\n%s", out)
	}
	// Another uuid for that number without corrige is still refused.
	if res := sign(paperForm(t, 211, "paper-211-b", serie, desde+2, yesterday, "2000", "")); res.CodigoRespuesta != "01" {
		t.Errorf("the observed number keyed again without corrige: %+v", res)
	}
	// Corrected, the same number again: DGI receives it.
	fixed := sign(paperForm(t, 211, "paper-211-fixed", serie, desde+2, yesterday, "2000", "paper-211"))
	if fixed.CodigoRespuesta != "00" || fixed.Numero != desde+2 {
		t.Fatalf("the correction: %+v", fixed)
	}
	if !testtool.WaitUntil(t, time.Minute, func() bool {
		st = state()
		return st.DGI["aceptados"] == 2
	}) {
		t.Fatalf("the correction never reached DGI: %+v", st)
	}
	for _, w := range st.Warnings {
		if strings.Contains(w, "DGI observó") {
			t.Errorf("the observation is still shown after the correction: %q", w)
		}
	}
	resp, err := http.Get(admin + "/admin/cfes")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`"tipoCFE":\s*211,\s*"serie":\s*"` + serie + `",\s*"nro":\s*` + fmt.Sprint(desde+2) + `,\s*"sobres":\s*2,\s*"estado":\s*"AE"`).Match(b) {
		t.Errorf("DGI's record of the corrected CFC: want 2 envelopes and AE:\n%s", b)
	}

	// A batch file through the running agent: a refused line stores nothing.
	batch := filepath.Join(t.TempDir(), "formularios.json")
	write := func(lines ...[]byte) {
		t.Helper()
		if err := os.WriteFile(batch, []byte("["+string(joinJSON(lines))+"]"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := used(state(), 201)
	write(paperForm(t, 201, "lote-1", serie, desde+20, yesterday, "100", ""), paperForm(t, 201, "lote-2", serie, nro, yesterday, "100", ""))
	out, code := runCLI(t, env, "contingencia", "ingresar", "--archivo", batch)
	if code == 0 || !strings.Contains(out, "línea 1: e-Ticket Contingencia "+serie+"-"+fmt.Sprint(desde+20)+": sin ingresar") ||
		!strings.Contains(out, "línea 2: e-Ticket Contingencia "+serie+"-"+fmt.Sprint(nro)+": rechazado") ||
		!strings.Contains(out, "ya fue ingresado con el uuid paper-1") || used(state(), 201) != before {
		t.Errorf("a batch with a number keyed before: exit %d, 201 used %d (was %d)\n%s", code, used(state(), 201), before, out)
	}
	write(paperForm(t, 201, "lote-1", serie, desde+20, yesterday, "100", ""), paperForm(t, 201, "lote-3", serie, desde+21, yesterday, "100", ""))
	out, code = runCLI(t, env, "contingencia", "ingresar", "--archivo", batch)
	if code != 0 || strings.Count(out, ": ingresado") != 2 || used(state(), 201) != before+2 {
		t.Errorf("a sound batch: exit %d, 201 used %d (was %d)\n%s", code, used(state(), 201), before, out)
	}
}

func joinJSON(parts [][]byte) []byte {
	var out []byte
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return out
}

// TestCLI_ContingenciaIngresar_stopped: with no agent running, the batch
// is keyed in on the store itself, all or nothing; the same file again
// stores nothing twice (same uuids), and JSON Lines are read too.
func TestCLI_ContingenciaIngresar_stopped(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	if _, _, err := profiles.EnsureDefaultWith(dataDir, profiles.Overrides{}); err != nil {
		t.Fatal(err)
	}
	env := procEnv(t, dataDir)
	yesterday := cfe.DateOf(time.Now().In(cfe.Montevideo).AddDate(0, 0, -1)).String()
	file := filepath.Join(t.TempDir(), "formularios.jsonl")
	lines := string(paperForm(t, 201, "s-1", "A", 1, yesterday, "100", "")) + "\n" +
		string(paperForm(t, 211, "s-2", "A", 1, yesterday, "100", "")) + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, env, "contingencia", "ingresar", "--archivo", file)
	if code != 0 || !strings.Contains(out, "línea 1: e-Ticket Contingencia A-1: ingresado (uuid s-1)") ||
		!strings.Contains(out, "línea 2: e-Factura Contingencia A-1: ingresado (uuid s-2)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, code = runCLI(t, env, "contingencia", "ingresar", "--archivo", file)
	if code != 0 || strings.Count(out, ": ya ingresado") != 2 || !strings.Contains(out, "0 comprobantes de contingencia ingresados, 2 ya estaban ingresados") {
		t.Errorf("the same file again: exit %d:\n%s", code, out)
	}
	out, _ = runCLI(t, env, "cae", "list")
	if !regexp.MustCompile(`(?m)^201\s+A\s+1\s+5000\s+1\s+4999\s`).MatchString(out) {
		t.Errorf("cae list does not count the form keyed in:\n%s", out)
	}
}
