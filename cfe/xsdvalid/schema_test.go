package xsdvalid

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/cfe/internal/xsdgen"
)

// elementAt finds the declaration of the element at path (local names,
// "eTck/Encabezado/IdDoc/TipoCFE") below e, through content models.
func elementAt(e *element, path string) *element {
	for _, name := range strings.Split(path, "/") {
		if e.typ.content == nil {
			return nil
		}
		e = findElement(e.typ.content, name)
		if e == nil {
			return nil
		}
	}
	return e
}

func findElement(p *particle, name string) *element {
	if p.kind == pElement && p.elem.name.local == name {
		return p.elem
	}
	for _, k := range p.kids {
		if e := findElement(k, name); e != nil {
			return e
		}
	}
	return nil
}

// TestLoad_agreesWithXsdgen: for every element of simple content that
// cfe/internal/xsdgen lists in a CFE (what cfe checks before numbering), the
// loader resolves the same simple type, facet by facet; so a CFE the domain
// accepts is accepted here and the other way round.
func TestLoad_agreesWithXsdgen(t *testing.T) {
	t.Parallel()
	gen, err := xsdgen.Read("../../assets/xsd")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(assets.SchemaCFE, assets.ReadSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := s.elements[qname{"http://cfe.dgi.gub.uy", xsdgen.RootElem}]
	if root == nil {
		t.Fatal("no CFE element")
	}
	bases := map[xsdgen.Base]cfe.XSDBase{xsdgen.BaseString: cfe.XSDString, xsdgen.BaseInteger: cfe.XSDInteger,
		xsdgen.BaseDecimal: cfe.XSDDecimal, xsdgen.BaseDate: cfe.XSDDate, xsdgen.BaseDateTime: cfe.XSDDateTime}
	ws := map[string]cfe.XSDWhiteSpace{"preserve": cfe.XSDPreserve, "replace": cfe.XSDReplace, "collapse": cfe.XSDCollapse}
	absent := func(n int) int { return max(n, 0) }
	if len(gen.Elements) < 400 {
		t.Fatalf("xsdgen lists only %d elements", len(gen.Elements))
	}
	for _, ge := range gen.Elements {
		gt := gen.Types[ge.Type]
		e := elementAt(root, ge.Path)
		if e == nil || e.typ.simple == nil {
			t.Errorf("%s: no element of simple content here", ge.Path)
			continue
		}
		got := e.typ.simple.Type()
		want := cfe.XSDType{Name: got.Name, Base: bases[gt.Base], WhiteSpace: ws[gt.WhiteSpace], Enum: gt.Enum,
			Patterns: gt.Patterns, Length: absent(gt.Length), MinLength: absent(gt.MinLength), MaxLength: absent(gt.MaxLength),
			TotalDigits: absent(gt.TotalDigits), FractionDigits: got.FractionDigits, MinInclusive: gt.MinInclusive, MaxInclusive: gt.MaxInclusive}
		if gt.Base == xsdgen.BaseDecimal {
			want.FractionDigits = gt.FractionDigits
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", ge.Path, got, want)
		}
	}
}

// testSchema loads an entry schema in DGI's namespace with the given body.
func testSchema(body string) (*Schema, error) {
	files := map[string]string{
		"main.xsd": `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:t" targetNamespace="urn:t" elementFormDefault="qualified">` +
			body + `</xs:schema>`,
		"other.xsd": `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:other"><xs:element name="O" type="xs:string"/></xs:schema>`,
	}
	return Load("main.xsd", func(name string) ([]byte, error) {
		f, ok := files[name]
		if !ok {
			return nil, errors.New("no such file")
		}
		return []byte(f), nil
	})
}

// TestLoad_refusesWhatItDoesNotSupport: a construct the engine does not
// implement fails the load, naming it, instead of going unchecked.
func TestLoad_refusesWhatItDoesNotSupport(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, fragment string }{
		{"xs:group", `<xs:group name="G"><xs:sequence/></xs:group>`, "xs:group"},
		{"xs:all", `<xs:element name="A"><xs:complexType><xs:all><xs:element name="B" type="xs:string"/></xs:all></xs:complexType></xs:element>`, "xs:all"},
		{"group reference", `<xs:element name="A"><xs:complexType><xs:sequence><xs:group ref="t:G"/></xs:sequence></xs:complexType></xs:element>`, "xs:group"},
		{"xs:attributeGroup", `<xs:attributeGroup name="G"/>`, "xs:attributeGroup"},
		{"xs:union", `<xs:simpleType name="U"><xs:union memberTypes="xs:string xs:int"/></xs:simpleType>`, "only xs:restriction"},
		{"xs:list", `<xs:simpleType name="L"><xs:list itemType="xs:int"/></xs:simpleType>`, "only xs:restriction"},
		{"identity constraint", `<xs:element name="A"><xs:complexType/><xs:key name="k"><xs:selector xpath="."/><xs:field xpath="@a"/></xs:key></xs:element>`, "xs:key"},
		{"substitution group", `<xs:element name="A" type="xs:string"/><xs:element name="B" type="xs:string" substitutionGroup="t:A"/>`, "substitutionGroup"},
		{"local form", `<xs:element name="A"><xs:complexType><xs:sequence><xs:element name="B" type="xs:string" form="unqualified"/></xs:sequence></xs:complexType></xs:element>`, "form"},
		{"facet minExclusive", `<xs:simpleType name="T"><xs:restriction base="xs:int"><xs:minExclusive value="0"/></xs:restriction></xs:simpleType>`, "minExclusive"},
		{"built-in xs:boolean", `<xs:element name="A" type="xs:boolean"/>`, "xs:boolean"},
		{"pattern escape \\d", `<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:pattern value="\d+"/></xs:restriction></xs:simpleType>`, "differs"},
		{"pattern dot", `<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:pattern value="a.b"/></xs:restriction></xs:simpleType>`, "differs"},
		{"complexContent restriction", `<xs:complexType name="B"><xs:sequence/></xs:complexType><xs:complexType name="C"><xs:complexContent><xs:restriction base="t:B"/></xs:complexContent></xs:complexType>`, "only xs:extension"},
		{"simpleContent restriction", `<xs:complexType name="C"><xs:simpleContent><xs:restriction base="xs:string"/></xs:simpleContent></xs:complexType>`, "only xs:extension"},
		{"length on a number", `<xs:simpleType name="T"><xs:restriction base="xs:int"><xs:length value="2"/></xs:restriction></xs:simpleType>`, "not a string"},
		{"maxLength 0", `<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:maxLength value="0"/></xs:restriction></xs:simpleType>`, "0 is not supported"},
		{"bound on a string", `<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:minInclusive value="a"/></xs:restriction></xs:simpleType>`, "minInclusive"},
		{"undeclared type", `<xs:element name="A" type="t:Nope"/>`, "not declared"},
		{"import without location", `<xs:import namespace="urn:x"/>`, "schemaLocation"},
		{"include of another namespace", `<xs:include schemaLocation="other.xsd"/>`, "target namespace"},
		{"xs:redefine", `<xs:redefine schemaLocation="other.xsd"/>`, "xs:redefine"},
		{"xs:notation", `<xs:notation name="n" public="p"/>`, "xs:notation"},
		{"fixed value of the wrong type", `<xs:element name="A" type="xs:int" fixed="uno"/>`, "not valid"},
		{"a fixed value on element content", `<xs:element name="A" fixed="1"><xs:complexType><xs:sequence/></xs:complexType></xs:element>`, "simple content"},
		{"element declared twice", `<xs:element name="A" type="xs:string"/><xs:element name="A" type="xs:int"/>`, "twice"},
		{"attribute without type", `<xs:element name="A"><xs:complexType><xs:attribute name="a"/></xs:complexType></xs:element>`, "attribute without a simple type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testSchema(tt.body)
			if err == nil || !strings.Contains(err.Error(), tt.fragment) {
				t.Fatalf("got %v, want an error about %q", err, tt.fragment)
			}
		})
	}
	if _, err := testSchema(`<xs:import namespace="urn:other" schemaLocation="other.xsd"/><xs:element name="A" type="xs:string"/>`); err != nil {
		t.Fatalf("a supported schema: %v", err)
	}
}

// TestValidate_reportsWhereAndWhat: each error gives the line, the element
// path, what was expected in Spanish and the same in English for logs.
func TestValidate_reportsWhereAndWhat(t *testing.T) {
	t.Parallel()
	s, err := testSchema(`<xs:import namespace="urn:other" schemaLocation="other.xsd"/>
<xs:element name="R"><xs:complexType><xs:sequence>
  <xs:element name="A" type="xs:int"/>
  <xs:choice minOccurs="0"><xs:element name="B" type="xs:string"/><xs:element name="C" type="xs:string"/></xs:choice>
  <xs:element name="D" minOccurs="0" maxOccurs="2"><xs:simpleType><xs:restriction base="xs:string"><xs:maxLength value="3"/></xs:restriction></xs:simpleType></xs:element>
  <xs:any namespace="##other" minOccurs="0"/>
</xs:sequence><xs:attribute name="v" type="xs:string" use="required" fixed="1.0"/></xs:complexType></xs:element>`)
	if err != nil {
		t.Fatal(err)
	}
	head := `<R xmlns="urn:t" v="1.0">` + "\n"
	tests := []struct {
		name, doc   string
		line        int
		path        string
		msg, detail string
	}{
		{"valid", head + `<A>1</A><B>x</B><D>abc</D><D/><o:O xmlns:o="urn:other">libre</o:O></R>`, 0, "", "", ""},
		{"missing A", head + `<B>x</B></R>`, 2, "/R/B", "el elemento B no se esperaba aquí: se esperaba A", "expected ( A )"},
		{"empty R", head + `</R>`, 1, "/R", "falta un elemento dentro de R: se esperaba A", "missing child element(s)"},
		{"B and C", head + `<A>1</A>` + "\n" + `<B>x</B><C>y</C></R>`, 3, "/R/C", "se esperaba D o un elemento de otro espacio de nombres", "one of ( D, * )"},
		{"three D", head + `<A>1</A><D/><D/>` + "\n\n" + `<D/></R>`, 4, "/R/D[3]", "el elemento D no se esperaba", "not expected"},
		{"A not a number", head + `<A>x</A></R>`, 2, "/R/A", `valor "x" inválido (xs:int): debe ser un número entero`, `value "x" is not valid`},
		{"D too long", head + `<A>1</A><D>abcd</D></R>`, 2, "/R/D", "como máximo 3 caracteres (tiene 4)", "not valid"},
		{"fixed attribute", `<R xmlns="urn:t" v="2.0"><A>1</A></R>`, 1, "/R", `atributo v: el valor debe ser "1.0"`, "fixed value"},
		{"missing attribute", `<R xmlns="urn:t"><A>1</A></R>`, 1, "/R", "falta el atributo obligatorio v en R", "missing required attribute v"},
		{"unknown attribute", `<R xmlns="urn:t" v="1.0" w="1"><A>1</A></R>`, 1, "/R", "el atributo w no está permitido en R", "not allowed"},
		{"text", head + `<A>1</A>hola</R>`, 1, "/R", "no admite texto", "character data is not allowed"},
		{"element in simple content", head + `<A><A>1</A></A></R>`, 2, "/R/A/A", "no admite elementos dentro", "no child elements"},
		{"strict wildcard without declaration", head + `<A>1</A><o:X xmlns:o="urn:other"/></R>`, 2, "/R/X", "no está declarado en el esquema", "strict wildcard"},
		{"other root", `<Q xmlns="urn:t"/>`, 1, "/Q", "no es uno de los que declara el esquema main.xsd", "no declaration for root element {urn:t}Q"},
		{"no namespace", `<R v="1.0"><A>1</A></R>`, 1, "/R", "el elemento raíz R no es uno", "no declaration"},
		{"not well-formed", head + `<A>1</B></R>`, 2, "", "no es XML bien formado", "not well-formed"},
		{"DTD", `<!DOCTYPE R [<!ENTITY e "x">]>` + head + `<A>1</A></R>`, 1, "", "declaración de tipo (DTD)", "document type declarations"},
		{"xsi:type", `<R xmlns="urn:t" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="t:X" v="1.0"><A>1</A></R>`, 1, "/R", "xsi:type no se admite", "not supported"},
		{"too deep", head + `<A>1</A><o:O xmlns:o="urn:other">` + strings.Repeat("<x>", 300) + strings.Repeat("</x>", 300) + `</o:O></R>`, 2, "", "anida más de 256", "deeper than 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate([]byte(tt.doc))
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("valid document refused: %v", err)
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("got %v, want Errors", err)
			}
			e := es[0]
			if e.Line != tt.line || e.Path != tt.path || !strings.Contains(e.Message, tt.msg) || !strings.Contains(e.Detail, tt.detail) {
				t.Errorf("got line %d path %q\n  %s\n  %s\nwant line %d path %q, %q / %q", e.Line, e.Path, e.Message, e.Detail, tt.line, tt.path, tt.msg, tt.detail)
			}
			if !strings.Contains(es.Error(), e.Message) || !strings.Contains(es.Log(), e.Detail) {
				t.Errorf("Error() %q / Log() %q do not carry the first error", es.Error(), es.Log())
			}
		})
	}
}
