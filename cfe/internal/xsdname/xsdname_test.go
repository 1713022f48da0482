package xsdname

import (
	"testing"

	"github.com/beevik/etree"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	d := etree.NewDocument()
	if err := d.ReadFromString(`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns="urn:default" xmlns:a="urn:a">
	<xs:element name="e"><inner xmlns:a="urn:inner" xmlns=""/></xs:element></xs:schema>`); err != nil {
		t.Fatal(err)
	}
	outer := d.Root().SelectElement("element")
	inner := outer.SelectElement("inner")
	tests := []struct {
		name       string
		el         *etree.Element
		v          string
		space, loc string
		ok         bool
	}{
		{"prefix declared on an ancestor", outer, "xs:string", "http://www.w3.org/2001/XMLSchema", "string", true},
		{"default namespace", outer, "T", "urn:default", "T", true},
		{"prefix declared again closer", inner, "a:T", "urn:inner", "T", true},
		{"prefix declared farther", outer, "a:T", "urn:a", "T", true},
		{"default undeclared (xmlns=\"\")", inner, "T", "", "T", true},
		{"xml prefix predeclared", outer, "xml:lang", "http://www.w3.org/XML/1998/namespace", "lang", true},
		{"unbound prefix", outer, "q:T", "", "T", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			space, local, ok := Resolve(tc.el, tc.v)
			if space != tc.space || local != tc.loc || ok != tc.ok {
				t.Errorf("Resolve(%q) = %q, %q, %v; want %q, %q, %v", tc.v, space, local, ok, tc.space, tc.loc, tc.ok)
			}
		})
	}
}
