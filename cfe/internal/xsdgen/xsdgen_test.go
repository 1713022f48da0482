package xsdgen

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// schema writes an entry schema whose CFE element has the given content
// (inside an xs:sequence) and the given top-level declarations.
func schema(t *testing.T, content, decls string) string {
	t.Helper()
	dir := t.TempDir()
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:D="http://cfe.dgi.gub.uy"
  xmlns:ds="http://www.w3.org/2000/09/xmldsig#" targetNamespace="http://cfe.dgi.gub.uy" elementFormDefault="qualified">
  <xs:include schemaLocation="types.xsd"/>
  <xs:element name="CFE"><xs:complexType><xs:sequence>` + content + `</xs:sequence>
    <xs:attribute name="version" type="xs:string"/></xs:complexType></xs:element>
</xs:schema>`
	types := `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:ns1="http://cfe.dgi.gub.uy"
  targetNamespace="http://cfe.dgi.gub.uy">` + decls + `</xs:schema>`
	if err := os.WriteFile(filepath.Join(dir, Entry), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "types.xsd"), []byte(types), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRead_mergesTheDerivationChain(t *testing.T) {
	t.Parallel()
	dir := schema(t, `
	  <xs:element name="eTck"><xs:complexType><xs:sequence>
	    <xs:element name="Code" type="D:Narrow"/>
	    <xs:choice><xs:element name="Qty" type="xs:positiveInteger"/><xs:element ref="ds:Signature"/></xs:choice>
	    <xs:element name="Amount" type="D:Amount" minOccurs="0"/>
	    <xs:element name="Box" type="D:BoxType" maxOccurs="3"/>
	    <xs:element name="Note"><xs:simpleType><xs:restriction base="D:Wide">
	      <xs:whiteSpace value="collapse"/></xs:restriction></xs:simpleType></xs:element>
	  </xs:sequence></xs:complexType></xs:element>`, `
	  <xs:simpleType name="Wide"><xs:restriction base="xs:string">
	    <xs:maxLength value="30"/><xs:minLength value="1"/><xs:pattern value="[A-Z]+"/><xs:pattern value="[0-9]"/>
	    <xs:enumeration value="A"/><xs:enumeration value="BB"/><xs:enumeration value="CCC"/></xs:restriction></xs:simpleType>
	  <xs:simpleType name="Narrow"><xs:restriction base="ns1:Wide">
	    <xs:maxLength value="2"/><xs:maxLength value="40"/><xs:pattern value="[A-B]+"/>
	    <xs:enumeration value="A"/><xs:enumeration value="BB"/></xs:restriction></xs:simpleType>
	  <xs:simpleType name="Amount"><xs:restriction base="xs:decimal">
	    <xs:totalDigits value="17"/><xs:fractionDigits value="2"/><xs:minInclusive value="0"/></xs:restriction></xs:simpleType>
	  <xs:complexType name="BoxType"><xs:sequence><xs:element name="Id" type="xs:int"/></xs:sequence></xs:complexType>`)
	sc, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]SimpleType{}
	var paths []string
	for _, e := range sc.Elements {
		byPath[e.Path] = sc.Types[e.Type]
		paths = append(paths, e.Path)
	}
	if want := []string{"eTck/Code", "eTck/Qty", "eTck/Amount", "eTck/Box/Id", "eTck/Note"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	code := byPath["eTck/Code"]
	if code.Name != "Narrow" || code.Base != BaseString || code.MaxLength != 2 || code.MinLength != 1 ||
		!reflect.DeepEqual(code.Enum, []string{"A", "BB"}) ||
		!reflect.DeepEqual(code.Patterns, [][]string{{"[A-Z]+", "[0-9]"}, {"[A-B]+"}}) || code.WhiteSpace != "preserve" {
		t.Errorf("Narrow: %+v", code)
	}
	if q := byPath["eTck/Qty"]; q.Base != BaseInteger || q.MinInclusive != "1" || q.WhiteSpace != "collapse" {
		t.Errorf("positiveInteger: %+v", q)
	}
	if a := byPath["eTck/Amount"]; a.Base != BaseDecimal || a.TotalDigits != 17 || a.FractionDigits != 2 || a.MinInclusive != "0" || a.MaxInclusive != "" {
		t.Errorf("Amount: %+v", a)
	}
	if id := byPath["eTck/Box/Id"]; id.MinInclusive != "-2147483648" || id.MaxInclusive != "2147483647" {
		t.Errorf("xs:int: %+v", id)
	}
	if n := byPath["eTck/Note"]; n.Name != "eTck/Note" || n.WhiteSpace != "collapse" || n.MaxLength != 30 {
		t.Errorf("anonymous type: %+v", n)
	}
	src, err := sc.Source("cfe")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"eTck/Code": `, `Name: "Narrow"`, `Patterns: [][]string{[]string{"[A-Z]+", "[0-9]"}, []string{"[A-B]+"}}`,
		`FractionDigits: 2`, "DO NOT EDIT."} {
		if !strings.Contains(string(src), want) {
			t.Errorf("source lacks %s:\n%s", want, src)
		}
	}
}

func TestRead_refusesWhatItDoesNotUnderstand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, decls, fragment string
	}{
		{"union", `<xs:element name="A" type="D:U"/>`,
			`<xs:simpleType name="U"><xs:union memberTypes="xs:string xs:int"/></xs:simpleType>`, "only xs:restriction"},
		{"unknown facet", `<xs:element name="A" type="D:T"/>`,
			`<xs:simpleType name="T"><xs:restriction base="xs:int"><xs:minExclusive value="0"/></xs:restriction></xs:simpleType>`, "minExclusive"},
		{"pattern escape that differs in Go", `<xs:element name="A" type="D:T"/>`,
			`<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:pattern value="\d+"/></xs:restriction></xs:simpleType>`, "differs"},
		{"pattern anchor", `<xs:element name="A" type="D:T"/>`,
			`<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:pattern value="^A"/></xs:restriction></xs:simpleType>`, "differs"},
		{"undeclared type", `<xs:element name="A" type="D:Nope"/>`, ``, "not declared"},
		{"unsupported built-in", `<xs:element name="A" type="xs:boolean"/>`, ``, "xs:boolean"},
		{"complex content", `<xs:element name="A" type="D:C"/>`,
			`<xs:complexType name="C"><xs:complexContent><xs:extension base="D:X"/></xs:complexContent></xs:complexType>`, "complexContent"},
		{"maxLength 0", `<xs:element name="A" type="D:T"/>`,
			`<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:maxLength value="0"/></xs:restriction></xs:simpleType>`, "MaxLength 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(schema(t, tt.content, tt.decls), "cfe")
			if err == nil || !strings.Contains(err.Error(), tt.fragment) {
				t.Fatalf("got %v, want an error about %q", err, tt.fragment)
			}
		})
	}
}
