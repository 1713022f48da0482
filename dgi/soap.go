package dgi

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Namespaces of DGI's SOAP messages (WS2013's annex, the WSDL ws_eprueba).
const (
	// NamespaceWS is DGI's service namespace: the operation elements and
	// their Datain/Dataout/xmlData, and the query service's typed elements.
	NamespaceWS = "http://dgi.gub.uy"
	// NamespaceCFE is the namespace of DGI's documents (EnvioCFE, ACKSobre...).
	NamespaceCFE = "http://cfe.dgi.gub.uy"

	nsSOAP = "http://schemas.xmlsoap.org/soap/envelope/"
	nsWSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	nsWSU  = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	nsDS   = "http://www.w3.org/2000/09/xmldsig#"

	valueTypeX509  = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3"
	encodingBase64 = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"

	algExcC14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
	algRSASHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
	algSHA1    = "http://www.w3.org/2000/09/xmldsig#sha1"
	// Accepted when verifying (not written): a server may sign with SHA-256.
	algRSASHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
	algSHA256    = "http://www.w3.org/2001/04/xmlenc#sha256"
)

// Operation is one of DGI's web-service methods this package speaks.
type Operation string

// The operations (WS2013: the reception service ws_efactura; WSCONS: the
// query service ws_consultas).
const (
	// OpSendEnvelope sends an EnvioCFE and answers an ACKSobre.
	OpSendEnvelope Operation = "EFACRECEPCIONSOBRE"
	// OpEnvelopeStatus sends a ConsultaCFE{IdReceptor, Token} and answers an
	// ACKCFE, the verdict on each CFE of the envelope.
	OpEnvelopeStatus Operation = "EFACCONSULTARESTADOENVIO"
	// OpSendReport sends a daily report (Reporte) and answers an ACKRepDiario.
	OpSendReport Operation = "EFACRECEPCIONREPORTE"
	// OpCFEStatus (query service) answers the state of one CFE and the
	// query parameters of the first envelope DGI received it in.
	OpCFEStatus Operation = "EFACCONSULTARESTADOCFE"
	// OpEnvelopes (query service) lists the envelopes received in a period
	// of at most 31 days.
	OpEnvelopes Operation = "EFACCONSULTARENVIOSSOBRE"
	// OpReports (query service) lists the daily reports of a date.
	OpReports Operation = "EFACCONSULTARENVIOSREPORTE"
)

// Operations lists every operation, reception service first.
var Operations = []Operation{OpSendEnvelope, OpEnvelopeStatus, OpSendReport, OpCFEStatus, OpEnvelopes, OpReports}

// Query reports whether the operation belongs to the query service
// (ws_consultas), whose elements are typed, rather than to the reception
// service (ws_efactura), whose elements carry a document in xmlData.
func (o Operation) Query() bool {
	switch o {
	case OpCFEStatus, OpEnvelopes, OpReports:
		return true
	}
	return false
}

// Known reports whether o is one of Operations.
func (o Operation) Known() bool {
	for _, k := range Operations {
		if k == o {
			return true
		}
	}
	return false
}

// Element is the local name of the request element in the Body:
// "WS_eFactura.EFACRECEPCIONSOBRE", "WS_eFactura_Consultas.EFACCONSULTARESTADOCFE".
func (o Operation) Element() string {
	if o.Query() {
		return "WS_eFactura_Consultas." + string(o)
	}
	return "WS_eFactura." + string(o)
}

// ResponseElement is the local name of the answer element.
func (o Operation) ResponseElement() string { return o.Element() + "Response" }

// SOAPAction is the action the operation is invoked with, unquoted. The
// reception service's come from DGI's WSDL (ws_eprueba: no slash after
// "uy"); the query service's follow the same GeneXus pattern with the
// program AWS_EFACTURA_CONSULTAS (DGI publishes no WSDL of it among the texts
// we have; the pattern is the one the published exchange WSDL uses, and a
// generated client of ws_consultas carries exactly these).
func (o Operation) SOAPAction() string {
	if o.Query() {
		return "http://dgi.gub.uyaction/AWS_EFACTURA_CONSULTAS." + string(o)
	}
	return "http://dgi.gub.uyaction/AWS_EFACTURA." + string(o)
}

// OperationOfElement returns the operation whose request element is local,
// and whether there is one.
func OperationOfElement(local string) (Operation, bool) {
	for _, o := range Operations {
		if o.Element() == local {
			return o, true
		}
	}
	return "", false
}

// Paths of DGI's test services, which the emulator serves too.
const (
	PathReception = "/ePrueba/ws_eprueba"
	PathQueries   = "/ePrueba/ws_consultasPrueba"
)

// DGI's published endpoints (WS2013, WSCONS). The production ones come from
// issuers' configurations seen in public integrations (secondary sources);
// check them against DGI's current publication before going live.
const (
	TestReceptionURL       = "https://efactura.dgi.gub.uy:6443/ePrueba/ws_eprueba"
	TestQueryURL           = "https://efactura.dgi.gub.uy:6460/ePrueba/ws_consultasPrueba"
	ProductionReceptionURL = "https://efactura.dgi.gub.uy/efactura/ws_efactura"
	ProductionQueryURL     = "https://efactura.dgi.gub.uy:6440/efactura/ws_consultas"
)

// canonicalText escapes character data as canonical XML writes it, after
// the line-end normalization every XML parser applies (CR LF and a lone CR
// become LF), so that the result is the canonical form of the text a parser
// reads back from a CDATA section or from escaped text holding s.
func canonicalText(s []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(s) + len(s)/16)
	for len(s) > 0 {
		i := bytes.IndexAny(s, "&<>\r")
		if i < 0 {
			b.Write(s)
			break
		}
		b.Write(s[:i])
		switch s[i] {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\r':
			b.WriteByte('\n')
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		}
		s = s[i+1:]
	}
	return b.Bytes()
}

// escapeString escapes a short text value (an id, a token, a series) for
// element content.
func escapeString(s string) string {
	return string(canonicalText([]byte(s)))
}

// xmlChars reports the first byte offset of b that cannot appear in an XML
// 1.0 document (invalid UTF-8, or a control character other than TAB, LF and
// CR), or -1.
func xmlChars(b []byte) int {
	for i := 0; i < len(b); {
		if c := b[i]; c >= 0x20 && c < utf8.RuneSelf { // printable ASCII: the common case
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return i
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0xFFFE, r == 0xFFFF:
			return i
		}
		i += n
	}
	return -1
}

// writeXMLData writes the text of an xmlData element as the document it
// carries: in a CDATA section, as DGI's examples do, unless the text holds
// "]]>", which ends a CDATA section: then as escaped text, the same
// characters for any XML parser.
func writeXMLData(b *bytes.Buffer, doc []byte) {
	if bytes.Contains(doc, []byte("]]>")) {
		b.Write(canonicalText(doc))
		return
	}
	b.WriteString("<![CDATA[")
	b.Write(doc)
	b.WriteString("]]>")
}

// trimXMLSpace trims XML white space.
func trimXMLSpace(s string) string { return strings.Trim(s, " \t\r\n") }
