package cfe_test

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// typeElementSchema is what DGI's CFEType.xsd says about one type element of
// CFEDefType (eTck, eFact, ...). Tests compare the type table and the output of
// the annulment rules against it, an independent source.
type typeElementSchema struct {
	Types           []cfe.Type // enumeration of IdDoc/TipoCFE
	IndFact         []int      // enumeration of Detalle/Item/IndFact
	IndFactOptional bool       // IndFact has minOccurs="0"
	MaxLines        int        // maxOccurs of Detalle/Item
}

var (
	cfeTypeSchemaOnce sync.Once
	cfeTypeSchema     map[cfe.Element]typeElementSchema
	cfeTypeSchemaErr  string
)

// loadTypeSchema parses CFEType.xsd once per test binary.
func loadTypeSchema(t *testing.T) map[cfe.Element]typeElementSchema {
	t.Helper()
	path := testtool.XSD(t, "CFEType.xsd")
	cfeTypeSchemaOnce.Do(func() { cfeTypeSchema, cfeTypeSchemaErr = parseTypeSchema(path) })
	if cfeTypeSchemaErr != "" {
		t.Fatalf("reading %s: %s", path, cfeTypeSchemaErr)
	}
	return cfeTypeSchema
}

func parseTypeSchema(path string) (map[cfe.Element]typeElementSchema, string) {
	doc := etree.NewDocument()
	if err := doc.ReadFromFile(path); err != nil {
		return nil, err.Error()
	}
	complexType := func(name string) *etree.Element {
		return doc.FindElement("//complexType[@name='" + strings.TrimPrefix(name, "DGICFE:") + "']")
	}
	def := complexType("CFEDefType")
	if def == nil {
		return nil, "no complexType CFEDefType"
	}
	out := make(map[cfe.Element]typeElementSchema)
	for _, el := range def.FindElements("./sequence/choice/element") {
		name := el.SelectAttrValue("name", "")
		idDoc := el.FindElement(".//element[@name='IdDoc']")
		item := el.FindElement(".//element[@name='Detalle']//element[@name='Item']")
		if idDoc == nil || item == nil {
			return nil, "element " + name + " has no IdDoc or Detalle/Item"
		}
		idDocType := complexType(idDoc.SelectAttrValue("type", ""))
		itemType := complexType(item.SelectAttrValue("type", ""))
		if idDocType == nil || itemType == nil {
			return nil, "types of IdDoc or Item of " + name + " not found"
		}
		var s typeElementSchema
		var err error
		if s.MaxLines, err = strconv.Atoi(item.SelectAttrValue("maxOccurs", "")); err != nil {
			return nil, "maxOccurs of Item of " + name + ": " + err.Error()
		}
		tipos, err := enumeration(idDocType.FindElement(".//element[@name='TipoCFE']"))
		if err != nil {
			return nil, "TipoCFE of " + name + ": " + err.Error()
		}
		for _, v := range tipos {
			s.Types = append(s.Types, cfe.Type(v))
		}
		indFact := itemType.FindElement(".//element[@name='IndFact']")
		if s.IndFact, err = enumeration(indFact); err != nil {
			return nil, "IndFact of " + name + ": " + err.Error()
		}
		s.IndFactOptional = indFact.SelectAttrValue("minOccurs", "1") == "0"
		out[cfe.Element(name)] = s
	}
	return out, ""
}

// enumeration returns the integer xs:enumeration values under el.
func enumeration(el *etree.Element) ([]int, error) {
	if el == nil {
		return nil, strconv.ErrSyntax
	}
	var vals []int
	for _, e := range el.FindElements(".//enumeration") {
		v, err := strconv.Atoi(e.SelectAttrValue("value", ""))
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, strconv.ErrSyntax
	}
	return vals, nil
}

// dgiTypeCodes returns the CFEType enumeration of DGITypes.xsd: every code DGI defines.
func dgiTypeCodes(t *testing.T) []cfe.Type {
	t.Helper()
	doc := etree.NewDocument()
	path := testtool.XSD(t, "DGITypes.xsd")
	if err := doc.ReadFromFile(path); err != nil {
		t.Fatal(err)
	}
	vals, err := enumeration(doc.FindElement("//simpleType[@name='CFEType']"))
	if err != nil {
		t.Fatalf("%s: CFEType enumeration: %v", path, err)
	}
	codes := make([]cfe.Type, len(vals))
	for i, v := range vals {
		codes[i] = cfe.Type(v)
	}
	slices.Sort(codes)
	return codes
}

// checkIndFactAllowed fails the test when a line of c carries an IndFact that
// CFEType.xsd does not allow in c's type element, or omits a required one.
func checkIndFactAllowed(t *testing.T, c *cfe.CFE) {
	t.Helper()
	info, ok := c.Type().Info()
	if !ok {
		t.Fatalf("type %d is not in the type table", c.Type())
	}
	s := loadTypeSchema(t)[info.Element]
	if !slices.Contains(s.Types, c.Type()) {
		t.Errorf("CFEType.xsd does not allow TipoCFE %d in %s", c.Type(), info.Element)
	}
	for i, it := range c.Items {
		switch {
		case it.IndFact == 0 && !s.IndFactOptional:
			t.Errorf("line %d: %s requires IndFact", i+1, info.Element)
		case it.IndFact != 0 && !slices.Contains(s.IndFact, it.IndFact):
			t.Errorf("line %d: IndFact %d is not allowed in %s (XSD allows %v)", i+1, it.IndFact, info.Element, s.IndFact)
		}
	}
}
