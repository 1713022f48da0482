package signer

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"
)

// Namespaces of the documents this package reads and writes.
const (
	nsDSig = "http://www.w3.org/2000/09/xmldsig#"
	nsCFE  = "http://cfe.dgi.gub.uy"
)

// parseXML reads a whole XML document. Besides well-formedness it requires what
// makes "the document" and "its root element" the same thing for a signature
// with URI="": one root element, and outside it nothing but the XML declaration,
// comments and white space (no DOCTYPE, no processing instructions, which
// canonical XML would keep and goxmldsig's canonicalizer, working on the root
// element, would not).
func parseXML(b []byte) (*etree.Document, error) {
	doc := etree.NewDocument()
	doc.ReadSettings = etree.ReadSettings{CharsetReader: charsetReader}
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("XML mal formado: %w", err)
	}
	roots := 0
	for i, tok := range doc.Child {
		switch tok := tok.(type) {
		case *etree.Element:
			roots++
		case *etree.CharData:
			if !tok.IsWhitespace() {
				return nil, errors.New("XML mal formado: hay texto fuera del elemento raíz")
			}
		case *etree.Comment:
		case *etree.ProcInst:
			if tok.Target != "xml" || i != 0 {
				return nil, fmt.Errorf("no se admiten instrucciones de procesamiento (<?%s?>) fuera del elemento raíz", tok.Target)
			}
		case *etree.Directive:
			return nil, errors.New("no se admiten declaraciones DOCTYPE")
		}
	}
	if roots != 1 {
		return nil, errors.New("XML mal formado: debe haber exactamente un elemento raíz")
	}
	if err := checkPrefixes(doc.Root()); err != nil {
		return nil, err
	}
	return doc, nil
}

// checkPrefixes requires every namespace prefix to be declared, as canonical
// XML and every other verifier do (Go's XML reader does not check it).
func checkPrefixes(root *etree.Element) error {
	var err error
	walk(root, func(el *etree.Element) bool {
		if el.Space != "" && el.NamespaceURI() == "" {
			err = fmt.Errorf("XML mal formado: el prefijo %q de <%s> no está declarado", el.Space, el.FullTag())
			return false
		}
		for i := range el.Attr {
			a := &el.Attr[i]
			if a.Space != "" && a.Space != "xml" && a.Space != "xmlns" && a.NamespaceURI() == "" {
				err = fmt.Errorf("XML mal formado: el prefijo %q del atributo %s no está declarado", a.Space, a.FullKey())
				return false
			}
		}
		return true
	})
	return err
}

// charsetReader decodes the encodings DGI's files use: UTF-8 and ISO-8859-1
// (DGI's example envelope is ISO-8859-1).
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "", "utf-8", "utf8":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1":
		return &latin1Reader{r: bufio.NewReader(input)}, nil
	}
	return nil, fmt.Errorf("codificación %q no admitida (se aceptan UTF-8 e ISO-8859-1)", charset)
}

// latin1Reader converts ISO-8859-1 to UTF-8: every byte is the code point of
// the same value.
type latin1Reader struct {
	r       *bufio.Reader
	pending []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(l.pending) > 0 {
			c := copy(p[n:], l.pending)
			l.pending = l.pending[c:]
			n += c
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b < utf8.RuneSelf {
			p[n] = b
			n++
			continue
		}
		l.pending = utf8.AppendRune(l.pending[:0], rune(b))
	}
	return n, nil
}

// xmlSpace is the white space XML allows between markup.
const xmlSpace = " \t\r\n"

// rootEndTag returns the offset in b of the end tag of the root element named
// name, where an enveloped signature goes. Only white space may follow that
// tag: a CFE is signed as its own compact document.
func rootEndTag(b []byte, name string) (int, error) {
	trimmed := bytes.TrimRight(b, xmlSpace)
	i := bytes.LastIndex(trimmed, []byte("</"))
	if i < 0 {
		return 0, fmt.Errorf("el elemento raíz <%s> no tiene etiqueta de cierre", name)
	}
	got, ok := bytes.CutSuffix(trimmed[i+2:], []byte(">"))
	if !ok || string(bytes.TrimRight(got, xmlSpace)) != name {
		return 0, fmt.Errorf("después de </%s> solo se admiten espacios", name)
	}
	return i, nil
}

// rootStartTag reads the start tag a canonical document begins with: the root
// element's qualified name and the namespace prefixes it declares. It reads
// nothing past that tag.
func rootStartTag(b []byte) (name string, decls []nsDecl, err error) {
	tok, err := xml.NewDecoder(bytes.NewReader(b)).RawToken()
	if err != nil {
		return "", nil, fmt.Errorf("XML mal formado: %w", err)
	}
	start, ok := tok.(xml.StartElement)
	if !ok {
		return "", nil, errors.New("el documento no está en forma canónica: no empieza con el elemento raíz")
	}
	for _, a := range start.Attr {
		if a.Name.Space == "xmlns" {
			decls = append(decls, nsDecl{prefix: a.Name.Local, uri: a.Value})
		}
	}
	name = start.Name.Local
	if start.Name.Space != "" {
		name = start.Name.Space + ":" + name
	}
	return name, decls, nil
}

// walk calls f for el and its descendant elements, in document order, until f
// returns false.
func walk(el *etree.Element, f func(*etree.Element) bool) bool {
	if !f(el) {
		return false
	}
	for _, c := range el.ChildElements() {
		if !walk(c, f) {
			return false
		}
	}
	return true
}

// childElements returns the child elements of el named tag in namespace ns.
func childElements(el *etree.Element, ns, tag string) []*etree.Element {
	var out []*etree.Element
	for _, c := range el.ChildElements() {
		if c.Tag == tag && c.NamespaceURI() == ns {
			out = append(out, c)
		}
	}
	return out
}

// oneChild returns the only child element of el named tag in namespace ns.
func oneChild(el *etree.Element, ns, tag string) (*etree.Element, error) {
	cs := childElements(el, ns, tag)
	switch len(cs) {
	case 1:
		return cs[0], nil
	case 0:
		return nil, fmt.Errorf("falta el elemento %s dentro de %s", tag, el.Tag)
	}
	return nil, fmt.Errorf("el elemento %s aparece %d veces dentro de %s", tag, len(cs), el.Tag)
}

// lastChildElement returns the last child element of el, or nil.
func lastChildElement(el *etree.Element) *etree.Element {
	for i := len(el.Child) - 1; i >= 0; i-- {
		if c, ok := el.Child[i].(*etree.Element); ok {
			return c
		}
	}
	return nil
}
