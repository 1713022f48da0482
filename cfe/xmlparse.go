package cfe

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/beevik/etree"
)

// ParseXML reads a CFE document, signed or not, back into the model. It
// accepts any namespace prefix for the CFE namespace (DGI's samples use
// "ns0:"), reads the encodings UTF-8 and ISO-8859-1, and ignores the
// ds:Signature and any element the type's schema does not have. An encrypted
// zone K cannot be read and is left out (ComplFiscal stays nil). TmstFirma is
// returned in Montevideo's zone.
//
// It reads what BuildXML writes, so that a parsed CFE can always be built
// again. It returns EINVALID with a Spanish message when the document is not
// well-formed XML, is not a CFE, or breaks the XSD's structure or formats
// (each such field named by its element path).
func ParseXML(b []byte) (*CFE, error) {
	const op = "cfe.ParseXML"
	root, err := readCFE(op, b)
	if err != nil {
		return nil, err
	}
	var st xmlState
	if version := root.SelectAttrValue("version", ""); version != cfeVersion {
		st.fail("version", "debe ser "+cfeVersion)
	}
	typeEl, elem, ok := typeElement(&st, root)
	if !ok {
		return nil, Invalid(op, st.errs...)
	}

	c := new(CFE)
	for _, n := range cfeContent[elem] {
		n.parse(&st, typeEl, c)
	}
	if info, known := c.IdDoc.TipoCFE.Info(); c.IdDoc.TipoCFE != 0 && (!known || info.Element != elem) {
		st.fail("Encabezado/IdDoc/TipoCFE",
			fmt.Sprintf("el tipo de CFE %d no corresponde al elemento %s", int(c.IdDoc.TipoCFE), elem))
	}
	if len(st.errs) > 0 {
		return nil, Invalid(op, st.errs...)
	}
	return c, nil
}

// typeElement returns the only type element (eTck, eFact, ...) under root.
func typeElement(st *xmlState, root *etree.Element) (*etree.Element, Element, bool) {
	var found *etree.Element
	for _, el := range root.ChildElements() {
		if _, known := cfeContent[Element(el.Tag)]; !known || el.NamespaceURI() != NamespaceCFE {
			continue
		}
		if found != nil {
			st.fail(el.Tag, "un CFE contiene un solo elemento de tipo")
			return nil, "", false
		}
		found = el
	}
	if found == nil {
		st.fail("eTck|eFact|eFact_Exp|eRem|eRem_Exp|eResg|eBoleta", xmlMsgRequired)
		return nil, "", false
	}
	return found, Element(found.Tag), true
}

// DigestValue returns the DigestValue of the first Reference of the CFE's
// signature (ds:Signature/SignedInfo/Reference), the hash from which the
// security code and the QR are made. It returns EINVALID when the document is
// not a CFE, has no signature, or the value is not base64.
func DigestValue(b []byte) (string, error) {
	const op = "cfe.DigestValue"
	root, err := readCFE(op, b)
	if err != nil {
		return "", err
	}
	el := root
	for _, name := range []string{"Signature", "SignedInfo", "Reference", "DigestValue"} {
		if el = dsigChild(el, name); el == nil {
			return "", &Error{Code: EINVALID, Op: op, Message: "el comprobante no tiene firma: falta " + name}
		}
	}
	// base64Binary admits white space between characters.
	value := strings.Join(strings.Fields(el.Text()), "")
	if _, err := base64.StdEncoding.DecodeString(value); err != nil || value == "" {
		return "", &Error{Code: EINVALID, Op: op, Message: "el DigestValue de la firma no es base64 válido", Err: err}
	}
	return value, nil
}

// dsigChild returns the first child element of el called name in the
// XML-DSig namespace.
func dsigChild(el *etree.Element, name string) *etree.Element {
	for _, c := range el.ChildElements() {
		if c.Tag == name && c.NamespaceURI() == NamespaceDSig {
			return c
		}
	}
	return nil
}

// readCFE parses b as an XML document whose only root element is CFE in the
// CFE namespace.
func readCFE(op string, b []byte) (*etree.Element, error) {
	malformed := func(err error) error {
		return &Error{Code: EINVALID, Op: op, Message: "el XML del comprobante está mal formado", Err: err}
	}
	doc := etree.NewDocument()
	doc.ReadSettings.CharsetReader = xmlCharsetReader
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, malformed(err)
	}
	var root *etree.Element
	for _, t := range doc.Child {
		switch t := t.(type) {
		case *etree.Element:
			if root != nil {
				return nil, malformed(fmt.Errorf("more than one root element"))
			}
			root = t
		case *etree.CharData:
			if !t.IsWhitespace() {
				return nil, malformed(fmt.Errorf("text outside the root element"))
			}
		}
	}
	if root == nil {
		return nil, malformed(fmt.Errorf("no root element"))
	}
	if root.Tag != "CFE" || root.NamespaceURI() != NamespaceCFE {
		return nil, &Error{Code: EINVALID, Op: op,
			Message: "el documento no es un CFE: su raíz debe ser CFE del espacio de nombres " + NamespaceCFE}
	}
	return root, nil
}

// xmlCharsetReader decodes the encodings other than UTF-8 that DGI documents
// declare: ISO-8859-1 (DGI's sample envelope uses it).
func xmlCharsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1":
		b, err := io.ReadAll(input)
		if err != nil {
			return nil, err
		}
		// Each ISO-8859-1 byte is the Unicode code point of the same value.
		var s strings.Builder
		s.Grow(len(b))
		for _, c := range b {
			s.WriteRune(rune(c))
		}
		return strings.NewReader(s.String()), nil
	}
	return nil, fmt.Errorf("unsupported XML encoding %q", charset)
}
