package localapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi"
)

// openAPIDoc is the embedded description, decoded.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(localapi.OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// schemaNamed returns components.schemas[name].
func schemaNamed(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	s, ok := schemas[name].(map[string]any)
	if !ok {
		t.Fatalf("openapi.json has no schema %q", name)
	}
	return s
}

// schemaFields walks the request schema from SignRequest, following $ref
// into the description's own schemas, and lists every property as
// cfe.RequestFields writes a name the decoder accepts.
func schemaFields(t *testing.T, doc map[string]any) []cfe.RequestField {
	t.Helper()
	var out []cfe.RequestField
	var walk func(s map[string]any, prefix string, depth int)
	walk = func(s map[string]any, prefix string, depth int) {
		if depth > 10 {
			t.Fatalf("the request schema nests deeper than the request can (at %s)", prefix)
		}
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			t.Errorf("schema at %q allows other properties: the decoder refuses unknown fields (additionalProperties: false)", prefix)
		}
		for name, v := range props {
			p, _ := v.(map[string]any)
			path := prefix + name
			switch {
			case p["x-cfe-ignorado"] == true:
				out = append(out, cfe.RequestField{Path: path, Kind: cfe.FieldIgnored})
				continue
			case p["x-cfe-alias-de"] != nil:
				out = append(out, cfe.RequestField{Path: path, Kind: cfe.FieldAlias, Of: prefix + fmt.Sprint(p["x-cfe-alias-de"])})
				continue
			}
			out = append(out, cfe.RequestField{Path: path, Kind: cfe.FieldCanonical})
			sub := path
			if p["type"] == "array" {
				p, _ = p["items"].(map[string]any)
				sub += "[]"
			}
			if ref, ok := p["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				target := schemaNamed(t, doc, name)
				if _, isObject := target["properties"]; isObject {
					walk(target, sub+".", depth+1)
				}
			}
		}
	}
	walk(schemaNamed(t, doc, "SignRequest"), "", 0)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// TestOpenAPI_RequestMatchesDecoder fails when cfe.DecodeRequest accepts a
// name the schema of POST /sign-cfe lacks, or the other way round, or when
// they disagree on what a name is (a field, another name of which field, a
// name accepted and ignored).
func TestOpenAPI_RequestMatchesDecoder(t *testing.T) {
	doc := openAPIDoc(t)
	inSchema := map[string]cfe.RequestField{}
	for _, f := range schemaFields(t, doc) {
		inSchema[f.Path] = f
	}
	decoder := cfe.RequestFields()
	if len(decoder) < 140 {
		t.Fatalf("the decoder reports only %d names: the walk of the request shape is broken", len(decoder))
	}
	for _, f := range decoder {
		s, ok := inSchema[f.Path]
		switch {
		case !ok:
			t.Errorf("the decoder accepts %s (%s) but openapi.json does not describe it", f.Path, f.Kind)
		case s != f:
			t.Errorf("%s: decoder %+v, openapi.json %+v", f.Path, f, s)
		}
		delete(inSchema, f.Path)
	}
	for path := range inSchema {
		t.Errorf("openapi.json describes %s, which the decoder refuses as unknown", path)
	}
}

// TestOpenAPI_Routes checks that the description covers every route the
// module serves (GET /printers included) and the error shapes.
func TestOpenAPI_Routes(t *testing.T) {
	doc := openAPIDoc(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi %v, want 3.1.0", doc["openapi"])
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, r := range []struct{ method, path string }{
		{"post", "/sign-cfe"}, {"post", "/pdf"}, {"get", "/health"}, {"get", "/state"},
		{"get", "/printers"}, {"get", "/"}, {"get", "/openapi.json"}, {"get", "/docs"}, {"post", "/backup"}, {"post", "/recuperar"},
	} {
		ops, _ := paths[r.path].(map[string]any)
		if _, ok := ops[r.method]; !ok {
			t.Errorf("openapi.json lacks %s %s", strings.ToUpper(r.method), r.path)
		}
	}
	codes, _ := schemaNamed(t, doc, "SignResponse")["properties"].(map[string]any)["codigo_respuesta"].(map[string]any)["enum"].([]any)
	var got []string
	for _, c := range codes {
		got = append(got, fmt.Sprint(c))
	}
	for _, want := range []string{cfe.RespOK, cfe.RespRechazoValidacion, cfe.RespErrorInterno, "02", "05", "06", "96"} {
		if !slices.Contains(got, want) {
			t.Errorf("codigo_respuesta lists %v, lacks %s", got, want)
		}
	}
	plain, _ := schemaNamed(t, doc, "PlainError")["properties"].(map[string]any)
	if _, ok := plain["ok"]; !ok || plain["error"] == nil {
		t.Errorf("PlainError is not {ok, error}: %v", plain)
	}
}

// validatorScript validates JSON documents against one schema of an
// OpenAPI 3.1 description with python3-jsonschema's Draft 2020-12 validator
// (OpenAPI 3.1's dialect), an implementation independent of this module. It
// prints one line per document: "OK name" or "FAIL name: reasons".
const validatorScript = `
import json, sys
import jsonschema
spec = json.load(open(sys.argv[1]))
root = {"$ref": "#/components/schemas/" + sys.argv[2], "components": spec["components"]}
jsonschema.Draft202012Validator.check_schema(root)
v = jsonschema.Draft202012Validator(root)
for name in sys.argv[3:]:
    errs = sorted(v.iter_errors(json.load(open(name))), key=lambda e: list(e.absolute_path))
    if errs:
        print("FAIL " + name + ": " + "; ".join("/".join(map(str, e.absolute_path)) + " " + e.message for e in errs[:10]))
    else:
        print("OK " + name)
`

// validateWithJSONSchema runs validatorScript on files against schema and
// returns its verdict by file.
func validateWithJSONSchema(t *testing.T, schema string, files []string) map[string]string {
	t.Helper()
	py := testtool.Require(t, "python3")
	if out, err := exec.Command(py, "-c", "import jsonschema").CombinedOutput(); err != nil {
		if os.Getenv("CFE_STRICT_TOOLS") == "1" {
			t.Fatalf("python3-jsonschema is not installed (CFE_STRICT_TOOLS=1): %s", out)
		}
		t.Skipf("python3-jsonschema is not installed; set CFE_STRICT_TOOLS=1 to make this a failure: %s", out)
	}
	dir := t.TempDir()
	specFile, script := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "validate.py")
	if err := os.WriteFile(specFile, localapi.OpenAPI, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(validatorScript), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, append([]string{script, specFile, schema}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("the validator failed: %v\n%s", err, out)
	}
	verdict := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		status, rest, _ := strings.Cut(line, " ")
		name, _, _ := strings.Cut(rest, ": ")
		verdict[name] = status
		if status != "OK" {
			verdict[name] = line
		}
	}
	return verdict
}

// TestOpenAPI_ExamplesValidate validates every example request
// (examples/*.json, and the request examples of the description itself)
// against the schema of POST /sign-cfe with an independent validator; a
// request with an unknown field, one with an amount in exponent notation and
// one that sends a field under both its names must be refused by it, or the
// check would prove nothing.
func TestOpenAPI_ExamplesValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("want the examples of every CFE type in examples/, found %d (%v)", len(files), err)
	}
	dir := t.TempDir()
	doc := openAPIDoc(t)
	example := doc["paths"].(map[string]any)["/sign-cfe"].(map[string]any)["post"].(map[string]any)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["example"]
	bad := map[string]any{
		"spec-example.json": example,
		"unknown.json": map[string]any{"cfe": map[string]any{"idDoc": map[string]any{"tipoCfe": 101},
			"detalles": []any{map[string]any{"nombreItem": "x", "cantidad": 1, "precioUnitario": 1, "precioUnitari": 1}}}},
		"amount.json": map[string]any{"cfe": map[string]any{"idDoc": map[string]any{"tipoCfe": 101},
			"detalles": []any{map[string]any{"nombreItem": "x", "cantidad": "1e3", "precioUnitario": 1}}}},
		"both-names.json": map[string]any{"cfe": map[string]any{"idDoc": map[string]any{"tipoCfe": 101},
			"detalles":   []any{map[string]any{"nombreItem": "x", "cantidad": 1, "precioUnitario": 1}},
			"mediosPago": []any{map[string]any{"valor": 1, "valorPago": 1}}}},
	}
	for name, body := range bad {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	verdict := validateWithJSONSchema(t, "SignRequest", files)
	for _, f := range files {
		got := verdict[f]
		want := "OK"
		if base := filepath.Base(f); base == "unknown.json" || base == "amount.json" || base == "both-names.json" {
			if got == "OK" || got == "" {
				t.Errorf("the validator accepts %s: the schema does not constrain requests", base)
			}
			continue
		}
		if got != want {
			t.Errorf("%s does not validate against SignRequest: %s", filepath.Base(f), got)
		}
	}
}

// TestServer_OpenAPI serves the description and the reference page over
// real HTTP, through the module's security rules.
func TestServer_OpenAPI(t *testing.T) {
	ts := startServer(t, nil)
	resp, raw := ts.send(t, request{method: http.MethodGet, path: "/openapi.json"})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// The served description is the embedded one with this agent's own
	// address in servers; the embedded file keeps the default address.
	var served, embedded map[string]any
	if err := json.Unmarshal(raw, &served); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(localapi.OpenAPI, &embedded); err != nil {
		t.Fatal(err)
	}
	servers, _ := served["servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["url"] != ts.srv.BaseURL() {
		t.Errorf("the served servers are %v, want this agent's address %s", served["servers"], ts.srv.BaseURL())
	}
	if def, _ := embedded["servers"].([]any); len(def) != 1 || def[0].(map[string]any)["url"] != "http://127.0.0.1:18787" {
		t.Errorf("the embedded servers are %v, want the default address", embedded["servers"])
	}
	delete(served, "servers")
	delete(embedded, "servers")
	if !reflect.DeepEqual(served, embedded) {
		t.Error("GET /openapi.json differs from the embedded description in more than its servers")
	}
	if bytes.Contains(raw, []byte(`\u003c`)) && !bytes.Contains(localapi.OpenAPI, []byte(`\u003c`)) {
		t.Error("the served description escapes what the embedded one writes as it is")
	}
	resp, raw = ts.send(t, request{method: http.MethodGet, path: "/docs"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'sha256-") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP of /docs: %q", csp)
	}
	page := string(raw)
	for _, outside := range []string{"http://", "https://", "src=", "<link", "<script"} {
		rest := strings.ReplaceAll(page, "http://127.0.0.1:18787", "")
		if strings.Contains(rest, outside) {
			t.Errorf("the page refers to an outside resource or runs a script (%q)", outside)
		}
	}
	resp, _ = ts.send(t, request{method: http.MethodPost, path: "/docs",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody("{}")})
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /docs: %d, want 405", resp.StatusCode)
	}
}

// TestOpenAPI_AnswersValidate validates real answers of the module, on the
// real issuer, store and signer, against the schemas the description gives
// them: a signed CFE, a rejection of each kind, /health, /state with a
// receipt, and the {ok, error} body of /pdf and of an unknown route.
func TestOpenAPI_AnswersValidate(t *testing.T) {
	a := startAgent(t, now.AddDate(0, -1, 0))
	dir := t.TempDir()
	answers := map[string][]string{} // schema → files
	keep := func(schema, name string, status, wantStatus int, body []byte) {
		t.Helper()
		if status != wantStatus {
			t.Fatalf("%s: HTTP %d, want %d: %s", name, status, wantStatus, body)
		}
		f := filepath.Join(dir, name+".json")
		if err := os.WriteFile(f, body, 0o600); err != nil {
			t.Fatal(err)
		}
		answers[schema] = append(answers[schema], f)
	}
	st, b := a.sign(t, ticket("openapi-firmado"))
	if signResponse(t, b).CodigoRespuesta != "00" {
		t.Fatalf("the ticket was not signed: %s", b)
	}
	keep("SignResponse", "firmado", st, http.StatusOK, b)
	st, b = a.sign(t, `{"uuid":"openapi-01","cfe":{"idDoc":{"tipoCfe":101},"detalles":[{"indicadorFacturacion":3,"nombreItem":"x","cantidad":1}]}}`)
	keep("SignResponse", "rechazo-01", st, http.StatusOK, b)
	st, b = a.sign(t, `{"uuid":"openapi-05","cfe":{"idDoc":{"tipoCfe":182},"receptor":{"tipoDocumento":2,"codigoPais":"UY","documento":"214844360018","razonSocial":"DGI","direccion":"Fernández Crespo 1534","ciudad":"Montevideo","departamento":"Montevideo"},"detalles":[{"retencionesPercepciones":[{"codigo":"1146171","tasa":12,"montoSujeto":100,"valor":12}]}]}}`)
	if code := signResponse(t, b).CodigoRespuesta; code != "05" {
		t.Fatalf("an e-Resguardo without a range answered %s, want 05: %s", code, b)
	}
	keep("SignResponse", "rechazo-05", st, http.StatusOK, b)
	st, b = a.sign(t, `{"cfe":`)
	keep("SignResponse", "json-roto", st, http.StatusBadRequest, b)

	get := func(path string) (int, []byte) {
		resp, b := a.send(t, request{path: path})
		return resp.StatusCode, b
	}
	st, b = get("/health")
	keep("HealthReport", "health", st, http.StatusOK, b)
	st, b = get("/state")
	keep("StateReport", "state", st, http.StatusOK, b)
	// A state with a quarantined CFE (one whose record does not say its
	// number too) and a recent receipt in quarantine.
	held := healthyState()
	held.Outbox = cfe.Outbox{Pending: 1, OldestPending: now.Add(-time.Minute), Quarantined: 2, Quarantine: []cfe.Quarantined{
		{UUID: "venta-0008", Type: cfe.ETicket, Serie: "A", Nro: 8, CommittedAt: now.Add(-time.Hour), Since: now, Reason: "su XML firmado guardado está dañado"},
		{UUID: "venta-0009", Since: now, Reason: "su registro no se puede leer"}}}
	held.Receipts.Recent = []*cfe.Issued{{UUID: "venta-0008", Type: cfe.ETicket, Serie: "A", Nro: 8, TmstFirma: now,
		Delivery: cfe.Delivery{State: cfe.DeliveryQuarantined}}}
	quarantined := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: held} })
	resp, b := quarantined.send(t, request{path: "/state"})
	keep("StateReport", "state-cuarentena", resp.StatusCode, http.StatusOK, b)
	resp, b = quarantined.send(t, request{path: "/health"})
	keep("HealthReport", "health-cuarentena", resp.StatusCode, http.StatusOK, b)
	// A state in direct mode (dgi block) with a CFE DGI rejected.
	direct := healthyState()
	direct.DGI = &health.DGIStatus{Counts: cfe.DGICounts{Enviados: 3, Aceptados: 2, Rechazados: 1, Pendientes: 1, Desconocidos: 1},
		Rejections: []cfe.DGIRejection{{UUID: "venta-0003", Type: cfe.ETicket, Serie: "A", Nro: 3, TmstFirma: now,
			Reasons: []cfe.DGIReason{{Codigo: "E05", Glosa: "Formato"}}, At: now}}, UrgentAfter: 10 * time.Minute,
		Reports: []cfe.DailyReportState{
			{Date: cfe.DateOf(now.In(cfe.Montevideo)).AddDays(-1)},
			{Date: cfe.DateOf(now.In(cfe.Montevideo)).AddDays(-2), Seq: 1, State: "BR", ReceiverID: 8,
				Reasons: []cfe.DGIReason{{Codigo: "R05", Glosa: "Secuencia", Detalle: "se esperaba 2"}}, SentAt: now, CheckedAt: now},
			{Date: cfe.DateOf(now.In(cfe.Montevideo)).AddDays(-3), Seq: 2, State: "DR", ReceiverID: 7, SentAt: now, CheckedAt: now}}}
	withDGI := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: direct} })
	resp, b = withDGI.send(t, request{path: "/state"})
	if !strings.Contains(string(b), `"dgi":{"enviados":3,"aceptados":2,"rechazados":1,"observados":0,"pendientes":1,"desconocidos":1,"reportes":[{`) ||
		!strings.Contains(string(b), `"estado":"BR","motivos":[{"codigo":"R05"`) {
		t.Errorf("/state in direct mode lacks its dgi block: %s", b)
	}
	keep("StateReport", "state-dgi", resp.StatusCode, http.StatusOK, b)
	resp, b = a.send(t, request{method: http.MethodPost, path: "/pdf",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(`{"uuid":"openapi-firmado","impresora":"archivo"}`)})
	keep("PlainError", "pdf-sin-impresion", resp.StatusCode, http.StatusServiceUnavailable, b)
	st, b = get("/no-existe")
	keep("PlainError", "ruta-desconocida", st, http.StatusNotFound, b)

	for schema, files := range answers {
		verdicts := validateWithJSONSchema(t, schema, files)
		for _, f := range files {
			if v := verdicts[f]; v != "OK" {
				t.Errorf("%s does not match %s: %q", filepath.Base(f), schema, v)
			}
		}
	}
}
