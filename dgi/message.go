package dgi

import (
	"bytes"
	"fmt"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/signer"
)

// Messages of both sides: the client writes requests and reads answers;
// the emulator (sandbox/dgi/emulator) reads requests and writes answers.
// Both sign with WS-Security; requests use DGI's example's prefixes
// (soapenv, dgi), answers DGI's answers' (SOAP-ENV, the service namespace
// as the default one).

const (
	requestSOAPPrefix = "soapenv"
	answerSOAPPrefix  = "SOAP-ENV"
)

// xmlDataBody is the Body of a reception-service message: the operation
// element (or its answer), Datain (or Dataout), xmlData holding doc as text.
func xmlDataBody(element, dataElement, prefix string, doc []byte) messageBody {
	p := pfx(prefix)
	decl := ` xmlns="` + NamespaceWS + `"`
	if prefix != "" {
		decl = ` xmlns:` + prefix + `="` + NamespaceWS + `"`
	}
	head := "<" + p + element + decl + "><" + p + dataElement + "><" + p + "xmlData>"
	tail := "</" + p + "xmlData></" + p + dataElement + "></" + p + element + ">"
	var canonical, written bytes.Buffer
	canonical.Grow(len(doc) + len(doc)/8 + 256)
	canonical.WriteString(head)
	canonical.Write(canonicalText(doc))
	canonical.WriteString(tail)
	written.Grow(len(doc) + 256)
	written.WriteString(head)
	writeXMLData(&written, doc)
	written.WriteString(tail)
	return messageBody{canonical: canonical.Bytes(), written: written.Bytes()}
}

// typedBody is the Body of a query-service message: the operation element
// (or its answer) holding content, written with the same prefix.
func typedBody(element, prefix string, content []byte) messageBody {
	p := pfx(prefix)
	decl := ` xmlns="` + NamespaceWS + `"`
	if prefix != "" {
		decl = ` xmlns:` + prefix + `="` + NamespaceWS + `"`
	}
	var b bytes.Buffer
	b.WriteString("<" + p + element + decl + ">")
	b.Write(content)
	b.WriteString("</" + p + element + ">")
	return messageBody{canonical: b.Bytes()}
}

// checkDocument refuses a document that cannot travel as xmlData's text.
func checkDocument(doc []byte) error {
	if len(doc) == 0 {
		return fmt.Errorf("el documento está vacío")
	}
	if i := xmlChars(doc); i >= 0 {
		return fmt.Errorf("el documento tiene un carácter que XML no admite (o no es UTF-8) en el byte %d", i)
	}
	return nil
}

// SignRequest writes the signed SOAP request of a reception-service
// operation carrying doc in Datain/xmlData (the envelope, the report, the
// ConsultaCFE), signed with creds.
func SignRequest(op Operation, creds *signer.Credentials, doc []byte) ([]byte, error) {
	if op.Query() {
		return nil, fmt.Errorf("%s es del servicio de consultas: no lleva xmlData", op)
	}
	if err := checkDocument(doc); err != nil {
		return nil, err
	}
	return signMessage(creds, requestSOAPPrefix, xmlDataBody(op.Element(), "Datain", "dgi", doc))
}

// queryContent is a query-service request's content.
type queryContent interface{ content(prefix string) []byte }

// signQuery writes the signed SOAP request of a query-service operation.
func signQuery(op Operation, creds *signer.Credentials, q queryContent) ([]byte, error) {
	return signMessage(creds, requestSOAPPrefix, typedBody(op.Element(), "dgi", q.content("dgi:")))
}

// SignAnswer writes the signed SOAP answer of a reception-service operation
// carrying doc (an ACK, or DGI's exception document) in Dataout/xmlData.
func SignAnswer(op Operation, creds *signer.Credentials, doc []byte) ([]byte, error) {
	if err := checkDocument(doc); err != nil {
		return nil, err
	}
	return signMessage(creds, answerSOAPPrefix, xmlDataBody(op.ResponseElement(), "Dataout", "", doc))
}

// SignQueryAnswer writes the signed SOAP answer of a query-service
// operation with its content (CFEStateContent, EnvelopesContent,
// ReportsContent).
func SignQueryAnswer(op Operation, creds *signer.Credentials, content []byte) ([]byte, error) {
	return signMessage(creds, answerSOAPPrefix, typedBody(op.ResponseElement(), "", content))
}

// SignFault writes a signed SOAP 1.1 Fault; detail, when set, is DGI's
// exception document (ServiceErrorXML). code is "Client" or "Server".
func SignFault(creds *signer.Credentials, code, faultstring string, detail []byte) ([]byte, error) {
	var b bytes.Buffer
	// The SOAP prefix is declared on the Body (canonical form): not again.
	b.WriteString(`<` + answerSOAPPrefix + `:Fault><faultcode>` + answerSOAPPrefix + ":" + code + `</faultcode><faultstring>`)
	b.WriteString(escapeString(faultstring))
	b.WriteString(`</faultstring>`)
	if detail != nil {
		b.WriteString(`<detail>`)
		b.Write(detail)
		b.WriteString(`</detail>`)
	}
	b.WriteString(`</` + answerSOAPPrefix + `:Fault>`)
	return signMessage(creds, answerSOAPPrefix, messageBody{canonical: b.Bytes()})
}

// UnsignedFault writes a SOAP 1.1 Fault without WS-Security, as DGI's
// gateway answers a request it cannot verify ("No signature in message!").
func UnsignedFault(code, faultstring string) []byte {
	return []byte(`<SOAP-ENV:Envelope xmlns:SOAP-ENV="` + nsSOAP + `"><SOAP-ENV:Body><SOAP-ENV:Fault><faultcode>SOAP-ENV:` + code +
		`</faultcode><faultstring>` + escapeString(faultstring) + `</faultstring></SOAP-ENV:Fault></SOAP-ENV:Body></SOAP-ENV:Envelope>`)
}

// XMLData returns the document an operation element (or answer) carries in
// Datain/xmlData (or Dataout/xmlData): the text of xmlData.
func XMLData(el *etree.Element, dataElement string) ([]byte, error) {
	data, err := child(el, dataElement)
	if err != nil {
		return nil, err
	}
	x, err := child(data, "xmlData")
	if err != nil {
		return nil, err
	}
	return []byte(trimXMLSpace(text(x))), nil
}

// RequestOperation returns the operation of a request message's Body
// element, checking its namespace.
func RequestOperation(m *Message) (Operation, error) {
	op, ok := OperationOfElement(m.Name)
	if !ok || m.Space != NamespaceWS {
		return "", fmt.Errorf("operación desconocida {%s}%s", m.Space, m.Name)
	}
	return op, nil
}
