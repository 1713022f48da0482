package dgi

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/beevik/etree"
	"github.com/google/uuid"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/russellhaering/goxmldsig/etreeutils"

	"github.com/cfe-agent/cfe-agent/signer"
)

// WS-Security as DGI's example (WS2013, annex, case 1): the Header holds
// wsse:Security (mustUnderstand="1") with a wsse:BinarySecurityToken (the
// signer's X.509 certificate, base64) and a ds:Signature whose SignedInfo
// uses exclusive C14N and rsa-sha1, with one Reference to the Body's wsu:Id,
// an exclusive C14N transform and a sha1 digest; KeyInfo points at the token
// through wsse:SecurityTokenReference/wsse:Reference.
//
// Signing writes the Body already in its exclusive canonical form and the
// SignedInfo from a template, so the digest and the signature are computed
// over bytes this file writes, without parsing them back: a 2 MB envelope
// costs one SHA-1 over it. No library writes this profile (goxmldsig signs
// enveloped signatures with X509Data KeyInfo); verification, which reads
// messages others wrote, canonicalizes with goxmldsig's exclusive C14N over
// etree, so every message the client sends to the emulator is checked by
// the library's canonicalizer, and the tests check both sides with xmlsec1.

// Causes carried by the errors of ReadMessage, for errors.Is.
var (
	// ErrNoSignature: the message has no wsse:Security header with a
	// signature.
	ErrNoSignature = errors.New("SOAP message without WS-Security signature")
	// ErrBadSignature: the WS-Security signature does not verify, breaks
	// DGI's profile, or was made by another certificate than the one
	// required.
	ErrBadSignature = errors.New("WS-Security signature does not verify")
	// ErrNotSOAP: the bytes are not a SOAP 1.1 message.
	ErrNotSOAP = errors.New("not a SOAP 1.1 message")
)

// messageBody is a message's Body content: in exclusive canonical form (what
// is digested, and what Sign writes), the first element declaring the
// namespaces it uses.
type messageBody struct {
	canonical []byte // the Body's children, canonical
	written   []byte // the same, as written (may use CDATA); nil means canonical
}

// signMessage writes a SOAP 1.1 message whose Envelope and Body use the
// prefix soapPrefix, with body as the Body's content, signed with creds in
// DGI's WS-Security profile.
func signMessage(creds *signer.Credentials, soapPrefix string, body messageBody) ([]byte, error) {
	if creds == nil || creds.Key == nil || creds.Certificate == nil {
		return nil, errors.New("falta la clave o el certificado para firmar el mensaje")
	}
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	bodyID, tokenID := "id-"+id, "X509-"+id

	// The Body in exclusive canonical form: the SOAP and wsu namespaces are
	// declared on it (visibly used, and no output ancestor declared them),
	// in the order of their prefixes, then wsu:Id.
	decls := []struct{ prefix, uri string }{{soapPrefix, nsSOAP}, {"wsu", nsWSU}}
	sort.Slice(decls, func(i, j int) bool { return decls[i].prefix < decls[j].prefix })
	var start bytes.Buffer
	start.WriteString("<" + soapPrefix + ":Body")
	for _, d := range decls {
		start.WriteString(` xmlns:` + d.prefix + `="` + d.uri + `"`)
	}
	start.WriteString(` wsu:Id="` + bodyID + `">`)
	end := "</" + soapPrefix + ":Body>"

	h := crypto.SHA1.New()
	h.Write(start.Bytes())
	h.Write(body.canonical)
	h.Write([]byte(end))
	digest := base64.StdEncoding.EncodeToString(h.Sum(nil))

	signedInfo := appendSignedInfo(nil, bodyID, digest, true)
	h = crypto.SHA1.New()
	h.Write(signedInfo)
	sig, err := creds.Key.Sign(rand.Reader, h.Sum(nil), crypto.SHA1)
	if err != nil {
		return nil, fmt.Errorf("no se pudo firmar el mensaje: %w", err)
	}

	written := body.written
	if written == nil {
		written = body.canonical
	}
	var b bytes.Buffer
	b.Grow(len(written) + 4096)
	p := soapPrefix
	b.WriteString(`<` + p + `:Envelope xmlns:` + p + `="` + nsSOAP + `">`)
	b.WriteString(`<` + p + `:Header><wsse:Security xmlns:wsse="` + nsWSSE + `" ` + p + `:mustUnderstand="1">`)
	b.WriteString(`<wsse:BinarySecurityToken xmlns:wsu="` + nsWSU + `" EncodingType="` + encodingBase64 +
		`" ValueType="` + valueTypeX509 + `" wsu:Id="` + tokenID + `">`)
	b.WriteString(base64.StdEncoding.EncodeToString(creds.Certificate.Raw))
	b.WriteString(`</wsse:BinarySecurityToken>`)
	b.WriteString(`<ds:Signature xmlns:ds="` + nsDS + `" Id="SIG-` + id + `">`)
	b.Write(appendSignedInfo(nil, bodyID, digest, false))
	b.WriteString(`<ds:SignatureValue>` + base64.StdEncoding.EncodeToString(sig) + `</ds:SignatureValue>`)
	b.WriteString(`<ds:KeyInfo Id="KI-` + id + `"><wsse:SecurityTokenReference xmlns:wsu="` + nsWSU + `" wsu:Id="STR-` + id + `">`)
	b.WriteString(`<wsse:Reference URI="#` + tokenID + `" ValueType="` + valueTypeX509 + `"/></wsse:SecurityTokenReference></ds:KeyInfo>`)
	b.WriteString(`</ds:Signature></wsse:Security></` + p + `:Header>`)
	b.WriteString(`<` + p + `:Body xmlns:wsu="` + nsWSU + `" wsu:Id="` + bodyID + `">`)
	b.Write(written)
	b.WriteString(end + `</` + p + `:Envelope>`)
	return b.Bytes(), nil
}

// appendSignedInfo appends the SignedInfo of a signature over the element
// of wsu:Id bodyID. In canonical form it declares the ds prefix (exclusive
// C14N: visibly used, no output ancestor); as written it relies on the
// Signature's declaration. Both write end tags.
func appendSignedInfo(b []byte, bodyID, digest string, canonical bool) []byte {
	if canonical {
		b = append(b, `<ds:SignedInfo xmlns:ds="`+nsDS+`">`...)
	} else {
		b = append(b, `<ds:SignedInfo>`...)
	}
	b = append(b, `<ds:CanonicalizationMethod Algorithm="`+algExcC14N+`"></ds:CanonicalizationMethod>`...)
	b = append(b, `<ds:SignatureMethod Algorithm="`+algRSASHA1+`"></ds:SignatureMethod>`...)
	b = append(b, `<ds:Reference URI="#`+bodyID+`"><ds:Transforms><ds:Transform Algorithm="`+algExcC14N+`"></ds:Transform></ds:Transforms>`...)
	b = append(b, `<ds:DigestMethod Algorithm="`+algSHA1+`"></ds:DigestMethod><ds:DigestValue>`...)
	b = append(b, digest...)
	return append(b, `</ds:DigestValue></ds:Reference></ds:SignedInfo>`...)
}

// Message is a SOAP message as ReadMessage reads it.
type Message struct {
	// Signed reports whether the message carried a WS-Security signature
	// that verified; Certificate is then the BinarySecurityToken's.
	Signed      bool
	Certificate *x509.Certificate
	// Element is the Body's element (the operation, its answer or a Fault);
	// Name is its local name and Space its namespace.
	Element *etree.Element
	Name    string
	Space   string
	// Fault is the SOAP Fault the Body carries, if any.
	Fault *Fault
}

// Fault is a SOAP 1.1 Fault.
type Fault struct {
	Code   string // faultcode, as written (soapenv:Client, SOAP-ENV:Server...)
	String string // faultstring
	// Detail is DGI's exception in the fault's detail (ExcepcionesServicios:
	// Respuestas/Respuesta{codigo, descripcion, detalle}), when it has one.
	Detail *ServiceError
}

// ReadOptions say what ReadMessage requires.
type ReadOptions struct {
	// Signed requires a valid WS-Security signature (else ErrNoSignature or
	// ErrBadSignature). Without it an unsigned message is read, and a
	// signature present is still verified.
	Signed bool
	// Certificate, when set, is the only certificate whose signature is
	// accepted (pinned: DGI's certificate for answers): the token must be
	// that certificate.
	Certificate *x509.Certificate
}

// maxMessageBytes bounds what ReadMessage parses: an envelope of 2 MB as
// text in xmlData, escaped, with room to spare.
const maxMessageBytes = 8 << 20

// ReadMessage parses a SOAP 1.1 message and verifies its WS-Security
// signature: the signed Reference must be the Body itself (no other element,
// so no signature-wrapping), through exclusive C14N; the key is the
// certificate of the BinarySecurityToken that KeyInfo names. The Body must
// hold exactly one element.
//
// Errors wrap ErrNotSOAP, ErrNoSignature or ErrBadSignature, with a Spanish
// message.
func ReadMessage(b []byte, opts ReadOptions) (*Message, error) {
	if len(b) > maxMessageBytes {
		return nil, fmt.Errorf("%w: el mensaje ocupa %d bytes (máximo %d)", ErrNotSOAP, len(b), maxMessageBytes)
	}
	doc := etree.NewDocument()
	doc.ReadSettings.ValidateInput = true
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("%w: no es XML bien formado: %w", ErrNotSOAP, err)
	}
	root := doc.Root()
	if root == nil || root.Tag != "Envelope" || root.NamespaceURI() != nsSOAP {
		return nil, fmt.Errorf("%w: la raíz no es soap:Envelope", ErrNotSOAP)
	}
	var header, body *etree.Element
	for _, el := range root.ChildElements() {
		switch {
		case el.NamespaceURI() != nsSOAP:
			return nil, fmt.Errorf("%w: <%s> no corresponde en el Envelope", ErrNotSOAP, el.Tag)
		case el.Tag == "Header" && header == nil && body == nil:
			header = el
		case el.Tag == "Body" && body == nil:
			body = el
		default:
			return nil, fmt.Errorf("%w: <%s> repetido o fuera de lugar en el Envelope", ErrNotSOAP, el.Tag)
		}
	}
	if body == nil {
		return nil, fmt.Errorf("%w: falta soap:Body", ErrNotSOAP)
	}
	kids := body.ChildElements()
	if len(kids) != 1 {
		return nil, fmt.Errorf("%w: el Body debe contener un elemento y contiene %d", ErrNotSOAP, len(kids))
	}
	m := &Message{Element: kids[0], Name: kids[0].Tag, Space: kids[0].NamespaceURI()}
	if m.Name == "Fault" && m.Space == nsSOAP {
		m.Fault = readFault(kids[0])
	}

	sec, err := security(header)
	if err != nil {
		return nil, err
	}
	if sec == nil {
		if opts.Signed || opts.Certificate != nil {
			return nil, fmt.Errorf("%w: el mensaje no trae la firma WS-Security", ErrNoSignature)
		}
		return m, nil
	}
	cert, err := verifySecurity(sec, body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	if opts.Certificate != nil && !opts.Certificate.Equal(cert) {
		return nil, fmt.Errorf("%w: el mensaje está firmado por «%s» (serie %s) y se esperaba el certificado de DGI «%s» (serie %s)",
			ErrBadSignature, cert.Subject.CommonName, cert.SerialNumber, opts.Certificate.Subject.CommonName, opts.Certificate.SerialNumber)
	}
	m.Signed, m.Certificate = true, cert
	return m, nil
}

// security returns the Header's wsse:Security, nil when there is none.
func security(header *etree.Element) (*etree.Element, error) {
	if header == nil {
		return nil, nil
	}
	var found *etree.Element
	for _, el := range header.ChildElements() {
		if el.Tag == "Security" && el.NamespaceURI() == nsWSSE {
			if found != nil {
				return nil, fmt.Errorf("%w: el Header tiene más de un wsse:Security", ErrBadSignature)
			}
			found = el
		}
	}
	if found != nil && childNS(found, nsDS, "Signature") == nil {
		return nil, fmt.Errorf("%w: wsse:Security no contiene ds:Signature", ErrNoSignature)
	}
	return found, nil
}

// verifySecurity checks the signature in sec over body and returns the
// token's certificate.
func verifySecurity(sec, body *etree.Element) (*x509.Certificate, error) {
	sigs := childrenNS(sec, nsDS, "Signature")
	if len(sigs) != 1 {
		return nil, fmt.Errorf("wsse:Security debe tener una firma y tiene %d", len(sigs))
	}
	sigEl := sigs[0]
	si := childNS(sigEl, nsDS, "SignedInfo")
	if si == nil {
		return nil, errors.New("falta SignedInfo")
	}
	cm := childNS(si, nsDS, "CanonicalizationMethod")
	if cm == nil || cm.SelectAttrValue("Algorithm", "") != algExcC14N {
		return nil, errors.New("CanonicalizationMethod debe ser C14N exclusiva")
	}
	sm := childNS(si, nsDS, "SignatureMethod")
	if sm == nil {
		return nil, errors.New("falta SignatureMethod")
	}
	var sigHash crypto.Hash
	switch alg := sm.SelectAttrValue("Algorithm", ""); alg {
	case algRSASHA1:
		sigHash = crypto.SHA1
	case algRSASHA256:
		sigHash = crypto.SHA256
	default:
		return nil, fmt.Errorf("SignatureMethod %q no admitido (se espera rsa-sha1)", alg)
	}
	refs := childrenNS(si, nsDS, "Reference")
	if len(refs) != 1 {
		return nil, fmt.Errorf("SignedInfo debe tener una Reference (al Body) y tiene %d", len(refs))
	}
	ref := refs[0]
	bodyID := wsuID(body)
	if bodyID == "" {
		return nil, errors.New("el Body no tiene wsu:Id: la firma no lo puede referenciar")
	}
	if ref.SelectAttrValue("URI", "") != "#"+bodyID {
		return nil, fmt.Errorf("la Reference %q no apunta al Body (#%s)", ref.SelectAttrValue("URI", ""), bodyID)
	}
	if n := countID(body.Parent(), bodyID); n != 1 {
		return nil, fmt.Errorf("el identificador %q aparece %d veces en el mensaje", bodyID, n)
	}
	prefixes, err := refTransforms(ref)
	if err != nil {
		return nil, err
	}
	dm := childNS(ref, nsDS, "DigestMethod")
	var digestHash crypto.Hash
	switch {
	case dm == nil:
		return nil, errors.New("falta DigestMethod")
	case dm.SelectAttrValue("Algorithm", "") == algSHA1:
		digestHash = crypto.SHA1
	case dm.SelectAttrValue("Algorithm", "") == algSHA256:
		digestHash = crypto.SHA256
	default:
		return nil, fmt.Errorf("DigestMethod %q no admitido", dm.SelectAttrValue("Algorithm", ""))
	}
	dv := childNS(ref, nsDS, "DigestValue")
	if dv == nil {
		return nil, errors.New("falta DigestValue")
	}
	want, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(dv.Text()), ""))
	if err != nil {
		return nil, errors.New("DigestValue no es base64")
	}
	cert, err := tokenCertificate(sec, sigEl)
	if err != nil {
		return nil, err
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("el certificado del token no tiene clave RSA")
	}

	canonical, err := excC14N(body, prefixes)
	if err != nil {
		return nil, fmt.Errorf("no se pudo canonicalizar el Body: %w", err)
	}
	h := digestHash.New()
	h.Write(canonical)
	if !bytes.Equal(h.Sum(nil), want) {
		return nil, errors.New("el Body fue modificado después de firmarlo (DigestValue no coincide)")
	}
	siPrefixes := inclusivePrefixes(cm)
	canonicalSI, err := excC14N(si, siPrefixes)
	if err != nil {
		return nil, fmt.Errorf("no se pudo canonicalizar SignedInfo: %w", err)
	}
	sv := childNS(sigEl, nsDS, "SignatureValue")
	if sv == nil {
		return nil, errors.New("falta SignatureValue")
	}
	sigValue, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(sv.Text()), ""))
	if err != nil {
		return nil, errors.New("SignatureValue no es base64")
	}
	h = sigHash.New()
	h.Write(canonicalSI)
	if err := rsa.VerifyPKCS1v15(pub, sigHash, h.Sum(nil), sigValue); err != nil {
		return nil, fmt.Errorf("la firma no es válida con el certificado «%s»", cert.Subject.CommonName)
	}
	return cert, nil
}

// refTransforms checks the Reference's transforms (exactly one, exclusive
// C14N) and returns its InclusiveNamespaces prefix list.
func refTransforms(ref *etree.Element) (string, error) {
	ts := childNS(ref, nsDS, "Transforms")
	if ts == nil {
		return "", errors.New("la Reference no tiene Transforms (se espera C14N exclusiva)")
	}
	list := childrenNS(ts, nsDS, "Transform")
	if len(list) != 1 || list[0].SelectAttrValue("Algorithm", "") != algExcC14N {
		return "", errors.New("la Reference debe tener una sola transformación, C14N exclusiva")
	}
	return inclusivePrefixes(list[0]), nil
}

// inclusivePrefixes returns the PrefixList of an ec:InclusiveNamespaces
// child, "" when there is none.
func inclusivePrefixes(el *etree.Element) string {
	for _, c := range el.ChildElements() {
		if c.Tag == "InclusiveNamespaces" && c.NamespaceURI() == algExcC14N {
			return c.SelectAttrValue("PrefixList", "")
		}
	}
	return ""
}

// tokenCertificate returns the certificate of the BinarySecurityToken that
// the signature's KeyInfo references.
func tokenCertificate(sec, sigEl *etree.Element) (*x509.Certificate, error) {
	ki := childNS(sigEl, nsDS, "KeyInfo")
	if ki == nil {
		return nil, errors.New("falta KeyInfo")
	}
	str := childNS(ki, nsWSSE, "SecurityTokenReference")
	if str == nil {
		return nil, errors.New("KeyInfo no tiene wsse:SecurityTokenReference")
	}
	r := childNS(str, nsWSSE, "Reference")
	if r == nil {
		return nil, errors.New("wsse:SecurityTokenReference no tiene wsse:Reference")
	}
	uri := r.SelectAttrValue("URI", "")
	id, ok := strings.CutPrefix(uri, "#")
	if !ok || id == "" {
		return nil, fmt.Errorf("wsse:Reference URI %q no apunta a un token del mensaje", uri)
	}
	var token *etree.Element
	for _, t := range childrenNS(sec, nsWSSE, "BinarySecurityToken") {
		if wsuID(t) == id {
			if token != nil {
				return nil, fmt.Errorf("hay más de un token %q", id)
			}
			token = t
		}
	}
	if token == nil {
		return nil, fmt.Errorf("no hay un wsse:BinarySecurityToken con wsu:Id %q", id)
	}
	if vt := token.SelectAttrValue("ValueType", ""); vt != valueTypeX509 {
		return nil, fmt.Errorf("el token es de tipo %q y se espera X509v3", vt)
	}
	if et := token.SelectAttrValue("EncodingType", encodingBase64); et != encodingBase64 {
		return nil, fmt.Errorf("el token está codificado como %q y se espera Base64Binary", et)
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(token.Text()), ""))
	if err != nil {
		return nil, errors.New("el token no es base64")
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, errors.New("el certificado del token no se puede leer")
	}
	return cert, nil
}

// excC14N returns the exclusive canonical form of el in its document:
// goxmldsig's canonicalizer over a copy of el carrying the namespaces in
// scope (the canonicalizer keeps those visibly used).
func excC14N(el *etree.Element, prefixes string) ([]byte, error) {
	ctx, err := etreeutils.NSBuildParentContext(el)
	if err != nil {
		return nil, err
	}
	detached, err := etreeutils.NSDetatch(ctx, el)
	if err != nil {
		return nil, err
	}
	return dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList(prefixes).Canonicalize(detached)
}

// wsuID returns el's wsu:Id ("" when it has none).
func wsuID(el *etree.Element) string {
	for _, a := range el.Attr {
		if a.Key == "Id" && a.Space != "" && a.NamespaceURI() == nsWSU {
			return a.Value
		}
	}
	return ""
}

// countID counts the elements under root whose Id (wsu:Id or Id) is id.
func countID(root *etree.Element, id string) int {
	n := 0
	var walk func(*etree.Element)
	walk = func(el *etree.Element) {
		for _, a := range el.Attr {
			if a.Key == "Id" && a.Value == id && (a.Space == "" || a.NamespaceURI() == nsWSU) {
				n++
			}
		}
		for _, c := range el.ChildElements() {
			walk(c)
		}
	}
	if root != nil {
		walk(root)
	}
	return n
}

func childNS(el *etree.Element, ns, tag string) *etree.Element {
	for _, c := range el.ChildElements() {
		if c.Tag == tag && c.NamespaceURI() == ns {
			return c
		}
	}
	return nil
}

func childrenNS(el *etree.Element, ns, tag string) []*etree.Element {
	var out []*etree.Element
	for _, c := range el.ChildElements() {
		if c.Tag == tag && c.NamespaceURI() == ns {
			out = append(out, c)
		}
	}
	return out
}

// text returns the character data directly inside el (CDATA included), all
// of it, in order.
func text(el *etree.Element) string {
	var b strings.Builder
	for _, t := range el.Child {
		if cd, ok := t.(*etree.CharData); ok {
			b.WriteString(cd.Data)
		}
	}
	return b.String()
}

// readFault reads a SOAP 1.1 Fault.
func readFault(el *etree.Element) *Fault {
	f := &Fault{}
	for _, c := range el.ChildElements() {
		switch c.Tag {
		case "faultcode":
			f.Code = trimXMLSpace(text(c))
		case "faultstring":
			f.String = trimXMLSpace(text(c))
		case "detail":
			for _, d := range c.ChildElements() {
				if se := readServiceError(d); se != nil {
					f.Detail = se
				}
			}
		}
	}
	return f
}
