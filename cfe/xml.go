package cfe

import (
	"fmt"

	"github.com/beevik/etree"
)

// Namespaces of a CFE document.
const (
	NamespaceCFE  = "http://cfe.dgi.gub.uy"
	NamespaceDSig = "http://www.w3.org/2000/09/xmldsig#"
)

// cfeVersion is the fixed value of CFE/@version.
const cfeVersion = "1.0"

// BuildXML returns the unsigned DGI document of c: a root CFE element with
// version="1.0", its type element (eTck, eFact, ... from the type table) and,
// inside it, every element CFEType.xsd allows for that type, in the schema's
// order. Fields the type's schema does not have are not written; absent
// optional fields (nil, 0 indicators, "" text) are omitted. The Adenda is not
// part of the CFE and is ignored; zone K is written in clear form only.
//
// The document is ready to be signed:
//   - The CFE namespace is the default namespace, declared on the CFE element
//     itself: the signed CFE must stand alone when it is later pasted into an
//     envelope, and with no prefix the enveloped ds:Signature (which declares
//     its own default namespace) cannot clash with a CFE prefix.
//   - There is no XML declaration: a signed CFE is pasted byte for byte into
//     envelopes (EnvioCFE), where a declaration would be illegal; without one
//     the encoding is UTF-8, which is what is written; and C14N ignores it.
//   - It is compact (no indentation, no white-space text), because C14N keeps
//     white space, and written with etree's canonical settings so that its
//     bytes are as close as possible to their canonical form.
//
// Numbers are written in their shortest exact form, as DGI's samples do:
// "420", "137704.92", "22" for the IVA rates (TasaIVAType's enumeration
// "22.000" is compared by value). A value with more decimals or digits than
// its XSD type allows is an error, never rounded here. TmstFirma is written
// to the second in Montevideo's zone (2016-07-19T15:56:20-03:00), dates as
// YYYY-MM-DD.
//
// It returns EINVALID, naming each field (as an element path such as
// "Detalle/Item[2]/IndFact"), when a required element is absent, a value does
// not fit its XSD format or an occurrence limit is exceeded. It checks no DGI
// business rule: that is the validator's job.
func BuildXML(c *CFE) (*etree.Document, error) {
	const op = "cfe.BuildXML"
	if c == nil {
		return nil, Invalid(op, FieldError{Campo: "CFE", Mensaje: xmlMsgRequired})
	}
	info, ok := c.IdDoc.TipoCFE.Info()
	if !ok {
		return nil, Invalid(op, FieldError{Campo: "Encabezado/IdDoc/TipoCFE",
			Mensaje: fmt.Sprintf("el tipo de CFE %d no existe", int(c.IdDoc.TipoCFE))})
	}

	doc := etree.NewDocument()
	doc.WriteSettings = etree.WriteSettings{CanonicalEndTags: true, CanonicalText: true, CanonicalAttrVal: true}
	root := doc.CreateElement("CFE")
	root.CreateAttr("xmlns", NamespaceCFE)
	root.CreateAttr("version", cfeVersion)
	typeEl := root.CreateElement(string(info.Element))

	var st xmlState
	for _, n := range cfeContent[info.Element] {
		n.build(&st, typeEl, c)
	}
	if len(st.errs) > 0 {
		return nil, Invalid(op, st.errs...)
	}
	return doc, nil
}

// MarshalXML returns the bytes of BuildXML(c). It returns EINVALID as BuildXML does.
func MarshalXML(c *CFE) ([]byte, error) {
	doc, err := BuildXML(c)
	if err != nil {
		return nil, err
	}
	return doc.WriteToBytes()
}
