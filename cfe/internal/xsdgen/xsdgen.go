// Package xsdgen reads DGI's official XSDs (the set embedded in assets/xsd)
// and writes the Go table of facets that package cfe checks every CFE against
// before a number is reserved: for each element of simple content that a CFE
// document can carry, the enumerations, patterns, lengths, digit limits and
// bounds of its XSD type, with those of every type it derives from.
//
// It understands the part of XML Schema that DGI's CFE schemas use: global and
// anonymous complex types made of xs:sequence, xs:choice and xs:element, simple
// types derived by xs:restriction from named types or built-in ones, and the
// facets below. Anything else it meets on the path of a CFE (an xs:union, a
// facet it does not know, a pattern construct whose meaning differs between
// XSD and Go) is an error, so that a new schema cannot be read wrongly in
// silence.
package xsdgen

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe/internal/xsdname"
)

const (
	nsXS  = "http://www.w3.org/2001/XMLSchema"
	nsCFE = "http://cfe.dgi.gub.uy"
)

// Entry is the schema file Generate starts from and its root element.
const (
	Entry     = assets.SchemaCFE
	RootElem  = "CFE"
	Generated = "dgifacets_gen.go"
)

// Base is the built-in XSD type a simple type derives from, as the names of
// the constants of package cfe spell it.
type Base string

// Built-in bases DGI's CFE schemas use.
const (
	BaseString   Base = "xsdBaseString"
	BaseInteger  Base = "xsdBaseInteger"
	BaseDecimal  Base = "xsdBaseDecimal"
	BaseDate     Base = "xsdBaseDate"
	BaseDateTime Base = "xsdBaseDateTime"
)

// builtin describes one built-in type: its base and the bounds it implies.
type builtin struct {
	base     Base
	min, max string
}

var builtins = map[string]builtin{
	"string":             {base: BaseString},
	"decimal":            {base: BaseDecimal},
	"integer":            {base: BaseInteger},
	"positiveInteger":    {base: BaseInteger, min: "1"},
	"nonNegativeInteger": {base: BaseInteger, min: "0"},
	"int":                {base: BaseInteger, min: "-2147483648", max: "2147483647"},
	"date":               {base: BaseDate},
	"dateTime":           {base: BaseDateTime},
}

// SimpleType is a simple type with the facets of its whole derivation chain.
type SimpleType struct {
	Name       string
	Base       Base
	WhiteSpace string     // preserve, replace or collapse
	Enum       []string   // allowed values; empty: any
	Patterns   [][]string // one list per derivation step: a value matches one pattern of every list
	Length     int        // -1: none
	MinLength  int        // -1: none
	MaxLength  int        // -1: none
	TotalDigits,
	FractionDigits int // -1: none
	MinInclusive, MaxInclusive string // "": none
}

// Element is an element of simple content: its path below the root element
// ("eTck/Encabezado/IdDoc/TipoCFE") and the index of its type in Types.
type Element struct {
	Path string
	Type int
}

// Schema is what Generate writes.
type Schema struct {
	Types    []SimpleType
	Elements []Element
}

// schemaSet holds the top-level declarations of the files of one namespace.
type schemaSet struct {
	simple  map[string]*etree.Element
	complex map[string]*etree.Element
	elems   map[string]*etree.Element
	types   map[*etree.Element]int // simple type declaration → index in out.Types
	out     Schema
}

// Read loads the schema entry (and the files it includes) from dir and
// collects the simple-content elements below the root element.
func Read(dir string) (*Schema, error) {
	s := &schemaSet{simple: map[string]*etree.Element{}, complex: map[string]*etree.Element{},
		elems: map[string]*etree.Element{}, types: map[*etree.Element]int{}}
	if err := s.load(dir, Entry, map[string]bool{}); err != nil {
		return nil, err
	}
	root := s.elems[RootElem]
	if root == nil {
		return nil, fmt.Errorf("%s declares no element %s", Entry, RootElem)
	}
	// The root's own element is not part of the paths.
	if err := s.element(root, "", true); err != nil {
		return nil, err
	}
	return &s.out, nil
}

func (s *schemaSet) load(dir, name string, seen map[string]bool) error {
	if seen[name] {
		return nil
	}
	seen[name] = true
	doc := etree.NewDocument()
	if err := doc.ReadFromFile(filepath.Join(dir, name)); err != nil {
		return err
	}
	top := doc.Root()
	if top == nil || top.Tag != "schema" || top.NamespaceURI() != nsXS {
		return fmt.Errorf("%s: not an XML Schema", name)
	}
	if tns := top.SelectAttrValue("targetNamespace", ""); tns != nsCFE {
		return fmt.Errorf("%s: target namespace %q, want %q", name, tns, nsCFE)
	}
	for _, el := range top.ChildElements() {
		n := el.SelectAttrValue("name", "")
		switch el.Tag {
		case "include":
			if err := s.load(dir, el.SelectAttrValue("schemaLocation", ""), seen); err != nil {
				return err
			}
		case "simpleType":
			s.simple[n] = el
		case "complexType":
			s.complex[n] = el
		case "element":
			s.elems[n] = el
		}
	}
	return nil
}

// qname resolves a QName attribute value of el: its namespace and local
// name; an undeclared prefix resolves to no namespace.
func qname(el *etree.Element, v string) (ns, local string) {
	ns, local, _ = xsdname.Resolve(el, v)
	return ns, local
}

// children returns the XSD child elements of el, annotations left out.
func children(el *etree.Element) []*etree.Element {
	var out []*etree.Element
	for _, c := range el.ChildElements() {
		if c.NamespaceURI() == nsXS && c.Tag != "annotation" {
			out = append(out, c)
		}
	}
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "/" + name
}

// element visits an element declaration at path (its parent's path).
func (s *schemaSet) element(el *etree.Element, path string, root bool) error {
	if ref := el.SelectAttrValue("ref", ""); ref != "" {
		// ds:Signature and xenc:EncryptedData: other namespaces, not CFE data.
		if ns, _ := qname(el, ref); ns == nsCFE {
			return fmt.Errorf("%s: element references in the CFE namespace are not supported (%s)", path, ref)
		}
		return nil
	}
	name := el.SelectAttrValue("name", "")
	if name == "" {
		return fmt.Errorf("%s: element without name", path)
	}
	if !root {
		path = join(path, name)
	}
	if t := el.SelectAttrValue("type", ""); t != "" {
		ns, local := qname(el, t)
		switch {
		case ns == nsXS:
			idx, err := s.builtinType(local, path)
			if err != nil {
				return err
			}
			s.out.Elements = append(s.out.Elements, Element{Path: path, Type: idx})
			return nil
		case ns != nsCFE:
			return fmt.Errorf("%s: type %s of an unknown namespace", path, t)
		case s.complex[local] != nil:
			return s.complexType(s.complex[local], path)
		case s.simple[local] != nil:
			idx, err := s.simpleType(s.simple[local], local)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			s.out.Elements = append(s.out.Elements, Element{Path: path, Type: idx})
			return nil
		default:
			return fmt.Errorf("%s: type %s is not declared", path, t)
		}
	}
	for _, c := range children(el) {
		switch c.Tag {
		case "complexType":
			return s.complexType(c, path)
		case "simpleType":
			idx, err := s.simpleType(c, path)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			s.out.Elements = append(s.out.Elements, Element{Path: path, Type: idx})
			return nil
		default:
			return fmt.Errorf("%s: unsupported xs:%s in an element", path, c.Tag)
		}
	}
	return fmt.Errorf("%s: element without type", path)
}

// complexType visits the content of a complex type; attributes are not
// element content and are left out.
func (s *schemaSet) complexType(ct *etree.Element, path string) error {
	for _, c := range children(ct) {
		switch c.Tag {
		case "sequence", "choice":
			if err := s.group(c, path); err != nil {
				return err
			}
		case "attribute":
		default:
			return fmt.Errorf("%s: unsupported xs:%s in a complex type", path, c.Tag)
		}
	}
	return nil
}

func (s *schemaSet) group(g *etree.Element, path string) error {
	for _, c := range children(g) {
		var err error
		switch c.Tag {
		case "element":
			err = s.element(c, path, false)
		case "sequence", "choice":
			err = s.group(c, path)
		default:
			err = fmt.Errorf("%s: unsupported xs:%s in xs:%s", path, c.Tag, g.Tag)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// builtinType returns the index of a built-in type used directly.
func (s *schemaSet) builtinType(local, path string) (int, error) {
	b, ok := builtins[local]
	if !ok {
		return 0, fmt.Errorf("%s: built-in type xs:%s is not supported", path, local)
	}
	name := "xs:" + local
	for i, t := range s.out.Types {
		if t.Name == name {
			return i, nil
		}
	}
	t := newType(name, b)
	s.out.Types = append(s.out.Types, t)
	return len(s.out.Types) - 1, nil
}

func newType(name string, b builtin) SimpleType {
	ws := "collapse"
	if b.base == BaseString {
		ws = "preserve"
	}
	return SimpleType{Name: name, Base: b.base, WhiteSpace: ws, Length: -1, MinLength: -1, MaxLength: -1,
		TotalDigits: -1, FractionDigits: -1, MinInclusive: b.min, MaxInclusive: b.max}
}

// simpleType returns the index of the simple type declared by st, named
// name (a type name, or the element path of an anonymous type).
func (s *schemaSet) simpleType(st *etree.Element, name string) (int, error) {
	if i, ok := s.types[st]; ok {
		return i, nil
	}
	t, err := s.resolve(st, name, 0)
	if err != nil {
		return 0, err
	}
	s.out.Types = append(s.out.Types, t)
	s.types[st] = len(s.out.Types) - 1
	return len(s.out.Types) - 1, nil
}

// resolve computes the facets of st and of every type it derives from.
func (s *schemaSet) resolve(st *etree.Element, name string, depth int) (SimpleType, error) {
	if depth > 20 {
		return SimpleType{}, fmt.Errorf("type %s: derivation too deep", name)
	}
	kids := children(st)
	if len(kids) != 1 || kids[0].Tag != "restriction" {
		return SimpleType{}, fmt.Errorf("type %s: only xs:restriction is supported", name)
	}
	r := kids[0]
	baseAttr := r.SelectAttrValue("base", "")
	ns, local := qname(r, baseAttr)
	var t SimpleType
	switch {
	case ns == nsXS:
		b, ok := builtins[local]
		if !ok {
			return SimpleType{}, fmt.Errorf("type %s: built-in base xs:%s is not supported", name, local)
		}
		t = newType(name, b)
	case ns == nsCFE && s.simple[local] != nil:
		var err error
		if t, err = s.resolve(s.simple[local], local, depth+1); err != nil {
			return SimpleType{}, err
		}
		t.Name = name
	default:
		return SimpleType{}, fmt.Errorf("type %s: base %s is not a simple type of the schema", name, baseAttr)
	}
	var enum, patterns []string
	for _, f := range children(r) {
		v := f.SelectAttrValue("value", "")
		atoi := func() (int, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("type %s: xs:%s %q is not a length", name, f.Tag, v)
			}
			return n, nil
		}
		var n int
		var err error
		switch f.Tag {
		case "enumeration":
			enum = append(enum, v)
		case "pattern":
			if err = xsdname.CheckPattern(v); err != nil {
				return SimpleType{}, fmt.Errorf("type %s: %w", name, err)
			}
			patterns = append(patterns, v)
		case "length":
			if n, err = atoi(); err == nil {
				t.Length = tighterMax(t.Length, n)
			}
		case "minLength":
			if n, err = atoi(); err == nil && n > t.MinLength {
				t.MinLength = n
			}
		case "maxLength":
			if n, err = atoi(); err == nil {
				t.MaxLength = tighterMax(t.MaxLength, n)
			}
		case "totalDigits":
			if n, err = atoi(); err == nil {
				t.TotalDigits = tighterMax(t.TotalDigits, n)
			}
		case "fractionDigits":
			if n, err = atoi(); err == nil {
				t.FractionDigits = tighterMax(t.FractionDigits, n)
			}
		case "minInclusive":
			t.MinInclusive = v // a derived type's bound lies within its base's
		case "maxInclusive":
			t.MaxInclusive = v
		case "whiteSpace":
			if v != "preserve" && v != "replace" && v != "collapse" {
				return SimpleType{}, fmt.Errorf("type %s: xs:whiteSpace %q", name, v)
			}
			t.WhiteSpace = v
		default:
			return SimpleType{}, fmt.Errorf("type %s: facet xs:%s is not supported", name, f.Tag)
		}
		if err != nil {
			return SimpleType{}, err
		}
	}
	if len(enum) > 0 {
		t.Enum = enum // a derived enumeration is a subset of its base's
	}
	if len(patterns) > 0 {
		t.Patterns = append(append([][]string(nil), t.Patterns...), patterns)
	}
	return t, nil
}

func tighterMax(cur, n int) int {
	if cur < 0 || n < cur {
		return n
	}
	return cur
}

// Source returns the gofmt'ed Go file of the schema, for package pkg.
func (sc *Schema) Source(pkg string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by cfe/internal/xsdgen from assets/xsd/" + Entry + "; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	b.WriteString("// dgiTypes are the simple types of DGI's CFE schema, each with the facets of\n")
	b.WriteString("// its whole derivation chain. An anonymous type is named by its element's path.\n")
	b.WriteString("var dgiTypes = [...]xsdType{\n")
	for i, t := range sc.Types {
		fmt.Fprintf(&b, "%d: {Name: %q, Base: %s, WhiteSpace: xsdWS%s", i, t.Name, t.Base, upperFirst(t.WhiteSpace))
		if len(t.Enum) > 0 {
			fmt.Fprintf(&b, ", Enum: %s", strList(t.Enum))
		}
		if len(t.Patterns) > 0 {
			b.WriteString(", Patterns: [][]string{")
			for j, p := range t.Patterns {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strList(p))
			}
			b.WriteString("}")
		}
		// Package cfe reads 0 as "no limit" for these: none of them is 0 in
		// DGI's schemas (Source refuses one that is).
		for _, f := range []struct {
			name string
			v    int
		}{{"Length", t.Length}, {"MinLength", t.MinLength}, {"MaxLength", t.MaxLength}, {"TotalDigits", t.TotalDigits}} {
			if f.v == 0 && f.name != "MinLength" {
				return nil, fmt.Errorf("type %s: xs:%s 0 is not supported", t.Name, f.name)
			}
			if f.v > 0 {
				fmt.Fprintf(&b, ", %s: %d", f.name, f.v)
			}
		}
		// FractionDigits 0 is a limit: it is written for every decimal type, -1 when absent.
		if t.Base == BaseDecimal {
			fmt.Fprintf(&b, ", FractionDigits: %d", t.FractionDigits)
		}
		if t.MinInclusive != "" {
			fmt.Fprintf(&b, ", MinInclusive: %q", t.MinInclusive)
		}
		if t.MaxInclusive != "" {
			fmt.Fprintf(&b, ", MaxInclusive: %q", t.MaxInclusive)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n")
	b.WriteString("// dgiElements maps the path of every element of simple content below the\n")
	b.WriteString("// root CFE element to its type in dgiTypes.\n")
	b.WriteString("var dgiElements = map[string]int{\n")
	for _, e := range sc.Elements {
		fmt.Fprintf(&b, "%q: %d,\n", e.Path, e.Type)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func strList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// Generate reads the schemas in xsdDir and returns the Go file for package pkg.
func Generate(xsdDir, pkg string) ([]byte, error) {
	sc, err := Read(xsdDir)
	if err != nil {
		return nil, err
	}
	return sc.Source(pkg)
}

// WriteFile generates the file and writes it to out.
func WriteFile(xsdDir, pkg, out string) error {
	src, err := Generate(xsdDir, pkg)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
