// Package xsdvalid validates XML documents against a set of XML Schema files
// without an external program: it is how `cfe-agent verify` checks DGI's
// official schema (assets/xsd) where xmllint is not installed (Windows).
//
// Load reads a schema set (xs:schema with xs:include and xs:import) into
// element declarations, complex types and content models, once; Validate then
// checks documents against it. The simple types are checked by package cfe's
// facet engine (cfe.CompileXSDType), the same one that checks a CFE before it
// is numbered, so the two cannot disagree on a value.
//
// The engine understands the part of XML Schema 1.0 that DGI's schemas, the
// W3C XML-DSig schema and the W3C XML-Encryption schema use: global and
// local element declarations and element references, named and anonymous
// complex and simple types, xs:sequence and xs:choice with minOccurs and
// maxOccurs, mixed content, xs:simpleContent extension, xs:complexContent
// extension, attributes (use, fixed, default, global references), xs:any and
// xs:anyAttribute wildcards (strict, lax, skip), simple types derived by
// xs:restriction from the built-in types below, and the facets enumeration,
// pattern, length, minLength, maxLength, totalDigits, fractionDigits,
// minInclusive, maxInclusive and whiteSpace. Load refuses anything else it
// meets (xs:group, xs:all, xs:union, xs:list, identity constraints,
// substitution groups, another built-in type, a pattern whose meaning differs
// between XSD and Go's regexp, ...), so that no part of a schema goes
// unchecked in silence; Validate refuses xsi:type and xsi:nil for the same
// reason.
//
// Validate first checks that the document is well-formed XML 1.0 with
// namespaces, as libxml2 does: encoding/xml alone lets through repeated
// attributes, unbound prefixes, content after the root element and the like
// (see wellformed.go).
package xsdvalid

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/cfe/internal/xsdname"
)

const (
	nsXS  = "http://www.w3.org/2001/XMLSchema"
	nsXSI = "http://www.w3.org/2001/XMLSchema-instance"
)

// qname is an expanded name: namespace URI and local name.
type qname struct{ ns, local string }

// Schema is a loaded schema set, safe for concurrent use by Validate.
type Schema struct {
	entry    string
	elements map[qname]*element // global element declarations
	attrs    map[qname]*attribute

	// raw top-level components, by expanded name, while loading
	rawElems, rawComplex, rawSimple, rawAttrs map[qname]*etree.Element
	// resolved components, by declaration, while loading
	elemMemo  map[*etree.Element]*element
	typeMemo  map[*etree.Element]*typeDef
	builtins  map[string]*typeDef
	attrMemo  map[*etree.Element]*attribute
	files     map[string]bool
	anonTypes int
}

// element is an element declaration.
type element struct {
	name     qname
	typ      *typeDef
	fixed    *string // the fixed value, nil when none
	dflt     *string // the default value, nil when none
	abstract bool
}

// typeDef is a simple type or a complex type.
type typeDef struct {
	name    string
	simple  *cfe.XSDFacets // a simple type, or a complex type's simple content
	complex bool
	mixed   bool
	content *particle // element content; nil: empty or simple content
	attrs   []*attribute
	anyAttr *wildcard
	// abstract complex types may not be used by an element directly.
	abstract bool
}

// attribute is an attribute declaration.
type attribute struct {
	name                 qname
	typ                  *cfe.XSDFacets
	required, prohibited bool
	fixed, dflt          *string
}

// Kinds of particle.
const (
	pElement = iota + 1
	pAny
	pSequence
	pChoice
)

// particle is a term of a content model with its occurrence bounds.
type particle struct {
	kind     int
	min, max int // max < 0: unbounded
	elem     *element
	any      *wildcard
	kids     []*particle
	nullable bool // it can match no element at all
}

// wildcard is xs:any or xs:anyAttribute.
type wildcard struct {
	all     bool            // ##any
	other   string          // ##other: any namespace but this one (and not "no namespace")
	list    map[string]bool // an explicit list ("" is ##local)
	process string          // strict, lax or skip
}

func (w *wildcard) allows(ns string) bool {
	switch {
	case w.all:
		return true
	case w.list != nil:
		return w.list[ns]
	}
	return ns != w.other && ns != ""
}

// Load reads the schema set whose entry file is entry; read returns a file
// of the set by the name xs:include and xs:import give as schemaLocation. It
// fails on a schema construct the engine does not support.
func Load(entry string, read func(name string) ([]byte, error)) (*Schema, error) {
	s := &Schema{
		entry:      entry,
		elements:   map[qname]*element{},
		attrs:      map[qname]*attribute{},
		rawElems:   map[qname]*etree.Element{},
		rawComplex: map[qname]*etree.Element{},
		rawSimple:  map[qname]*etree.Element{},
		rawAttrs:   map[qname]*etree.Element{},
		elemMemo:   map[*etree.Element]*element{},
		typeMemo:   map[*etree.Element]*typeDef{},
		builtins:   map[string]*typeDef{},
		attrMemo:   map[*etree.Element]*attribute{},
		files:      map[string]bool{},
	}
	if err := s.load(entry, "", true, read); err != nil {
		return nil, err
	}
	// Resolve every component now, so that an unsupported construct fails
	// here and not when a document first reaches it.
	for q, el := range s.rawComplex {
		if _, err := s.complexType(el, q.local); err != nil {
			return nil, err
		}
	}
	for q, el := range s.rawSimple {
		if _, err := s.simpleType(el, q.local); err != nil {
			return nil, err
		}
	}
	for q, el := range s.rawAttrs {
		a, err := s.attribute(el, true)
		if err != nil {
			return nil, err
		}
		s.attrs[q] = a
	}
	for q, el := range s.rawElems {
		e, err := s.elementDecl(el, true)
		if err != nil {
			return nil, err
		}
		s.elements[q] = e
	}
	s.rawElems, s.rawComplex, s.rawSimple, s.rawAttrs = nil, nil, nil, nil
	s.elemMemo, s.typeMemo, s.attrMemo = nil, nil, nil
	return s, nil
}

// schemaErr is a load error at a schema component.
func schemaErr(el *etree.Element, format string, args ...any) error {
	where := ""
	if el != nil {
		where = el.GetPath()
		if n := el.SelectAttrValue("name", ""); n != "" {
			where += "[@name='" + n + "']"
		}
		where += ": "
	}
	return fmt.Errorf("xsdvalid: %s%s", where, fmt.Sprintf(format, args...))
}

// load reads one schema file; wantNS is the target namespace xs:include or
// xs:import expects (an included file must have the including file's:
// chameleon includes are not supported), checked unless it is the entry.
func (s *Schema) load(name, wantNS string, entry bool, read func(string) ([]byte, error)) error {
	if s.files[name] {
		return nil
	}
	s.files[name] = true
	b, err := read(name)
	if err != nil {
		return fmt.Errorf("xsdvalid: reading %s: %w", name, err)
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(b); err != nil {
		return fmt.Errorf("xsdvalid: %s: %w", name, err)
	}
	top := doc.Root()
	if top == nil || top.Tag != "schema" || top.NamespaceURI() != nsXS {
		return fmt.Errorf("xsdvalid: %s is not an XML Schema", name)
	}
	tns := top.SelectAttrValue("targetNamespace", "")
	if !entry && tns != wantNS {
		return fmt.Errorf("xsdvalid: %s: target namespace %q, included or imported as %q", name, tns, wantNS)
	}
	for _, a := range top.Attr {
		switch a.FullKey() {
		case "elementFormDefault", "attributeFormDefault":
			if a.Value != "qualified" && a.Value != "unqualified" {
				return fmt.Errorf("xsdvalid: %s: %s %q", name, a.Key, a.Value)
			}
		}
	}
	for _, el := range xsChildren(top) {
		q := qname{tns, el.SelectAttrValue("name", "")}
		var into map[qname]*etree.Element
		switch el.Tag {
		case "include":
			loc := el.SelectAttrValue("schemaLocation", "")
			if err := s.load(loc, tns, false, read); err != nil {
				return err
			}
			continue
		case "import":
			ns, loc := el.SelectAttrValue("namespace", ""), el.SelectAttrValue("schemaLocation", "")
			if loc == "" {
				return schemaErr(el, "xs:import without schemaLocation is not supported")
			}
			if err := s.load(loc, ns, false, read); err != nil {
				return err
			}
			continue
		case "element":
			into = s.rawElems
		case "complexType":
			into = s.rawComplex
		case "simpleType":
			into = s.rawSimple
		case "attribute":
			into = s.rawAttrs
		default:
			return schemaErr(el, "xs:%s is not supported", el.Tag)
		}
		if q.local == "" {
			return schemaErr(el, "top-level xs:%s without name", el.Tag)
		}
		if prev := into[q]; prev != nil {
			return schemaErr(el, "xs:%s %s is declared twice", el.Tag, q.local)
		}
		into[q] = el
	}
	return nil
}

// xsChildren returns the XSD child elements of el, annotations left out.
func xsChildren(el *etree.Element) []*etree.Element {
	var out []*etree.Element
	for _, c := range el.ChildElements() {
		if c.NamespaceURI() == nsXS && c.Tag != "annotation" {
			out = append(out, c)
		}
	}
	return out
}

// schemaRoot returns the xs:schema element el belongs to.
func schemaRoot(el *etree.Element) *etree.Element {
	for el.Parent() != nil && el.Parent().Parent() != nil {
		el = el.Parent()
	}
	return el
}

func targetNS(el *etree.Element) string {
	return schemaRoot(el).SelectAttrValue("targetNamespace", "")
}

// resolveQName resolves a QName attribute value in el's scope.
func resolveQName(el *etree.Element, v string) (qname, error) {
	space, local, ok := xsdname.Resolve(el, v)
	if !ok {
		prefix, _, _ := strings.Cut(v, ":")
		return qname{}, schemaErr(el, "prefix %q of %q is not declared", prefix, v)
	}
	return qname{space, local}, nil
}

// checkAttrs refuses attributes of a schema element that the engine would
// otherwise ignore; known lists those it handles or that do not change
// validation (documentation, derivation controls without xsi:type).
func checkAttrs(el *etree.Element, known ...string) error {
	for _, a := range el.Attr {
		if a.Space == "xmlns" || a.Key == "xmlns" || a.Space != "" {
			continue
		}
		found := false
		for _, k := range known {
			if a.Key == k {
				found = true
				break
			}
		}
		if !found {
			return schemaErr(el, "attribute %s of xs:%s is not supported", a.Key, el.Tag)
		}
	}
	return nil
}

// occurs reads minOccurs and maxOccurs.
func occurs(el *etree.Element) (minO, maxO int, err error) {
	minO, maxO = 1, 1
	if v := el.SelectAttrValue("minOccurs", ""); v != "" {
		if minO, err = strconv.Atoi(v); err != nil || minO < 0 {
			return 0, 0, schemaErr(el, "minOccurs %q", v)
		}
	}
	if v := el.SelectAttrValue("maxOccurs", ""); v == "unbounded" {
		maxO = -1
	} else if v != "" {
		if maxO, err = strconv.Atoi(v); err != nil || maxO < 0 {
			return 0, 0, schemaErr(el, "maxOccurs %q", v)
		}
	}
	if maxO >= 0 && maxO < minO {
		return 0, 0, schemaErr(el, "maxOccurs %d is less than minOccurs %d", maxO, minO)
	}
	return minO, maxO, nil
}

// elementDecl resolves an element declaration (global, or local in a
// content model).
func (s *Schema) elementDecl(el *etree.Element, global bool) (*element, error) {
	if e, ok := s.elemMemo[el]; ok {
		return e, nil
	}
	if err := checkAttrs(el, "name", "type", "minOccurs", "maxOccurs", "fixed", "default", "abstract", "nillable", "block", "final", "id"); err != nil {
		return nil, err
	}
	name := el.SelectAttrValue("name", "")
	if name == "" {
		return nil, schemaErr(el, "element without name")
	}
	e := &element{name: qname{local: name}}
	if global || schemaRoot(el).SelectAttrValue("elementFormDefault", "unqualified") == "qualified" {
		e.name.ns = targetNS(el)
	}
	s.elemMemo[el] = e
	if v, ok := attrValue(el, "fixed"); ok {
		e.fixed = &v
	}
	if v, ok := attrValue(el, "default"); ok {
		e.dflt = &v
	}
	e.abstract = el.SelectAttrValue("abstract", "false") == "true"
	kids := xsChildren(el)
	for _, k := range kids {
		if k.Tag != "complexType" && k.Tag != "simpleType" {
			return nil, schemaErr(k, "xs:%s in an element is not supported", k.Tag)
		}
	}
	typeAttr := el.SelectAttrValue("type", "")
	var err error
	switch {
	case typeAttr != "" && len(kids) == 0:
		e.typ, err = s.typeByName(el, typeAttr)
	case typeAttr == "" && len(kids) == 1 && kids[0].Tag == "complexType":
		e.typ, err = s.complexType(kids[0], "")
	case typeAttr == "" && len(kids) == 1 && kids[0].Tag == "simpleType":
		e.typ, err = s.simpleType(kids[0], "")
	case typeAttr == "" && len(kids) == 0:
		e.typ = anyType // an element without a type is of xs:anyType
	default:
		err = schemaErr(el, "an element with both a type attribute and an anonymous type, or two anonymous types")
	}
	if err != nil {
		return nil, err
	}
	if e.fixed != nil || e.dflt != nil {
		v := e.fixed
		if v == nil {
			v = e.dflt
		}
		if e.typ.simple == nil || e.typ.content != nil {
			return nil, schemaErr(el, "a fixed or default value needs simple content")
		}
		if msg := e.typ.simple.Check(*v); msg != "" {
			return nil, schemaErr(el, "fixed or default value %q is not valid: %s", *v, msg)
		}
	}
	return e, nil
}

func attrValue(el *etree.Element, key string) (string, bool) {
	a := el.SelectAttr(key)
	if a == nil {
		return "", false
	}
	return a.Value, true
}

// typeByName resolves a type name used in el.
func (s *Schema) typeByName(el *etree.Element, v string) (*typeDef, error) {
	q, err := resolveQName(el, v)
	if err != nil {
		return nil, err
	}
	if q == (qname{nsXS, "anyType"}) {
		return anyType, nil
	}
	if q.ns == nsXS {
		return s.builtin(el, q.local)
	}
	if raw := s.rawComplex[q]; raw != nil {
		return s.complexType(raw, q.local)
	}
	if raw := s.rawSimple[q]; raw != nil {
		return s.simpleType(raw, q.local)
	}
	return nil, schemaErr(el, "type %s is not declared", v)
}

// anyType is xs:anyType: any attributes and any content, the elements in it
// checked when the schema declares them (lax).
var anyType = &typeDef{
	name:    "xs:anyType",
	complex: true,
	mixed:   true,
	content: &particle{kind: pAny, min: 0, max: -1, nullable: true, any: &wildcard{all: true, process: "lax"}},
	anyAttr: &wildcard{all: true, process: "lax"},
}

// builtinTypes are the built-in simple types the engine supports.
var builtinTypes = map[string]cfe.XSDType{
	"string":             {Base: cfe.XSDString, WhiteSpace: cfe.XSDPreserve},
	"decimal":            {Base: cfe.XSDDecimal},
	"integer":            {Base: cfe.XSDInteger},
	"positiveInteger":    {Base: cfe.XSDInteger, MinInclusive: "1"},
	"nonNegativeInteger": {Base: cfe.XSDInteger, MinInclusive: "0"},
	"int":                {Base: cfe.XSDInteger, MinInclusive: "-2147483648", MaxInclusive: "2147483647"},
	"date":               {Base: cfe.XSDDate},
	"dateTime":           {Base: cfe.XSDDateTime},
	"base64Binary":       {Base: cfe.XSDBase64Binary},
	"anyURI":             {Base: cfe.XSDAnyURI},
	"ID":                 {Base: cfe.XSDID},
}

func (s *Schema) builtin(el *etree.Element, local string) (*typeDef, error) {
	if t, ok := s.builtins[local]; ok {
		return t, nil
	}
	bt, ok := builtinTypes[local]
	if !ok {
		return nil, schemaErr(el, "built-in type xs:%s is not supported", local)
	}
	bt.Name = "xs:" + local
	if bt.WhiteSpace == 0 {
		bt.WhiteSpace = cfe.XSDCollapse
	}
	bt.FractionDigits = -1
	f, err := cfe.CompileXSDType(bt)
	if err != nil {
		return nil, schemaErr(el, "%v", err)
	}
	t := &typeDef{name: bt.Name, simple: f}
	s.builtins[local] = t
	return t, nil
}

// anonName names an anonymous type for messages.
func (s *Schema) anonName(el *etree.Element) string {
	for p := el.Parent(); p != nil; p = p.Parent() {
		if n := p.SelectAttrValue("name", ""); n != "" {
			return n
		}
	}
	s.anonTypes++
	return fmt.Sprintf("anonymous%d", s.anonTypes)
}

// simpleType resolves a simple type: its facets with those of every type it
// derives from, as cfe/internal/xsdgen resolves DGI's (TestLoad_agreesWithXsdgen).
func (s *Schema) simpleType(st *etree.Element, name string) (*typeDef, error) {
	if t, ok := s.typeMemo[st]; ok {
		if t == nil {
			return nil, schemaErr(st, "simple type derived from itself")
		}
		return t, nil
	}
	s.typeMemo[st] = nil
	if name == "" {
		name = s.anonName(st)
	}
	if err := checkAttrs(st, "name", "final", "id"); err != nil {
		return nil, err
	}
	kids := xsChildren(st)
	if len(kids) != 1 || kids[0].Tag != "restriction" {
		return nil, schemaErr(st, "only xs:restriction is supported in a simple type")
	}
	r := kids[0]
	if err := checkAttrs(r, "base", "id"); err != nil {
		return nil, err
	}
	baseAttr := r.SelectAttrValue("base", "")
	if baseAttr == "" {
		return nil, schemaErr(r, "xs:restriction without base is not supported")
	}
	base, err := s.typeByName(r, baseAttr)
	if err != nil {
		return nil, err
	}
	if base.simple == nil || base.complex {
		return nil, schemaErr(r, "base %s is not a simple type", baseAttr)
	}
	t := base.simple.Type()
	t.Name = name
	t.Patterns = append([][]string(nil), t.Patterns...)
	var enum, patterns []string
	for _, f := range xsChildren(r) {
		if err := checkAttrs(f, "value", "fixed", "id"); err != nil {
			return nil, err
		}
		v := f.SelectAttrValue("value", "")
		n, nerr := strconv.Atoi(v)
		if nerr != nil || n < 0 {
			n = -1
		}
		lengthLike := func(cur *int, min bool) error {
			switch {
			case n < 0:
				return schemaErr(f, "xs:%s %q is not a length", f.Tag, v)
			case n == 0 && !min:
				return schemaErr(f, "xs:%s 0 is not supported", f.Tag)
			case f.Tag == "totalDigits" || f.Tag == "fractionDigits":
				if t.Base != cfe.XSDDecimal && t.Base != cfe.XSDInteger {
					return schemaErr(f, "xs:%s on a type that is not a number", f.Tag)
				}
			case t.Base != cfe.XSDString && t.Base != cfe.XSDAnyURI && t.Base != cfe.XSDID:
				return schemaErr(f, "xs:%s on a type that is not a string is not supported", f.Tag)
			}
			switch {
			case min:
				*cur = max(*cur, n)
			case *cur <= 0 || n < *cur:
				*cur = n
			}
			return nil
		}
		switch f.Tag {
		case "enumeration":
			enum = append(enum, v)
		case "pattern":
			if err := xsdname.CheckPattern(v); err != nil {
				return nil, schemaErr(f, "%v", err)
			}
			patterns = append(patterns, v)
		case "length":
			err = lengthLike(&t.Length, false)
		case "minLength":
			err = lengthLike(&t.MinLength, true)
		case "maxLength":
			err = lengthLike(&t.MaxLength, false)
		case "totalDigits":
			err = lengthLike(&t.TotalDigits, false)
		case "fractionDigits":
			if n < 0 {
				err = schemaErr(f, "xs:fractionDigits %q", v)
			} else if t.Base != cfe.XSDDecimal {
				if n != 0 {
					err = schemaErr(f, "xs:fractionDigits on a type that is not a decimal")
				}
			} else if t.FractionDigits < 0 || n < t.FractionDigits {
				t.FractionDigits = n
			}
		case "minInclusive":
			t.MinInclusive = v // a derived type's bound lies within its base's
		case "maxInclusive":
			t.MaxInclusive = v
		case "whiteSpace":
			switch v {
			case "preserve":
				t.WhiteSpace = cfe.XSDPreserve
			case "replace":
				t.WhiteSpace = cfe.XSDReplace
			case "collapse":
				t.WhiteSpace = cfe.XSDCollapse
			default:
				err = schemaErr(f, "xs:whiteSpace %q", v)
			}
		default:
			err = schemaErr(f, "facet xs:%s is not supported", f.Tag)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(enum) > 0 {
		t.Enum = enum // a derived enumeration is a subset of its base's
	}
	if len(patterns) > 0 {
		t.Patterns = append(t.Patterns, patterns)
	}
	f, err := cfe.CompileXSDType(t)
	if err != nil {
		return nil, schemaErr(st, "%v", err)
	}
	td := &typeDef{name: name, simple: f}
	s.typeMemo[st] = td
	return td, nil
}

// complexType resolves a complex type.
func (s *Schema) complexType(ct *etree.Element, name string) (*typeDef, error) {
	if t, ok := s.typeMemo[ct]; ok {
		if t == nil {
			return nil, schemaErr(ct, "complex type derived from itself")
		}
		return t, nil
	}
	if name == "" {
		name = s.anonName(ct)
	}
	if err := checkAttrs(ct, "name", "mixed", "abstract", "block", "final", "id"); err != nil {
		return nil, err
	}
	t := &typeDef{name: name, complex: true}
	t.mixed = ct.SelectAttrValue("mixed", "false") == "true"
	t.abstract = ct.SelectAttrValue("abstract", "false") == "true"
	// Content models may refer back to this type (recursion): the type is
	// registered before its content is read.
	s.typeMemo[ct] = t
	kids := xsChildren(ct)
	if len(kids) == 1 && (kids[0].Tag == "simpleContent" || kids[0].Tag == "complexContent") {
		if err := s.derivedContent(t, kids[0]); err != nil {
			return nil, err
		}
	} else if err := s.contentAndAttrs(t, kids); err != nil {
		return nil, err
	}
	return t, nil
}

// contentAndAttrs reads a complex type's model group and attributes.
func (s *Schema) contentAndAttrs(t *typeDef, kids []*etree.Element) error {
	for _, c := range kids {
		switch c.Tag {
		case "sequence", "choice":
			if t.content != nil || len(t.attrs) > 0 || t.anyAttr != nil {
				return schemaErr(c, "a second model group, or one after the attributes")
			}
			p, err := s.particle(c)
			if err != nil {
				return err
			}
			t.content = p
		case "attribute":
			a, err := s.attribute(c, false)
			if err != nil {
				return err
			}
			for _, b := range t.attrs {
				if b.name == a.name {
					return schemaErr(c, "attribute %s declared twice", a.name.local)
				}
			}
			t.attrs = append(t.attrs, a)
		case "anyAttribute":
			if t.anyAttr != nil {
				return schemaErr(c, "a second xs:anyAttribute")
			}
			w, err := newWildcard(c)
			if err != nil {
				return err
			}
			t.anyAttr = w
		default:
			return schemaErr(c, "xs:%s in a complex type is not supported", c.Tag)
		}
	}
	return nil
}

// derivedContent reads xs:simpleContent or xs:complexContent (extension only).
func (s *Schema) derivedContent(t *typeDef, c *etree.Element) error {
	if err := checkAttrs(c, "mixed", "id"); err != nil {
		return err
	}
	if c.SelectAttrValue("mixed", "false") == "true" {
		t.mixed = true
	}
	kids := xsChildren(c)
	if len(kids) != 1 || kids[0].Tag != "extension" {
		return schemaErr(c, "only xs:extension is supported in xs:%s", c.Tag)
	}
	ext := kids[0]
	if err := checkAttrs(ext, "base", "id"); err != nil {
		return err
	}
	base, err := s.typeByName(ext, ext.SelectAttrValue("base", ""))
	if err != nil {
		return err
	}
	if c.Tag == "simpleContent" {
		if base.simple == nil {
			return schemaErr(ext, "base of simple content has no simple content")
		}
		t.simple = base.simple
		t.attrs = append(t.attrs, base.attrs...)
		t.anyAttr = base.anyAttr
		for _, k := range xsChildren(ext) {
			if k.Tag != "attribute" && k.Tag != "anyAttribute" {
				return schemaErr(k, "xs:%s in a simple content extension is not supported", k.Tag)
			}
		}
		return s.contentAndAttrs(t, xsChildren(ext))
	}
	if !base.complex || base.simple != nil {
		return schemaErr(ext, "base of complex content is not a complex type with element content")
	}
	ownt := &typeDef{}
	if err := s.contentAndAttrs(ownt, xsChildren(ext)); err != nil {
		return err
	}
	switch {
	case base.content == nil:
		t.content = ownt.content
	case ownt.content == nil:
		t.content = base.content
	default:
		t.content = &particle{kind: pSequence, min: 1, max: 1, kids: []*particle{base.content, ownt.content}}
		t.content.nullable = base.content.nullable && ownt.content.nullable
	}
	t.attrs = append(append([]*attribute(nil), base.attrs...), ownt.attrs...)
	t.anyAttr = base.anyAttr
	if ownt.anyAttr != nil {
		if t.anyAttr != nil {
			return schemaErr(ext, "attribute wildcards of base and extension together are not supported")
		}
		t.anyAttr = ownt.anyAttr
	}
	return nil
}

// particle reads a model group, an element or a wildcard of a content model.
func (s *Schema) particle(el *etree.Element) (*particle, error) {
	minO, maxO, err := occurs(el)
	if err != nil {
		return nil, err
	}
	p := &particle{min: minO, max: maxO}
	switch el.Tag {
	case "element":
		p.kind = pElement
		if ref := el.SelectAttrValue("ref", ""); ref != "" {
			if err := checkAttrs(el, "ref", "minOccurs", "maxOccurs", "id"); err != nil {
				return nil, err
			}
			q, err := resolveQName(el, ref)
			if err != nil {
				return nil, err
			}
			raw := s.rawElems[q]
			if raw == nil {
				return nil, schemaErr(el, "element %s is not declared", ref)
			}
			if p.elem, err = s.elementDecl(raw, true); err != nil {
				return nil, err
			}
		} else if p.elem, err = s.elementDecl(el, false); err != nil {
			return nil, err
		}
	case "any":
		if err := checkAttrs(el, "namespace", "processContents", "minOccurs", "maxOccurs", "id"); err != nil {
			return nil, err
		}
		p.kind = pAny
		if p.any, err = newWildcard(el); err != nil {
			return nil, err
		}
	case "sequence", "choice":
		if err := checkAttrs(el, "minOccurs", "maxOccurs", "id"); err != nil {
			return nil, err
		}
		p.kind = pSequence
		if el.Tag == "choice" {
			p.kind = pChoice
		}
		for _, c := range xsChildren(el) {
			k, err := s.particle(c)
			if err != nil {
				return nil, err
			}
			p.kids = append(p.kids, k)
		}
	default:
		return nil, schemaErr(el, "xs:%s in a content model is not supported", el.Tag)
	}
	p.nullable = p.min == 0 || p.kind == pSequence && allNullable(p.kids) || p.kind == pChoice && anyNullable(p.kids)
	return p, nil
}

func allNullable(ps []*particle) bool {
	for _, p := range ps {
		if !p.nullable {
			return false
		}
	}
	return true
}

func anyNullable(ps []*particle) bool {
	for _, p := range ps {
		if p.nullable {
			return true
		}
	}
	return len(ps) == 0
}

// newWildcard reads xs:any or xs:anyAttribute.
func newWildcard(el *etree.Element) (*wildcard, error) {
	if err := checkAttrs(el, "namespace", "processContents", "minOccurs", "maxOccurs", "id"); err != nil {
		return nil, err
	}
	w := &wildcard{process: el.SelectAttrValue("processContents", "strict")}
	switch w.process {
	case "strict", "lax", "skip":
	default:
		return nil, schemaErr(el, "processContents %q", w.process)
	}
	switch ns := strings.Fields(el.SelectAttrValue("namespace", "##any")); {
	case len(ns) == 1 && ns[0] == "##any":
		w.all = true
	case len(ns) == 1 && ns[0] == "##other":
		w.other = targetNS(el)
	default:
		w.list = map[string]bool{}
		for _, n := range ns {
			switch n {
			case "##targetNamespace":
				w.list[targetNS(el)] = true
			case "##local":
				w.list[""] = true
			case "##any", "##other":
				return nil, schemaErr(el, "namespace %q in a list", n)
			default:
				w.list[n] = true
			}
		}
	}
	return w, nil
}

// attribute resolves an attribute declaration or reference.
func (s *Schema) attribute(el *etree.Element, global bool) (*attribute, error) {
	if a, ok := s.attrMemo[el]; ok {
		return a, nil
	}
	var a *attribute
	if ref := el.SelectAttrValue("ref", ""); ref != "" {
		if err := checkAttrs(el, "ref", "use", "fixed", "default", "id"); err != nil {
			return nil, err
		}
		q, err := resolveQName(el, ref)
		if err != nil {
			return nil, err
		}
		raw := s.rawAttrs[q]
		if raw == nil {
			return nil, schemaErr(el, "attribute %s is not declared", ref)
		}
		g, err := s.attribute(raw, true)
		if err != nil {
			return nil, err
		}
		cp := *g
		a = &cp
	} else {
		if err := checkAttrs(el, "name", "type", "use", "fixed", "default", "id"); err != nil {
			return nil, err
		}
		name := el.SelectAttrValue("name", "")
		if name == "" {
			return nil, schemaErr(el, "attribute without name")
		}
		a = &attribute{name: qname{local: name}}
		if global || schemaRoot(el).SelectAttrValue("attributeFormDefault", "unqualified") == "qualified" {
			a.name.ns = targetNS(el)
		}
		kids := xsChildren(el)
		typeAttr := el.SelectAttrValue("type", "")
		var t *typeDef
		var err error
		switch {
		case typeAttr != "" && len(kids) == 0:
			t, err = s.typeByName(el, typeAttr)
		case typeAttr == "" && len(kids) == 1 && kids[0].Tag == "simpleType":
			t, err = s.simpleType(kids[0], "")
		default:
			err = schemaErr(el, "attribute without a simple type is not supported")
		}
		if err != nil {
			return nil, err
		}
		if t.complex || t.simple == nil {
			return nil, schemaErr(el, "attribute of a complex type")
		}
		a.typ = t.simple
	}
	switch use := el.SelectAttrValue("use", "optional"); use {
	case "required":
		a.required = true
	case "prohibited":
		a.prohibited = true
	case "optional":
	default:
		return nil, schemaErr(el, "use %q", use)
	}
	if v, ok := attrValue(el, "fixed"); ok {
		a.fixed = &v
	}
	if v, ok := attrValue(el, "default"); ok {
		a.dflt = &v
	}
	for _, v := range []*string{a.fixed, a.dflt} {
		if v != nil {
			if msg := a.typ.Check(*v); msg != "" {
				return nil, schemaErr(el, "fixed or default value %q is not valid: %s", *v, msg)
			}
		}
	}
	s.attrMemo[el] = a
	return a, nil
}
