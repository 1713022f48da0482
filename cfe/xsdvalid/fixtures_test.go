package xsdvalid_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// doc is a document of the differential tests and the schema it is checked
// against.
type doc struct {
	name    string // a file name, unique in the test
	entry   string // assets.SchemaCFE, ...
	xml     []byte
	lenient bool // xmllint accepts it, XML Schema does not (see lenient)
}

// schema loads DGI's schema set entry.
func schema(t testing.TB, entry string) *xsdvalid.Schema {
	t.Helper()
	s, err := xsdvalid.DGI(entry)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// samples returns DGI's signed samples (../shared/dgi/samples), each with the
// schema verify checks it against; the CAE files against both CAE schemas
// (each is valid against one of them).
func samples(t testing.TB) []doc {
	t.Helper()
	dir := filepath.Join(testtool.SharedDir(t), "dgi", "samples")
	files, err := filepath.Glob(filepath.Join(dir, "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join(dir, "extracted-cfe", "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []doc
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		switch {
		case strings.HasPrefix(name, "CAE_"):
			out = append(out, doc{name: "sample-" + name, entry: assets.SchemaCAE, xml: b}, doc{name: "sample2012-" + name, entry: assets.SchemaCAE2012, xml: b})
		case strings.HasPrefix(name, "Rep_"):
			out = append(out, doc{name: "sample-" + name, entry: assets.SchemaReport, xml: b})
		case strings.HasPrefix(name, "Sob_") && strings.Contains(name, "__CFE_"):
			out = append(out, doc{name: "sample-" + name, entry: assets.SchemaCFE, xml: b})
		case strings.HasPrefix(name, "Sob_"):
			out = append(out, doc{name: "sample-" + name, entry: assets.SchemaEnvelope, xml: b},
				doc{name: "sample-receiver-" + name, entry: assets.SchemaEnvelopeReceiver, xml: b})
		default:
			t.Fatalf("sample %s: unknown kind", name)
		}
	}
	if len(out) < 12 {
		t.Fatalf("only %d samples found in %s", len(out), dir)
	}
	return out
}

var (
	signedOnce sync.Once
	signedDocs []doc
	signedErr  error
)

// testNow is the clock the examples are signed at.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, cfe.Montevideo)

var testEmisor = cfe.Emisor{
	RUCEmisor:    "219999830019",
	RznSoc:       "EMPRESA DE PRUEBA S.A.",
	EmiSucursal:  "Casa central",
	CdgDGISucur:  1,
	DomFiscal:    "Av. 18 de Julio 1000",
	Ciudad:       "Montevideo",
	Departamento: "Montevideo",
}

// signedExamples signs every request of examples/*.json as the agent does
// (the issuer over a real bbolt store and the signer with a test
// certificate), and returns the signed CFEs, then the two envelopes (to DGI
// and to a receiver) that carry them.
func signedExamples(t testing.TB) []doc {
	t.Helper()
	signedOnce.Do(func() { signedDocs, signedErr = signExamples(t) })
	if signedErr != nil {
		t.Fatal(signedErr)
	}
	return signedDocs
}

func signExamples(t testing.TB) ([]doc, error) {
	files, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) < 10 {
		t.Fatalf("only %d examples", len(files))
	}
	dir, err := os.MkdirTemp("", "xsdvalid-examples-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(filepath.Join(dir, "agent.db"), store.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	for _, r := range signer.SandboxRanges(testEmisor.RUCEmisor, cfe.DateOf(testNow)) {
		if err := db.PutRange(context.Background(), r); err != nil {
			return nil, err
		}
	}
	creds, err := signer.GenerateTestCertificate(testEmisor.RUCEmisor, testEmisor.RznSoc, testNow.Add(-time.Hour))
	if err != nil {
		return nil, err
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return testNow }})
	if err != nil {
		return nil, err
	}
	iss := issuer.New(issuer.Config{
		Store:  db,
		Signer: signer.Canonical{Signer: sg},
		Emisor: func() cfe.Emisor { return testEmisor },
		Tax:    cfe.DefaultTaxConfig(),
		Now:    func() time.Time { return testNow },
		Zone: func(time.Time) issuer.ZoneStatus {
			return issuer.ZoneStatus{Name: "America/Montevideo", Source: "test", Offset: -3 * 3600}
		},
	})
	var out []doc
	var envCFEs []cfe.EnvelopeCFE
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r, err := cfe.DecodeRequest(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		res, err := iss.Issue(context.Background(), r)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := "example-" + strings.TrimSuffix(filepath.Base(f), ".json") + ".xml"
		out = append(out, doc{name: name, entry: assets.SchemaCFE, xml: res.Issued.XML})
		envCFEs = append(envCFEs, cfe.EnvelopeCFE{XML: res.Issued.XML})
	}
	for _, k := range []struct {
		kind  cfe.EnvelopeKind
		entry string
	}{{cfe.EnvelopeDGI, assets.SchemaEnvelope}, {cfe.EnvelopeReceiver, assets.SchemaEnvelopeReceiver}} {
		cfes := envCFEs
		if k.kind == cfe.EnvelopeReceiver { // those addressed to DGI's RUC, the receiver here
			cfes = nil
			for _, c := range envCFEs {
				if h, err := cfe.ReadCFEHead(c.XML); err == nil && h.ReceiverRUC() == cfe.RUCDGI {
					cfes = append(cfes, cfe.EnvelopeCFE{XML: c.XML, Adenda: "Pagadero a 30 días"})
				}
			}
		}
		b, err := signer.MakeEnvelope(signer.EnvelopeRequest{Kind: k.kind, RutReceptor: cfe.RUCDGI, IdEmisor: 9,
			Fecha: testNow, CFEs: cfes})
		if err != nil {
			return nil, err
		}
		out = append(out, doc{name: "envelope-" + k.kind.Root() + ".xml", entry: k.entry, xml: b})
	}
	return out, nil
}

// utf8Doc returns b in UTF-8, declared so (the 2016 envelope sample is ISO-8859-1).
func utf8Doc(t testing.TB, b []byte) []byte {
	t.Helper()
	if !bytes.Contains(b[:min(len(b), 100)], []byte(`encoding="iso-8859-1"`)) {
		return b
	}
	u, err := charmap.ISO8859_1.NewDecoder().Bytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(u, []byte(`encoding="iso-8859-1"`), []byte(`encoding="UTF-8"`), 1)
}

// mutation changes a parsed document; it reports false when the document
// has nothing it applies to.
type mutation struct {
	name string
	fn   func(root *etree.Element) bool
}

// lenient are the mutations whose documents libxml2 accepts and XML Schema
// refuses: the test wants xmllint's "valid" and Go's "invalid" (so that a
// libxml2 that starts refusing them is noticed too).
var lenient = map[string]bool{
	// libxml2 skips characters outside base64's alphabet; XML Schema's
	// lexical space has none of them.
	"X509Certificate of non-base64 characters": true,
}

// apply parses b, applies m and writes the result; false when m does not apply.
func apply(t testing.TB, b []byte, m mutation) ([]byte, bool) {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(utf8Doc(t, b)); err != nil {
		t.Fatal(err)
	}
	if !m.fn(d.Root()) {
		return nil, false
	}
	out, err := d.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return out, true
}

// find returns the first element path selects below root (".//Tag" forms).
func find(root *etree.Element, path string) *etree.Element {
	if root.Tag == path {
		return root
	}
	return root.FindElement(".//" + path)
}

// child creates an element named tag in parent's namespace prefix.
func child(parent *etree.Element, tag, text string) *etree.Element {
	el := etree.NewElement(tag)
	el.Space = parent.Space
	el.SetText(text)
	parent.AddChild(el)
	return el
}

// setText sets the text of the first element named tag.
func setText(tag, text string) func(*etree.Element) bool {
	return func(root *etree.Element) bool {
		el := find(root, tag)
		if el == nil {
			return false
		}
		el.SetText(text)
		return true
	}
}

// remove removes the first element named tag.
func remove(tag string) func(*etree.Element) bool {
	return func(root *etree.Element) bool {
		el := find(root, tag)
		if el == nil || el.Parent() == nil {
			return false
		}
		el.Parent().RemoveChild(el)
		return true
	}
}

// swapFirst swaps the first two element children of the first element named tag.
func swapFirst(tag string) func(*etree.Element) bool {
	return func(root *etree.Element) bool {
		el := find(root, tag)
		if el == nil {
			return false
		}
		kids := el.ChildElements()
		if len(kids) < 2 {
			return false
		}
		a, b := kids[0], kids[1]
		ia, ib := a.Index(), b.Index()
		el.RemoveChildAt(ib)
		el.RemoveChildAt(ia)
		el.InsertChildAt(ia, b)
		el.InsertChildAt(ib, a)
		return true
	}
}

// withAttr sets attribute key on the first element named tag.
func withAttr(tag, key, value string) func(*etree.Element) bool {
	return func(root *etree.Element) bool {
		el := find(root, tag)
		if el == nil {
			return false
		}
		el.CreateAttr(key, value)
		return true
	}
}

// withoutAttr removes attribute key from the first element named tag that has it.
func withoutAttr(tag, key string) func(*etree.Element) bool {
	return func(root *etree.Element) bool {
		el := find(root, tag)
		if el == nil || el.RemoveAttr(key) == nil {
			return false
		}
		return true
	}
}

// mutations are the changes the differential test makes to every base
// document they apply to.
var mutations = []mutation{
	{"remove TipoCFE (required)", remove("TipoCFE")},
	{"remove RUCEmisor (required)", remove("RUCEmisor")},
	{"remove Totales (required)", remove("Totales")},
	{"remove Detalle (required)", remove("Detalle")},
	{"remove Caratula (envelope)", remove("Caratula")},
	{"remove TmstFirma", remove("TmstFirma")},
	{"remove FchEmis", remove("FchEmis")},
	{"remove optional FmaPago", remove("FmaPago")},
	{"swap TipoCFE and Serie", swapFirst("IdDoc")},
	{"swap IdDoc and Emisor", swapFirst("Encabezado")},
	{"swap RutReceptor and RUCEmisor", swapFirst("Caratula")},
	{"swap SignedInfo and SignatureValue", swapFirst("Signature")},
	{"unknown element in Emisor", func(r *etree.Element) bool {
		el := find(r, "Emisor")
		return el != nil && child(el, "Sucursal", "1") != nil
	}},
	{"unknown element at the end of the CFE", func(r *etree.Element) bool {
		if r.Tag != "CFE" {
			return false
		}
		child(r, "Extra", "1")
		return true
	}},
	{"element from another namespace in Emisor", func(r *etree.Element) bool {
		el := find(r, "Emisor")
		if el == nil {
			return false
		}
		x := el.CreateElement("x:Otro")
		x.CreateAttr("xmlns:x", "urn:otro")
		return true
	}},
	{"element without namespace in IdDoc", func(r *etree.Element) bool {
		el := find(r, "IdDoc")
		if el == nil {
			return false
		}
		x := el.CreateElement("Otro")
		x.CreateAttr("xmlns", "")
		return true
	}},
	{"element of another namespace in KeyInfo (lax)", func(r *etree.Element) bool {
		el := find(r, "KeyInfo")
		if el == nil {
			return false
		}
		x := el.CreateElement("x:Pista")
		x.CreateAttr("xmlns:x", "urn:otro")
		x.SetText("libre")
		return true
	}},
	{"element of another namespace in SignedInfo", func(r *etree.Element) bool {
		el := find(r, "SignedInfo")
		if el == nil {
			return false
		}
		x := el.CreateElement("x:Pista")
		x.CreateAttr("xmlns:x", "urn:otro")
		return true
	}},
	{"ds:Object with any content", func(r *etree.Element) bool {
		el := find(r, "Signature")
		if el == nil {
			return false
		}
		o := child(el, "Object", "")
		o.CreateAttr("Id", "obj1")
		x := o.CreateElement("x:Nota")
		x.CreateAttr("xmlns:x", "urn:otro")
		x.SetText("texto")
		return true
	}},
	{"two ds:Id attributes with the same value", func(r *etree.Element) bool {
		el := find(r, "Signature")
		if el == nil {
			return false
		}
		el.CreateAttr("Id", "dup")
		o := child(el, "Object", "")
		o.CreateAttr("Id", "dup")
		return true
	}},
	{"Signature Id that is not an NCName", withAttr("Signature", "Id", "1abc")},
	{"Signature Id that is an NCName", withAttr("Signature", "Id", "firma-1")},
	{"KeyInfo element of the ds namespace that does not exist", func(r *etree.Element) bool {
		el := find(r, "KeyInfo")
		return el != nil && child(el, "KeyAlias", "x") != nil
	}},
	{"remove SignatureValue", remove("SignatureValue")},
	{"remove SignedInfo", remove("SignedInfo")},
	{"remove KeyInfo (optional)", remove("KeyInfo")},
	{"remove DigestValue", remove("DigestValue")},
	{"DigestValue not base64", setText("DigestValue", "no es base64!")},
	{"DigestValue base64 with line breaks", setText("DigestValue", "AAAA\nBBBB")},
	{"SignatureValue empty", setText("SignatureValue", "")},
	{"CanonicalizationMethod without Algorithm", withoutAttr("CanonicalizationMethod", "Algorithm")},
	{"Reference without URI (optional)", withoutAttr("Reference", "URI")},
	{"X509SerialNumber not an integer", setText("X509SerialNumber", "12ab")},
	{"text in SignedInfo", func(r *etree.Element) bool {
		el := find(r, "SignedInfo")
		if el == nil {
			return false
		}
		el.CreateText("texto suelto")
		return true
	}},
	{"TipoCFE not in the enumeration", setText("TipoCFE", "999")},
	{"TipoCFE with spaces (collapsed)", setText("TipoCFE", "  101\n ")},
	{"TipoCFE not a number", setText("TipoCFE", "uno")},
	{"Serie lowercase (pattern)", setText("Serie", "a")},
	{"Serie three letters (length)", setText("Serie", "ABC")},
	{"RUCEmisor with letters (pattern)", setText("RUCEmisor", "21999983001X")},
	{"RUCEmisor with a space (whitespace preserved)", setText("RUCEmisor", " 219999830019")},
	{"RUCEmisor empty", setText("RUCEmisor", "")},
	{"RznSoc too long", setText("RznSoc", strings.Repeat("Ñ", 151))},
	{"RznSoc at its maximum", setText("RznSoc", strings.Repeat("Ñ", 150))},
	{"Nro with eight digits (totalDigits)", setText("Nro", "12345678")},
	{"Nro zero (minInclusive)", setText("Nro", "0")},
	{"Nro with a plus sign", setText("Nro", "+7")},
	{"MntTotal with three decimals (fractionDigits)", setText("MntTotal", "10.123")},
	{"MntTotal with trailing zeros", setText("MntTotal", "10.1200")},
	{"MntTotal negative", setText("MntTotal", "-1")},
	{"MntTotal not a number", setText("MntTotal", "1,5")},
	{"TpoMoneda not a currency", setText("TpoMoneda", "ZZZ")},
	{"FchEmis not a date", setText("FchEmis", "2016-13-45")},
	{"FchEmis before 2011-10-01 (minInclusive)", setText("FchEmis", "2010-01-01")},
	{"FchEmis as a date and time", setText("FchEmis", "2016-07-19T10:00:00")},
	{"TmstFirma without zone", setText("TmstFirma", "2016-07-19T15:56:20")},
	{"TmstFirma after 2050 (maxInclusive)", setText("TmstFirma", "2051-01-01T00:00:00-03:00")},
	{"TmstFirma not a date and time", setText("TmstFirma", "ayer")},
	{"IndFact not in the enumeration", setText("IndFact", "9")},
	{"NomItem empty (allowed)", setText("NomItem", "")},
	{"CFE without version", withoutAttr("CFE", "version")},
	{"CFE version 2.0 (fixed 1.0)", withAttr("CFE", "version", "2.0")},
	{"CFE with an extra attribute", withAttr("CFE", "moneda", "UYU")},
	{"Emisor with an attribute", withAttr("Emisor", "id", "1")},
	{"Caratula without version", withoutAttr("Caratula", "version")},
	{"Caratula version 1.00 (fixed string)", withAttr("Caratula", "version", "1.00")},
	{"EnvioCFE without version", withoutAttr("EnvioCFE", "version")},
	{"CantCFE not a number", setText("CantCFE", "ocho")},
	{"CantCFE zero", setText("CantCFE", "0")},
	{"CantCFE 251", setText("CantCFE", "251")},
	{"CantCFE a decimal", setText("CantCFE", "8.0")},
	{"X509Certificate of five base64 digits", setText("X509Certificate", "AAAAA")},
	{"X509Certificate of non-base64 characters", setText("X509Certificate", "@@@")},
	{"DigestValue with non-zero padding bits", setText("DigestValue", "AB==")},
	{"Idemisor eleven digits", setText("Idemisor", "12345678901")},
	{"text in Encabezado", func(r *etree.Element) bool {
		el := find(r, "Encabezado")
		if el == nil {
			return false
		}
		el.InsertChildAt(0, etree.NewText("hola"))
		return true
	}},
	{"whitespace text in Encabezado (allowed)", func(r *etree.Element) bool {
		el := find(r, "Encabezado")
		if el == nil {
			return false
		}
		el.InsertChildAt(0, etree.NewText("\n   \t"))
		return true
	}},
	{"comment in RznSoc (allowed)", func(r *etree.Element) bool {
		el := find(r, "RznSoc")
		if el == nil {
			return false
		}
		el.CreateComment("nota")
		return true
	}},
	{"element inside RUCEmisor", func(r *etree.Element) bool {
		el := find(r, "RUCEmisor")
		return el != nil && child(el, "b", "x") != nil
	}},
	{"xsi:schemaLocation on the root (allowed)", func(r *etree.Element) bool {
		r.CreateAttr("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance")
		r.CreateAttr("xsi:schemaLocation", "http://cfe.dgi.gub.uy CFE.xsd")
		return true
	}},
	{"root element renamed", func(r *etree.Element) bool { r.Tag = "Comprobante"; return true }},
	{"TA not E (fixed)", setText("TA", "X")},
	{"TA empty (the fixed value applies)", setText("TA", "")},
	{"Adenda with elements (any content)", func(r *etree.Element) bool {
		el := find(r, "Adenda")
		if el == nil {
			return false
		}
		child(el, "Nota", "x").CreateAttr("cualquiera", "1")
		return true
	}},
	{"Item repeated", func(r *etree.Element) bool {
		el := find(r, "Item")
		if el == nil {
			return false
		}
		el.Parent().InsertChildAt(el.Index(), el.Copy())
		return true
	}},
	{"Emisor twice", func(r *etree.Element) bool {
		el := find(r, "Emisor")
		if el == nil {
			return false
		}
		el.Parent().InsertChildAt(el.Index(), el.Copy())
		return true
	}},
}

// names of the base documents mutations are applied to.
func isMutationBase(d doc) bool {
	return strings.HasPrefix(d.name, "sample-") && !strings.HasPrefix(d.name, "sample-receiver-") ||
		slices.Contains([]string{"example-e-ticket.xml", "example-e-factura.xml", "example-e-remito.xml",
			"example-e-resguardo.xml", "example-e-factura-exportacion.xml", "example-e-ticket-cuenta-ajena.xml"}, d.name) ||
		strings.HasPrefix(d.name, "envelope-")
}
