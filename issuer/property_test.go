package issuer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// The property test of issue 14: random requests through the real issuer and
// store. Every CFE signed with 00 must validate against DGI's CFEDGI.xsd
// (xmllint) and verify (xmlsec1); every refusal must leave numbering as it
// was, so the numbers of the signed CFEs are 1, 2, 3… in every serie and the
// store's counters account for exactly those.
//
// The requests are drawn one after the other from the seed, and issued from
// one goroutine per processor: numbering is checked as it stands after all,
// and each refusal against its request.
//
// CI runs propertyDefaultN requests with a fixed seed. More, or another seed:
//
//	CFE_PROPERTY_N=50000 CFE_PROPERTY_SEED=7 go test ./issuer/ -run TestIssuer_Property
//
// (`make fuzz` runs a longer variant.)
const (
	propertyDefaultN    = 2500
	propertyDefaultSeed = 14
)

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q is not a positive number", name, v)
	}
	return n
}

func TestIssuer_Property(t *testing.T) {
	t.Parallel()
	n := envInt(t, "CFE_PROPERTY_N", propertyDefaultN)
	seed := envInt(t, "CFE_PROPERTY_SEED", propertyDefaultSeed)
	if testing.Short() {
		n = min(n, 300)
	}
	xsd := testtool.XSD(t, "CFEDGI.xsd")
	testtool.Require(t, "xmllint")
	testtool.Require(t, "xmlsec1")

	g := newRequestGen(t, uint64(seed))
	h := newHarness(t)
	ctx := context.Background()
	today := cfe.DateOf(testNow)
	before, err := h.db.RangeStatus(ctx, today)
	if err != nil {
		t.Fatal(err)
	}

	requests := make([]string, n)
	for i := range requests {
		requests[i] = g.request(fmt.Sprintf("prop-%d-%07d", seed, i))
	}
	type outcome struct {
		res *issuerResult
		err error
	}
	outcomes := make([]outcome, n)
	next := atomic.Int64{} // the next request to issue
	var callers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		callers.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				req, err := cfe.DecodeRequest(strings.NewReader(requests[i]))
				var res *issuerResult
				if err == nil {
					res, err = issueOnce(ctx, h, req)
				}
				outcomes[i] = outcome{res, err}
			}
		})
	}
	callers.Wait()

	signed := map[string][]byte{}   // file name → signed XML
	bodies := map[string]string{}   // file name → request body
	numbers := map[string][]int64{} // "type serie" → numbers signed
	refusals := map[string]int{}    // codigo_respuesta → count
	for i, body := range requests {
		res, err := outcomes[i].res, outcomes[i].err
		if err == nil {
			name := fmt.Sprintf("%07d-%d-%s-%d.xml", i, res.typ, res.serie, res.nro)
			signed[name], bodies[name] = res.xml, body
			k := fmt.Sprintf("%d %s", res.typ, res.serie)
			numbers[k] = append(numbers[k], res.nro)
			continue
		}
		switch code := cfe.ErrorCode(err); {
		case code == cfe.EINVALID && cfe.RespuestaOf(err) == cfe.RespRechazoValidacion:
		default:
			t.Fatalf("request %d: refused with %s %q (want 01 for the caller's mistakes): %v\n%s",
				i, code, cfe.RespuestaOf(err), err, body)
		}
		refusals[cfe.RespuestaOf(err)]++
	}
	t.Logf("seed %d: %d requests, %d signed, refusals %v", seed, n, len(signed), refusals)
	if len(signed) < n/10 || len(signed) > n*9/10 {
		t.Fatalf("%d of %d requests signed: the generator should give both accepted and refused requests in number", len(signed), n)
	}

	// Numbering: gap-free from 1 in every serie, the counters moved only by
	// the signed CFEs.
	for k, nros := range numbers {
		slices.Sort(nros)
		for j, nro := range nros {
			if nro != int64(j+1) {
				t.Fatalf("serie %s: the signed numbers are not 1…%d without gaps: %v…", k, len(nros), nros[:min(j+2, len(nros))])
			}
		}
	}
	after, err := h.db.RangeStatus(ctx, today)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range after {
		k := fmt.Sprintf("%d %s", st.Range.Type, st.Range.Serie)
		used := int64(len(numbers[k]))
		if st.Used != before[i].Used+used || st.Remaining != before[i].Remaining-used {
			t.Errorf("serie %s: %d signed, but the store went from used %d remaining %d to used %d remaining %d",
				k, used, before[i].Used, before[i].Remaining, st.Used, st.Remaining)
		}
	}

	// Independent tools on every signed CFE. A copy of one, with a currency
	// DGI does not list, goes with a few of them in a batch of their own:
	// both tools must refuse it and only it, or they are not checking what
	// this test believes. (A batch apart, so that the one xmlsec1 call that
	// fails, which testtool then redoes file by file, is a short one.)
	const tampered = "tampered.xml"
	names := slices.Sorted(maps.Keys(signed))
	withTampered := map[string][]byte{}
	for _, name := range names {
		doc := string(signed[name])
		if bad := strings.Replace(doc, "<TpoMoneda>UYU</TpoMoneda>", "<TpoMoneda>ZZZ</TpoMoneda>", 1); bad != doc {
			withTampered[tampered] = []byte(bad)
			break
		}
	}
	if withTampered[tampered] == nil {
		t.Fatal("no signed CFE in UYU to tamper with")
	}
	for _, name := range names[:min(3, len(names))] {
		withTampered[name] = signed[name]
	}
	for _, tool := range []struct {
		name string
		run  func(map[string][]byte) map[string]string
	}{
		{"xmllint (CFEDGI.xsd)", func(docs map[string][]byte) map[string]string { return testtool.ValidateXSDBatch(t, xsd, docs) }},
		{"xmlsec1 --verify", func(docs map[string][]byte) map[string]string { return testtool.XMLSecVerifyBatch(t, docs) }},
	} {
		bad := tool.run(withTampered)
		if bad[tampered] == "" {
			t.Fatalf("%s accepts the tampered copy", tool.name)
		}
		delete(bad, tampered)
		for name, msg := range bad {
			t.Fatalf("%s refuses %s beside the tampered copy:\n%s\nrequest: %s", tool.name, name, msg, bodies[name])
		}
		bad = tool.run(signed)
		for name, msg := range firstN(bad, 5) {
			t.Errorf("%s refuses %s:\n%s\nrequest: %s", tool.name, name, msg, bodies[name])
		}
		if len(bad) > 0 {
			t.Fatalf("%s refuses %d of %d signed CFEs", tool.name, len(bad), len(signed))
		}
	}
}

func firstN(m map[string]string, n int) map[string]string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := map[string]string{}
	for _, k := range keys[:min(n, len(keys))] {
		out[k] = m[k]
	}
	return out
}

type issuerResult struct {
	typ   cfe.Type
	serie string
	nro   int64
	xml   []byte
}

func issueOnce(ctx context.Context, h *harness, req *cfe.Request) (*issuerResult, error) {
	res, err := h.iss.Issue(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.Replayed {
		return nil, fmt.Errorf("uuid %s replayed", req.UUID)
	}
	return &issuerResult{res.Issued.Type, res.Issued.Serie, res.Issued.Nro, res.Issued.XML}, nil
}

// requestGen makes random requests: a valid request of a random type (the
// fixtures' requestJSON and the examples) with a few fields set to random
// values, some within DGI's limits and lists, some outside.
type requestGen struct {
	r     *rand.Rand
	bases []map[string]any
}

func newRequestGen(t *testing.T, seed uint64) *requestGen {
	g := &requestGen{r: rand.New(rand.NewPCG(seed, 14))}
	for _, typ := range cfe.ElectronicTypes() {
		g.bases = append(g.bases, mustMap(t, requestJSON(typ, "x")))
	}
	files, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g.bases = append(g.bases, mustMap(t, string(b)))
	}
	return g
}

func mustMap(t *testing.T, body string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

func (g *requestGen) request(uuid string) string {
	m := deepCopy(g.bases[g.r.IntN(len(g.bases))]).(map[string]any)
	m["uuid"] = uuid
	for range 1 + g.r.IntN(3) {
		mut := mutations[g.r.IntN(len(mutations))]
		g.set(m, strings.Split(mut.path, "."), mut.gen(g))
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// deleteField is a generated value that removes the field.
type deleteField struct{}

// set puts v at path in m, creating objects on the way; "#" picks a random
// element of an existing list (or makes a one-element list).
func (g *requestGen) set(m map[string]any, path []string, v any) {
	cur := m
	for i, key := range path {
		last := i == len(path)-1
		if i+1 < len(path) && path[i+1] == "#" {
			list, _ := cur[key].([]any)
			if len(list) == 0 {
				list = []any{map[string]any{}}
				cur[key] = list
			}
			el, ok := list[g.r.IntN(len(list))].(map[string]any)
			if !ok {
				return
			}
			if i+2 == len(path) {
				return
			}
			g.set(el, path[i+2:], v)
			return
		}
		if last {
			if _, del := v.(deleteField); del {
				delete(cur, key)
			} else {
				cur[key] = v
			}
			return
		}
		next, ok := cur[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[key] = next
		}
		cur = next
	}
}

type mutation struct {
	path string
	gen  func(g *requestGen) any
}

var (
	someCurrencies = []string{"UYU", "USD", "EUR", "ARS", "BRL", "UYI", "CLP", "PYG", "XAU", "GBP"}
	someCountries  = []string{"UY", "AR", "BR", "CL", "PY", "US", "ES", "99", "DE", "CN"}
	runes          = []rune("aAzZ09 ñÑáéü€.-/&<>\"'ºª\t\n漢😀")
	badRunes       = []rune{0x01, 0x1F, 0xFFFE, 0xFFFF}
)

func (g *requestGen) pick(vs []string) string { return vs[g.r.IntN(len(vs))] }

// code returns a code from DGI's list, random letters, or something odd.
func (g *requestGen) code(n int, known []string) any {
	switch g.r.IntN(6) {
	case 0, 1, 2:
		return g.pick(known)
	case 3:
		return g.letters(n, 'A')
	case 4:
		return g.letters(n+g.r.IntN(3)-1, 'A')
	default:
		return g.pickAny("", strings.ToLower(g.pick(known)), " "+g.pick(known), 12, deleteField{})
	}
}

func (g *requestGen) pickAny(vs ...any) any { return vs[g.r.IntN(len(vs))] }

func (g *requestGen) letters(n int, base rune) string {
	var b strings.Builder
	for range max(n, 0) {
		b.WriteRune(base + rune(g.r.IntN(26)))
	}
	return b.String()
}

// text returns a string of about limit characters, sometimes past it, now
// and then with a character XML does not admit.
func (g *requestGen) text(limit int) any {
	if g.r.IntN(10) == 0 {
		return g.pickAny("", deleteField{}, " ", strings.Repeat("x", limit+1))
	}
	n := g.r.IntN(limit + limit/5 + 2)
	var b strings.Builder
	for range n {
		b.WriteRune(runes[g.r.IntN(len(runes))])
	}
	if g.r.IntN(20) == 0 {
		b.WriteRune(badRunes[g.r.IntN(len(badRunes))])
	}
	return b.String()
}

// number returns a decimal string with up to intDigits digits before the
// point and fracDigits after it, sometimes past both, sometimes negative.
func (g *requestGen) number(intDigits, fracDigits int) any {
	if g.r.IntN(15) == 0 {
		return g.pickAny("0", "-1", "abc", deleteField{}, 1e20, "1e3")
	}
	id := 1 + g.r.IntN(intDigits+1)
	fd := g.r.IntN(fracDigits + 2)
	s := strconv.FormatUint(g.r.Uint64N(pow10(min(id, 18))), 10)
	if fd > 0 {
		s += "." + fmt.Sprintf("%0*d", fd, g.r.Uint64N(pow10(fd)))
	}
	if g.r.IntN(12) == 0 {
		s = "-" + s
	}
	return s
}

func pow10(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}

func (g *requestGen) small(lo, hi int) any {
	if g.r.IntN(12) == 0 {
		return g.pickAny(deleteField{}, -1, 1000, "1")
	}
	return lo + g.r.IntN(hi-lo+1)
}

func (g *requestGen) date() any {
	if g.r.IntN(10) == 0 {
		return g.pickAny("2026-02-30", "22/11/2026", "", deleteField{}, "1999-12-31", "2051-01-01")
	}
	return fmt.Sprintf("%04d-%02d-%02d", 2024+g.r.IntN(4), 1+g.r.IntN(12), 1+g.r.IntN(28))
}

var mutations = []mutation{
	{"cfe.totales.tipoMoneda", func(g *requestGen) any { return g.code(3, someCurrencies) }},
	{"cfe.totales.tipoCambio", func(g *requestGen) any { return g.number(4, 3) }},
	{"cfe.totales.montoIvaOtraTasa", func(g *requestGen) any { return g.number(3, 2) }},
	{"cfe.receptor.codigoPais", func(g *requestGen) any { return g.code(2, someCountries) }},
	{"cfe.receptor.tipoDocumento", func(g *requestGen) any { return g.small(0, 8) }},
	{"cfe.receptor.documento", func(g *requestGen) any {
		return g.pickAny("214844360018", "12345672", "21484436001", g.text(14))
	}},
	{"cfe.receptor.documentoExt", func(g *requestGen) any { return g.text(20) }},
	{"cfe.receptor.razonSocial", func(g *requestGen) any { return g.text(150) }},
	{"cfe.receptor.direccion", func(g *requestGen) any { return g.text(70) }},
	{"cfe.receptor.ciudad", func(g *requestGen) any { return g.text(30) }},
	{"cfe.receptor.departamento", func(g *requestGen) any { return g.text(30) }},
	{"cfe.receptor.pais", func(g *requestGen) any { return g.text(30) }},
	{"cfe.receptor.codigoPostal", func(g *requestGen) any { return g.pickAny("11200", "0", "123456", "ab", g.number(5, 0)) }},
	{"cfe.receptor.informacionAdicional", func(g *requestGen) any { return g.text(150) }},
	{"cfe.receptor.lugarEntrega", func(g *requestGen) any { return g.text(100) }},
	{"cfe.receptor.idCompraCliente", func(g *requestGen) any { return g.text(50) }},
	{"cfe.complementoFiscal.codigoPais", func(g *requestGen) any { return g.code(2, someCountries) }},
	{"cfe.complementoFiscal.tipoDocumento", func(g *requestGen) any { return g.small(0, 8) }},
	{"cfe.complementoFiscal.documento", func(g *requestGen) any { return g.pickAny("214844360018", g.text(20)) }},
	{"cfe.complementoFiscal.nombre", func(g *requestGen) any { return g.text(150) }},
	{"cfe.idDoc.formaPago", func(g *requestGen) any { return g.small(0, 3) }},
	{"cfe.idDoc.montoBruto", func(g *requestGen) any { return g.small(0, 4) }},
	{"cfe.idDoc.fechaEmision", func(g *requestGen) any { return g.date() }},
	{"cfe.idDoc.fechaVencimiento", func(g *requestGen) any { return g.date() }},
	{"cfe.idDoc.numeroInterno", func(g *requestGen) any { return g.text(50) }},
	{"cfe.idDoc.informacionAdicional", func(g *requestGen) any { return g.text(150) }},
	{"cfe.idDoc.clausulaVenta", func(g *requestGen) any {
		return g.pickAny("FOB", "CIF", "N/A", "EXW", g.letters(g.r.IntN(5), 'A'), "f0b")
	}},
	{"cfe.idDoc.modalidadVenta", func(g *requestGen) any { return g.small(0, 100) }},
	{"cfe.idDoc.viaTransporte", func(g *requestGen) any { return g.small(0, 10) }},
	{"cfe.idDoc.ivaAlDia", func(g *requestGen) any { return g.small(0, 4) }},
	{"cfe.idDoc.secretoProfesional", func(g *requestGen) any { return g.small(0, 3) }},
	{"cfe.idDoc.indicadorPagoCuentaTerceros", func(g *requestGen) any { return g.small(0, 2) }},
	{"cfe.idDoc.indicadorCobranzaPropia", func(g *requestGen) any { return g.small(0, 2) }},
	{"cfe.idDoc.tipoTraslado", func(g *requestGen) any { return g.small(0, 3) }},
	{"cfe.emisor.nombreComercial", func(g *requestGen) any { return g.text(30) }},
	{"cfe.emisor.giro", func(g *requestGen) any { return g.text(100) }},
	{"cfe.emisor.correo", func(g *requestGen) any { return g.text(80) }},
	{"cfe.emisor.sucursal", func(g *requestGen) any { return g.text(20) }},
	{"cfe.emisor.informacionAdicional", func(g *requestGen) any { return g.text(150) }},
	{"cfe.emisor.telefonos", func(g *requestGen) any {
		return g.pickAny([]any{"29001234"}, []any{g.text(20), g.text(20)}, []any{"1", "2", "3"})
	}},
	{"cfe.detalles.#.indicadorFacturacion", func(g *requestGen) any { return g.small(0, 17) }},
	{"cfe.detalles.#.nombreItem", func(g *requestGen) any { return g.text(80) }},
	{"cfe.detalles.#.descripcion", func(g *requestGen) any { return g.text(1000) }},
	{"cfe.detalles.#.cantidad", func(g *requestGen) any { return g.number(6, 3) }},
	{"cfe.detalles.#.precioUnitario", func(g *requestGen) any { return g.number(6, 6) }},
	{"cfe.detalles.#.unidadMedida", func(g *requestGen) any { return g.text(4) }},
	{"cfe.detalles.#.descuentoPorcentaje", func(g *requestGen) any { return g.number(2, 3) }},
	{"cfe.detalles.#.recargoPorcentaje", func(g *requestGen) any { return g.number(2, 3) }},
	{"cfe.detalles.#.indicadorAgenteResponsable", func(g *requestGen) any { return g.pickAny("R", "A", "X", "", "RA") }},
	{"cfe.detalles.#.ncm", func(g *requestGen) any { return g.pickAny("0101", "12345678", g.text(8)) }},
	{"cfe.detalles.#.codigosItem", func(g *requestGen) any {
		return []any{map[string]any{"tipo": g.pickAny("INT1", "GTIN13", "PLU", g.text(10)), "codigo": g.text(35)}}
	}},
	{"cfe.mediosPago.#.codigo", func(g *requestGen) any { return g.small(0, 30) }},
	{"cfe.mediosPago.#.glosa", func(g *requestGen) any { return g.text(50) }},
	{"cfe.mediosPago.#.valor", func(g *requestGen) any { return g.number(6, 2) }},
	{"cfe.subTotalesInfo", func(g *requestGen) any {
		return []any{map[string]any{"numero": g.small(0, 30), "glosa": g.text(40), "valor": g.number(5, 2)}}
	}},
	{"cfe.referencias.#.serie", func(g *requestGen) any { return g.pickAny("A", "AB", "1A", "a", "Ñ", "123") }},
	{"cfe.referencias.#.razon", func(g *requestGen) any { return g.text(90) }},
	{"cfe.referencias.#.numero", func(g *requestGen) any { return g.small(0, 9999999) }},
	{"cfe.referencias.#.fecha", func(g *requestGen) any { return g.date() }},
	{"adenda", func(g *requestGen) any { return g.text(200) }},
	// Whole zones with random shapes: lines, global adjustments, payments.
	{"cfe.detalles", func(g *requestGen) any {
		lines := make([]any, 1+g.r.IntN(8))
		for i := range lines {
			line := map[string]any{"indicadorFacturacion": g.pickAny(1, 2, 3, 3, 3, 4, 5, 6, 7, 10, 13, 16),
				"nombreItem": g.text(40), "cantidad": g.number(3, 3), "precioUnitario": g.number(5, 2)}
			if g.r.IntN(4) == 0 {
				line["descuentoPorcentaje"] = g.number(1, 2)
			}
			if g.r.IntN(6) == 0 {
				line["unidadMedida"] = g.pickAny("kg", "unid", "lt", "N/A", "metro")
			}
			lines[i] = line
		}
		return lines
	}},
	{"cfe.descuentosRecargosGlobales", func(g *requestGen) any {
		return []any{map[string]any{"tipoMovimiento": g.pickAny("D", "R", "X"), "tipo": g.small(1, 2),
			"glosa": g.text(50), "valor": g.number(3, 2), "indicadorFacturacion": g.pickAny(1, 2, 3, 9)}}
	}},
	{"cfe.mediosPago", func(g *requestGen) any {
		pays := make([]any, g.r.IntN(4))
		for i := range pays {
			pays[i] = map[string]any{"codigo": g.small(1, 20), "glosa": g.text(50), "valor": g.number(5, 2)}
		}
		return pays
	}},
}
