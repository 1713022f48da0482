package xsdvalid

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"golang.org/x/text/encoding/ianaindex"
)

// Well-formedness.
//
// encoding/xml checks characters, names, comments, references and the
// nesting of tags, but lets through what XML 1.0 and Namespaces in XML 1.0
// forbid above the token level: a repeated attribute, an unbound prefix, a
// prefix undeclared with xmlns:p="", the reserved prefixes and names bound
// wrongly, content outside the root element, an XML declaration that is not
// the first thing in the document. wfReader reads raw tokens (RawToken, so
// that the prefixes as written are seen), resolves namespaces itself and
// refuses all of these, as libxml2 (xmllint) does.

const (
	nsXML   = "http://www.w3.org/XML/1998/namespace"
	nsXMLNS = "http://www.w3.org/2000/xmlns/"
	bom     = "\ufeff"
)

// xmlDeclRE is the grammar of the XML declaration's content (XML 1.0
// productions VersionInfo, EncodingDecl and SDDecl, in that order).
var xmlDeclRE = regexp.MustCompile(`^\s*version\s*=\s*(?:"1\.[0-9]+"|'1\.[0-9]+')` +
	`(?:\s+encoding\s*=\s*(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?` +
	`(?:\s+standalone\s*=\s*(?:"(?:yes|no)"|'(?:yes|no)'))?\s*$`)

// wfStart is a start tag with its names resolved.
type wfStart struct {
	name  xml.Name
	attrs []xml.Attr // resolved, without namespace declarations
	line  int
}

// wfReader reads a document's elements and character data, refusing
// anything that is not well-formed XML with namespaces.
type wfReader struct {
	doc []byte
	d   *xml.Decoder
	// The bytes the decoder has consumed are doc[:switchAt] and then, when
	// the declaration named another encoding, decoded[...]: span reads them.
	switched bool
	switchAt int64
	decoded  bytes.Buffer

	open   []xml.Name          // the raw names of the open elements
	scopes []map[string]string // prefix bindings each open element declares
	done   bool                // the root element has been closed
	seen   bool                // a token other than a BOM has been read
}

func newWFReader(doc []byte) *wfReader {
	r := &wfReader{doc: doc}
	r.d = xml.NewDecoder(bytes.NewReader(doc))
	r.d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		enc, err := ianaindex.IANA.Encoding(label)
		if err != nil || enc == nil {
			return nil, fmt.Errorf("encoding %q is not supported", label)
		}
		r.switched, r.switchAt = true, r.d.InputOffset()
		return io.TeeReader(enc.NewDecoder().Reader(in), &r.decoded), nil
	}
	return r
}

// span returns the document text the decoder consumed between two offsets.
func (r *wfReader) span(from, to int64) []byte {
	if !r.switched || to <= r.switchAt {
		return r.doc[from:to]
	}
	from, to = from-r.switchAt, to-r.switchAt
	if from < 0 || to > int64(r.decoded.Len()) {
		return nil
	}
	return r.decoded.Bytes()[from:to]
}

// malformed is a well-formedness error at line.
func malformed(line int, es, en string) Error {
	return Error{Line: line, Message: "no es XML bien formado: " + es, Detail: "not well-formed XML: " + en}
}

// next returns the next element start (*wfStart), element end
// (xml.EndElement) or character data inside the root (xml.CharData); io.EOF
// after the end of a well-formed document.
func (r *wfReader) next() (any, error) {
	for {
		line, _ := r.d.InputPos()
		from := r.d.InputOffset()
		tok, err := r.d.RawToken()
		if errors.Is(err, io.EOF) {
			switch {
			case len(r.open) > 0:
				n := r.open[len(r.open)-1]
				return nil, malformed(line, fmt.Sprintf("el documento termina sin cerrar el elemento %s", rawName(n)),
					fmt.Sprintf("document ends inside element %s", rawName(n)))
			case !r.done:
				return nil, Error{Message: "el documento no tiene elemento raíz", Detail: "no root element"}
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, malformed(syntaxLine(err, line), err.Error(), err.Error())
		}
		first := !r.seen
		r.seen = true
		switch t := tok.(type) {
		case xml.StartElement:
			if r.done {
				return nil, malformed(line, "hay contenido después del elemento raíz (otro elemento)", "content after the root element (another element)")
			}
			return r.start(t, line)
		case xml.EndElement:
			return r.end(t, line)
		case xml.CharData:
			if len(r.open) > 0 {
				return t, nil
			}
			text := r.span(from, r.d.InputOffset())
			if first && bytes.HasPrefix(text, []byte(bom)) && from == 0 {
				text = text[len(bom):]
				r.seen = len(text) > 0
			}
			if strings.Trim(string(text), " \t\r\n") != "" {
				where, en := "antes del", "before the"
				if r.done {
					where, en = "después del", "after the"
				}
				return nil, malformed(line, fmt.Sprintf("hay texto %s elemento raíz", where), fmt.Sprintf("text %s root element", en))
			}
		case xml.ProcInst:
			if err := r.procInst(t, line, from, first); err != nil {
				return nil, err
			}
		case xml.Directive:
			return nil, Error{Line: line, Message: "el documento tiene una declaración de tipo (DTD), que no se admite",
				Detail: "document type declarations are not supported"}
		}
	}
}

// procInst checks a processing instruction: the XML declaration only as
// the document's first bytes (after a byte order mark), with its grammar;
// no other target named xml in any case.
func (r *wfReader) procInst(t xml.ProcInst, line int, from int64, first bool) error {
	if !strings.EqualFold(t.Target, "xml") {
		return nil
	}
	if t.Target != "xml" {
		return malformed(line, fmt.Sprintf("el nombre de instrucción %q está reservado", t.Target),
			fmt.Sprintf("processing instruction target %q is reserved", t.Target))
	}
	atStart := from == 0 || first && from == int64(len(bom)) && bytes.HasPrefix(r.doc, []byte(bom))
	if !atStart {
		return malformed(line, "la declaración XML solo puede ir al comienzo del documento",
			"XML declaration allowed only at the start of the document")
	}
	if !xmlDeclRE.Match(t.Inst) {
		return malformed(line, fmt.Sprintf("declaración XML incorrecta: %q", t.Inst),
			fmt.Sprintf("malformed XML declaration: %q", t.Inst))
	}
	return nil
}

// start checks a start tag's attributes, declares its namespaces and
// resolves its names.
func (r *wfReader) start(t xml.StartElement, line int) (*wfStart, error) {
	bad := func(es, en string) (*wfStart, error) {
		return nil, malformed(line, fmt.Sprintf("en el elemento %s, %s", rawName(t.Name), es),
			fmt.Sprintf("in element %s, %s", rawName(t.Name), en))
	}
	scope := map[string]string{}
	raw := map[xml.Name]bool{}
	for _, a := range t.Attr {
		if raw[a.Name] {
			return bad(fmt.Sprintf("el atributo %s está repetido", rawName(a.Name)), fmt.Sprintf("attribute %s repeated", rawName(a.Name)))
		}
		raw[a.Name] = true
		switch {
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			if a.Value == nsXML || a.Value == nsXMLNS {
				return bad(fmt.Sprintf("el espacio de nombres %s no puede ser el por defecto", a.Value), fmt.Sprintf("namespace %s cannot be the default", a.Value))
			}
			scope[""] = a.Value
		case a.Name.Space == "xmlns":
			p := a.Name.Local
			switch {
			case p == "xmlns":
				return bad("el prefijo xmlns no puede declararse", "the xmlns prefix cannot be declared")
			case p == "xml" && a.Value != nsXML, p != "xml" && a.Value == nsXML:
				return bad("el prefijo xml solo puede ligarse a "+nsXML, "the xml prefix binds only to "+nsXML)
			case a.Value == nsXMLNS:
				return bad("el espacio de nombres "+nsXMLNS+" no puede ligarse a un prefijo", "namespace "+nsXMLNS+" cannot be bound")
			case a.Value == "":
				return bad(fmt.Sprintf("el prefijo %s no puede declararse vacío (xmlns:%s=\"\")", p, p), fmt.Sprintf("prefix %s declared empty", p))
			}
			scope[p] = a.Value
		}
	}
	r.open = append(r.open, t.Name)
	r.scopes = append(r.scopes, scope)

	s := &wfStart{line: line}
	var es, en string
	if s.name, es, en = r.resolve(t.Name, true); es != "" {
		return bad(es, en)
	}
	expanded := map[xml.Name]bool{}
	for _, a := range t.Attr {
		if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
			continue
		}
		n, es, en := r.resolve(a.Name, false)
		if es != "" {
			return bad(es, en)
		}
		if expanded[n] {
			return bad(fmt.Sprintf("el atributo {%s}%s está repetido", n.Space, n.Local), fmt.Sprintf("attribute {%s}%s repeated", n.Space, n.Local))
		}
		expanded[n] = true
		s.attrs = append(s.attrs, xml.Attr{Name: n, Value: a.Value})
	}
	return s, nil
}

// resolve maps a raw name to its namespace; an unprefixed attribute has
// none, an unprefixed element the default one in scope. When it cannot,
// it says why in Spanish (es) and English (en).
func (r *wfReader) resolve(n xml.Name, element bool) (_ xml.Name, es, en string) {
	if strings.Contains(n.Local, ":") {
		return n, fmt.Sprintf("el nombre %q no es un nombre calificado correcto", n.Local), fmt.Sprintf("%q is not a valid qualified name", n.Local)
	}
	switch {
	case n.Space == "" && !element:
		return n, "", ""
	case n.Space == "xml":
		return xml.Name{Space: nsXML, Local: n.Local}, "", ""
	case n.Space == "xmlns":
		return n, fmt.Sprintf("el prefijo xmlns no puede usarse en %s", rawName(n)), fmt.Sprintf("prefix xmlns used in %s", rawName(n))
	}
	for i := len(r.scopes) - 1; i >= 0; i-- {
		if uri, ok := r.scopes[i][n.Space]; ok {
			return xml.Name{Space: uri, Local: n.Local}, "", ""
		}
	}
	if n.Space == "" {
		return n, "", ""
	}
	return n, fmt.Sprintf("el prefijo %s de %s no está declarado", n.Space, rawName(n)),
		fmt.Sprintf("prefix %s of %s is not declared", n.Space, rawName(n))
}

// end checks that an end tag closes the open element.
func (r *wfReader) end(t xml.EndElement, line int) (xml.EndElement, error) {
	if len(r.open) == 0 {
		return t, malformed(line, fmt.Sprintf("la etiqueta de cierre %s no cierra ningún elemento", rawName(t.Name)),
			fmt.Sprintf("end tag %s closes no element", rawName(t.Name)))
	}
	n := r.open[len(r.open)-1]
	if n != t.Name {
		return t, malformed(line, fmt.Sprintf("el elemento %s se cierra con %s", rawName(n), rawName(t.Name)),
			fmt.Sprintf("element %s closed by %s", rawName(n), rawName(t.Name)))
	}
	r.open, r.scopes = r.open[:len(r.open)-1], r.scopes[:len(r.scopes)-1]
	r.done = len(r.open) == 0
	return t, nil
}

// rawName is a name as written: prefix:local.
func rawName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}
