package xsdvalid

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Limits that keep validation bounded whatever the document.
const (
	maxDepth  = 256       // element nesting, as libxml2's default
	maxErrors = 20        // errors reported per document
	maxSteps  = 4_000_000 // content-model matching steps per document
)

// Error is one reason a document is not valid: where (line and element
// path) and what, in Spanish for the user (Message) and in English for logs
// (Detail).
type Error struct {
	Line    int    // 0 when unknown
	Path    string // "/CFE/eTck/Encabezado/Emisor/RUCEmisor"; "" for the document
	Message string
	Detail  string
}

func (e Error) Error() string {
	return e.where() + e.Message
}

func (e Error) where() string {
	switch {
	case e.Line > 0 && e.Path != "":
		return fmt.Sprintf("línea %d, %s: ", e.Line, e.Path)
	case e.Line > 0:
		return fmt.Sprintf("línea %d: ", e.Line)
	case e.Path != "":
		return e.Path + ": "
	}
	return ""
}

// Log returns the error in English, for logs.
func (e Error) Log() string {
	loc := ""
	switch {
	case e.Line > 0 && e.Path != "":
		loc = fmt.Sprintf("line %d, %s: ", e.Line, e.Path)
	case e.Line > 0:
		loc = fmt.Sprintf("line %d: ", e.Line)
	case e.Path != "":
		loc = e.Path + ": "
	}
	return loc + e.Detail
}

// Errors are the reasons a document is not valid, in document order.
type Errors []Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Log returns the errors in English, for logs.
func (es Errors) Log() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Log()
	}
	return strings.Join(msgs, "; ")
}

// node is an element of the document being validated.
type node struct {
	name    xml.Name
	attrs   []xml.Attr // without namespace declarations
	kids    []*node
	text    string // the character data directly inside, concatenated
	hasText bool   // some of it is not white space
	line    int
	path    string
}

// parse reads doc into a tree of elements, refusing a document that is not
// well-formed XML with namespaces (see wfReader).
func parse(doc []byte) (*node, error) {
	r := newWFReader(doc)
	var root *node
	var stack []*node
	var text []*strings.Builder
	for {
		tok, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case *wfStart:
			if len(stack) >= maxDepth {
				return nil, Error{Line: t.line, Message: fmt.Sprintf("el documento anida más de %d elementos", maxDepth),
					Detail: fmt.Sprintf("elements nested deeper than %d", maxDepth)}
			}
			n := &node{name: t.name, attrs: t.attrs, line: t.line}
			if len(stack) == 0 {
				root = n
				n.path = "/" + t.name.Local
			} else {
				p := stack[len(stack)-1]
				same := 1
				for _, k := range p.kids {
					if k.name == t.name {
						same++
					}
				}
				n.path = p.path + "/" + t.name.Local
				if same > 1 {
					n.path += fmt.Sprintf("[%d]", same)
				}
				p.kids = append(p.kids, n)
			}
			stack = append(stack, n)
			text = append(text, &strings.Builder{})
		case xml.EndElement:
			n := stack[len(stack)-1]
			n.text = text[len(text)-1].String()
			n.hasText = strings.TrimLeft(n.text, " \t\r\n") != ""
			stack, text = stack[:len(stack)-1], text[:len(text)-1]
		case xml.CharData:
			text[len(text)-1].Write(t)
		}
	}
	return root, nil
}

func syntaxLine(err error, line int) int {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return se.Line
	}
	return line
}

// validation is the state of one Validate call.
type validation struct {
	s      *Schema
	rootNS string
	errs   Errors
	ids    map[string]bool
	steps  int
}

func (v *validation) fail(n *node, msg, detail string) {
	if len(v.errs) < maxErrors {
		e := Error{Message: msg, Detail: detail}
		if n != nil {
			e.Line, e.Path = n.line, n.path
		}
		v.errs = append(v.errs, e)
	}
}

// Validate checks doc against the schema set; it returns nil when doc is
// valid, else Errors.
func (s *Schema) Validate(doc []byte) error {
	root, err := parse(doc)
	if err != nil {
		var pe Error
		if !errors.As(err, &pe) {
			pe = Error{Message: "el documento no es XML bien formado: " + err.Error(), Detail: err.Error()}
		}
		return Errors{pe}
	}
	v := &validation{s: s, ids: map[string]bool{}, rootNS: root.name.Space}
	q := qname{root.name.Space, root.name.Local}
	e := s.elements[q]
	if e == nil {
		v.fail(root, fmt.Sprintf("el elemento raíz %s no es uno de los que declara el esquema %s", v.showName(q), s.entry),
			fmt.Sprintf("no declaration for root element %s in %s", q, s.entry))
	} else {
		v.element(root, e)
	}
	if len(v.errs) > 0 {
		return v.errs
	}
	return nil
}

// Well-known namespaces, shown with their usual prefix.
var prefixes = map[string]string{
	"http://www.w3.org/2000/09/xmldsig#":        "ds:",
	"http://www.w3.org/2001/04/xmlenc#":         "xenc:",
	"http://www.w3.org/XML/1998/namespace":      "xml:",
	"http://www.w3.org/2001/XMLSchema-instance": "xsi:",
}

// showName writes a name for the user: the names of the root element's
// namespace (DGI's) by their local name, others with their namespace's usual
// prefix or the namespace.
func (v *validation) showName(q qname) string {
	switch {
	case q.ns == v.rootNS:
		return q.local
	case q.ns == "":
		return q.local + " (sin espacio de nombres)"
	case prefixes[q.ns] != "":
		return prefixes[q.ns] + q.local
	}
	return "{" + q.ns + "}" + q.local
}

// showAttr writes an attribute's name: unqualified attributes (the usual)
// by their local name.
func (v *validation) showAttr(q qname) string {
	if q.ns == "" {
		return q.local
	}
	return v.showName(q)
}

func (q qname) String() string {
	if q.ns == "" {
		return q.local
	}
	return "{" + q.ns + "}" + q.local
}

// element validates n against its declaration.
func (v *validation) element(n *node, e *element) {
	if e.abstract {
		v.fail(n, "el elemento es abstracto y no puede aparecer en el documento", "element declaration is abstract")
		return
	}
	t := e.typ
	if t.abstract {
		v.fail(n, "el tipo "+t.name+" es abstracto", "type "+t.name+" is abstract")
		return
	}
	v.attributes(n, t)
	switch {
	case t.simple != nil:
		if len(n.kids) > 0 {
			v.fail(n.kids[0], "el elemento "+n.name.Local+" no admite elementos dentro, solo un valor",
				"element "+n.name.Local+" has simple content: no child elements are allowed")
			return
		}
		text := n.text
		if text == "" && e.fixed != nil {
			text = *e.fixed
		} else if text == "" && e.dflt != nil {
			text = *e.dflt
		}
		if msg := t.simple.Check(text); msg != "" {
			v.fail(n, fmt.Sprintf("valor %q inválido (%s): %s", text, t.name, msg),
				fmt.Sprintf("value %q is not valid for type %s", text, t.name))
			return
		}
		if e.fixed != nil {
			got, _ := t.simple.Canonical(text)
			want, _ := t.simple.Canonical(*e.fixed)
			if got != want {
				v.fail(n, fmt.Sprintf("el valor debe ser %q (es %q)", *e.fixed, text),
					fmt.Sprintf("value %q differs from the fixed value %q", text, *e.fixed))
			}
		}
		v.id(n, t, text)
	case n.hasText && !t.mixed:
		v.fail(n, "el elemento "+n.name.Local+" no admite texto, solo elementos", "element "+n.name.Local+" has element-only content: character data is not allowed")
	case t.content == nil:
		if len(n.kids) > 0 {
			v.fail(n.kids[0], "el elemento "+n.name.Local+" debe estar vacío", "element "+n.name.Local+" must be empty")
		}
	default:
		v.content(n, t.content)
	}
}

// id records the value of an ID and reports a repeated one.
func (v *validation) id(n *node, t *typeDef, text string) {
	if t.simple.Type().Base != cfe.XSDID {
		return
	}
	c, _ := t.simple.Canonical(text)
	if v.ids[c] {
		v.fail(n, fmt.Sprintf("el identificador %q está repetido en el documento", c), fmt.Sprintf("duplicate ID %q", c))
	}
	v.ids[c] = true
}

// attributes validates n's attributes against t's declarations.
func (v *validation) attributes(n *node, t *typeDef) {
	seen := map[qname]bool{}
	for _, a := range n.attrs {
		q := qname{a.Name.Space, a.Name.Local}
		if q.ns == nsXSI {
			switch q.local {
			case "schemaLocation", "noNamespaceSchemaLocation":
				continue
			}
			v.fail(n, "el atributo xsi:"+q.local+" no se admite en esta verificación", "xsi:"+q.local+" is not supported")
			continue
		}
		var decl *attribute
		for _, d := range t.attrs {
			if d.name == q {
				decl = d
				break
			}
		}
		if decl == nil || decl.prohibited {
			if t.anyAttr != nil && t.anyAttr.allows(q.ns) && decl == nil {
				if t.anyAttr.process == "skip" {
					continue
				}
				if g := v.s.attrs[q]; g != nil {
					decl = g
				} else if t.anyAttr.process == "lax" {
					continue
				}
			}
			if decl == nil || decl.prohibited {
				v.fail(n, "el atributo "+v.showAttr(q)+" no está permitido en "+n.name.Local,
					"attribute "+q.String()+" is not allowed")
				continue
			}
		}
		seen[q] = true
		if msg := decl.typ.Check(a.Value); msg != "" {
			v.fail(n, fmt.Sprintf("atributo %s: valor %q inválido: %s", v.showAttr(q), a.Value, msg),
				fmt.Sprintf("attribute %s: value %q is not valid", q, a.Value))
			continue
		}
		if decl.fixed != nil {
			got, _ := decl.typ.Canonical(a.Value)
			want, _ := decl.typ.Canonical(*decl.fixed)
			if got != want {
				v.fail(n, fmt.Sprintf("atributo %s: el valor debe ser %q (es %q)", v.showAttr(q), *decl.fixed, a.Value),
					fmt.Sprintf("attribute %s: value %q differs from the fixed value %q", q, a.Value, *decl.fixed))
			}
		}
		if decl.typ.Type().Base == cfe.XSDID {
			c, _ := decl.typ.Canonical(a.Value)
			if v.ids[c] {
				v.fail(n, fmt.Sprintf("el identificador %q está repetido en el documento", c), fmt.Sprintf("duplicate ID %q", c))
			}
			v.ids[c] = true
		}
	}
	for _, d := range t.attrs {
		if d.required && !seen[d.name] {
			v.fail(n, "falta el atributo obligatorio "+v.showAttr(d.name)+" en "+n.name.Local,
				"missing required attribute "+d.name.String())
		}
	}
}

// matcher matches the child elements of one element against a content
// model, by backtracking; a content model that XML Schema accepts (Unique
// Particle Attribution) is deterministic, so failed branches end quickly.
type matcher struct {
	v        *validation
	kids     []*node
	got      []*particle // the element or wildcard particle each child matched
	far      int         // the furthest child position a particle was tried at
	expected []string    // what the particles tried there wanted ("" : the end)
	aborted  bool
}

func (m *matcher) miss(i int, want string) {
	if i > m.far {
		m.far, m.expected = i, nil
	}
	if i == m.far {
		for _, w := range m.expected {
			if w == want {
				return
			}
		}
		m.expected = append(m.expected, want)
	}
}

// repeat matches p count times already, then as often as its bounds allow,
// calling k with each position where it can end; it stops at the first k
// that accepts.
func (m *matcher) repeat(p *particle, count, i int, k func(int) bool) bool {
	m.v.steps++
	if m.v.steps > maxSteps {
		m.aborted = true
		return false
	}
	if p.max < 0 || count < p.max {
		if m.once(p, i, func(j int) bool {
			if j == i { // an empty match: the remaining occurrences can be empty too
				return false
			}
			return m.repeat(p, count+1, j, k)
		}) {
			return true
		}
		if m.aborted {
			return false
		}
	}
	if count >= p.min || p.nullable {
		return k(i)
	}
	return false
}

// once matches one occurrence of p's term at i.
func (m *matcher) once(p *particle, i int, k func(int) bool) bool {
	switch p.kind {
	case pElement:
		if i < len(m.kids) && m.kids[i].name.Space == p.elem.name.ns && m.kids[i].name.Local == p.elem.name.local {
			m.got[i] = p
			return k(i + 1)
		}
		m.miss(i, m.v.showName(p.elem.name))
		return false
	case pAny:
		if i < len(m.kids) && p.any.allows(m.kids[i].name.Space) {
			m.got[i] = p
			return k(i + 1)
		}
		m.miss(i, "*")
		return false
	case pSequence:
		return m.sequence(p.kids, 0, i, k)
	default: // pChoice
		for _, c := range p.kids {
			if m.repeat(c, 0, i, k) {
				return true
			}
			if m.aborted {
				return false
			}
		}
		return false
	}
}

func (m *matcher) sequence(ps []*particle, idx, i int, k func(int) bool) bool {
	if idx == len(ps) {
		return k(i)
	}
	return m.repeat(ps[idx], 0, i, func(j int) bool { return m.sequence(ps, idx+1, j, k) })
}

// content validates n's child elements against the content model p, then
// each child against what it matched.
func (v *validation) content(n *node, p *particle) {
	m := &matcher{v: v, kids: n.kids, got: make([]*particle, len(n.kids)), far: -1}
	ok := m.repeat(p, 0, 0, func(j int) bool {
		if j == len(n.kids) {
			return true
		}
		m.miss(j, "")
		return false
	})
	switch {
	case m.aborted:
		v.fail(n, "el contenido del elemento es demasiado complejo para verificarlo", "content model matching exceeded its step budget")
		return
	case !ok:
		var want []string
		end := false
		for _, w := range m.expected {
			if w == "" {
				end = true
			} else {
				want = append(want, w)
			}
		}
		wantES, wantEN := expectedList(want)
		if m.far >= len(n.kids) || m.far < 0 {
			v.fail(n, "falta un elemento dentro de "+n.name.Local+": se esperaba "+wantES,
				"missing child element(s); expected "+wantEN)
			return
		}
		k := n.kids[m.far]
		q := qname{k.name.Space, k.name.Local}
		switch {
		case len(want) == 0:
			v.fail(k, "el elemento "+v.showName(q)+" no se esperaba aquí: no puede haber más elementos en "+n.name.Local,
				"element "+q.String()+" is not expected; no more elements are allowed")
		case end: // the content could also have ended here
			v.fail(k, "el elemento "+v.showName(q)+" no se esperaba aquí: se esperaba "+wantES+" o que "+n.name.Local+" terminara",
				"element "+q.String()+" is not expected; expected "+wantEN+" or the end of the content")
		default:
			v.fail(k, "el elemento "+v.showName(q)+" no se esperaba aquí: se esperaba "+wantES,
				"element "+q.String()+" is not expected; expected "+wantEN)
		}
		return
	}
	for i, kid := range n.kids {
		p := m.got[i]
		if p.kind == pElement {
			v.element(kid, p.elem)
			continue
		}
		v.wildcard(kid, p.any)
	}
}

func expectedList(want []string) (es, en string) {
	if len(want) == 0 {
		return "ningún otro elemento", "nothing more"
	}
	shown := make([]string, len(want))
	for i, w := range want {
		if w == "*" {
			w = "un elemento de otro espacio de nombres"
		}
		shown[i] = w
	}
	if len(shown) == 1 {
		return shown[0], "( " + want[0] + " )"
	}
	return strings.Join(shown[:len(shown)-1], ", ") + " o " + shown[len(shown)-1], "one of ( " + strings.Join(want, ", ") + " )"
}

// wildcard validates an element matched by xs:any.
func (v *validation) wildcard(n *node, w *wildcard) {
	if w.process == "skip" {
		return
	}
	q := qname{n.name.Space, n.name.Local}
	if e := v.s.elements[q]; e != nil {
		v.element(n, e)
		return
	}
	if w.process == "strict" {
		v.fail(n, "el elemento "+v.showName(q)+" no está declarado en el esquema", "no declaration for element "+q.String()+" (strict wildcard)")
	}
	// lax: an element without a declaration is not checked (as libxml2).
}
