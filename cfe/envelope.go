package cfe

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// EnvelopeKind is one of DGI's two envelope ("sobre") layouts.
type EnvelopeKind int

// The envelope layouts (Formato del Sobre v05; EnvioCFE.xsd and
// EnvioCFE_entreEmpresas.xsd).
const (
	// EnvelopeDGI is EnvioCFE: the CFEs an issuer sends to DGI.
	EnvelopeDGI EnvelopeKind = iota + 1
	// EnvelopeReceiver is EnvioCFE_entreEmpresas: the CFEs an issuer sends to
	// an electronic receiver, each in a CFE_Adenda with its Adenda.
	EnvelopeReceiver
)

// Root returns the envelope's root element name.
func (k EnvelopeKind) Root() string {
	switch k {
	case EnvelopeDGI:
		return "EnvioCFE"
	case EnvelopeReceiver:
		return "EnvioCFE_entreEmpresas"
	}
	return ""
}

// Limits and constants of an envelope.
const (
	// RUCDGI is DGI's own RUC: the RutReceptor of an envelope sent to it
	// (DGI's certificate DGI_RUC+214844360018).
	RUCDGI = "214844360018"
	// MaxEnvelopeCFEs is how many CFEs one envelope may hold (Formato del
	// Sobre v02: "Se reduce a 250"; CantCFE maxInclusive 250).
	MaxEnvelopeCFEs = 250
	// MaxEnvelopeBytes is the largest envelope file DGI takes ("Tamaño máximo:
	// 2 Mega"), read as 2,000,000 bytes, the smaller reading.
	MaxEnvelopeBytes = 2_000_000
	// MaxEnvelopeID is the largest Idemisor (NUM 10).
	MaxEnvelopeID = 9_999_999_999
)

// envelopeVersion is the fixed version of the envelope and its Caratula.
const envelopeVersion = "1.0"

// fechaHoraMin and fechaHoraMax bound DGI's FechaHoraType.
var (
	fechaHoraMin = time.Date(2011, time.October, 1, 0, 0, 0, 0, Montevideo)
	fechaHoraMax = time.Date(2050, time.December, 31, 23, 59, 59, 0, Montevideo)
)

// Caratula is an envelope's cover (zone A).
type Caratula struct {
	RutReceptor string    // DGI's RUC, or the receiving company's
	RUCEmisor   string    // the issuer of every CFE in the envelope
	IdEmisor    int64     // the issuer's number of this envelope (Idemisor)
	CantCFE     int       // read from an envelope; BuildEnvelope writes len(CFEs)
	Fecha       time.Time // when the envelope was made
	Certificate []byte    // DER of the certificate that signed every CFE
}

// EnvelopeCFE is one CFE of an envelope.
type EnvelopeCFE struct {
	// XML is the signed CFE as its own document, byte for byte what was signed
	// (the CFE element, declaring the CFE namespace itself).
	XML []byte
	// Adenda is the text printed after the CFE; only an EnvelopeReceiver
	// carries it (CFE_Adenda/Adenda).
	Adenda string
}

// Envelope is a DGI envelope of signed CFEs.
//
// DGI does not sign the envelope itself: Formato del Sobre replaced its zone
// "Firma Electrónica" by the certificate in the Caratula (preliminary v04,
// 2011), and EnvioCFE.xsd allows no Signature element. Its integrity is that
// of its CFEs, each signed on its own with the certificate the Caratula
// carries ("Todos los CFE incluidos en el sobre deben ser firmados con el
// mismo certificado electrónico"); the signer package checks that.
type Envelope struct {
	Kind     EnvelopeKind
	Caratula Caratula
	CFEs     []EnvelopeCFE
}

// CFEHead is what an envelope needs to know of a CFE.
type CFEHead struct {
	Type         Type
	Serie        string
	Nro          int64
	RUCEmisor    string
	TipoDocRecep int    // 0 when the CFE has no Receptor
	DocRecep     string // the receiver's RUC when TipoDocRecep is 2
	Signed       bool   // it has a ds:Signature child
}

// String names the CFE as a user knows it: "e-Factura A-12".
func (h CFEHead) String() string { return fmt.Sprintf("%s %s-%d", h.Type.Name(), h.Serie, h.Nro) }

// ReceiverRUC returns the receiver's RUC, or "" when the receiver is not
// identified by a RUC.
func (h CFEHead) ReceiverRUC() string {
	if h.TipoDocRecep != 2 {
		return ""
	}
	return h.DocRecep
}

// AddressedTo reports whether the CFE may go in the envelope of the company
// of RUC ruc: its receiver is identified by that RUC, and it is not a
// contingency receipt (those go to DGI and never to the receiver).
func (h CFEHead) AddressedTo(ruc string) bool {
	info, _ := h.Type.Info()
	return !info.Contingency && h.ReceiverRUC() == ruc
}

// ReadCFEHead reads a standalone CFE's type, number, issuer and receiver,
// without building the model. It reads the whole document, so it also checks
// that it is well-formed XML with nothing but white space after the CFE
// element. It returns EINVALID when b is not a CFE document.
func ReadCFEHead(b []byte) (CFEHead, error) {
	h, _, err := readHead(b, true)
	if err != nil {
		return CFEHead{}, &Error{Code: EINVALID, Op: "cfe.ReadCFEHead", Message: err.Error()}
	}
	return h, nil
}

// readHead reads a standalone CFE document in one pass: its prolog (only
// white space and an XML declaration in UTF-8), the CFE element's start tag
// and its document's Encabezado (IdDoc, Emisor, Receptor). It returns the
// head and the CFE element's bytes, from its start tag to its end tag,
// untouched.
//
// When whole, it reads every token to the end: the document is well-formed,
// Signed means a ds:Signature child, and only white space follows the CFE
// element. Otherwise it stops after the Encabezado and checks the document's
// end by its bytes: the last end tag is the CFE element's, with only white
// space after it, and Signed means that a Signature element's end tag comes
// right before it, where an enveloped signature goes. That is what an
// envelope needs (BuildEnvelope): the rest of each CFE is covered by its
// signature, which the caller verifies (signer.PrepareEnvelope parses and
// canonicalizes every CFE), and a CFE cut from a parsed envelope
// (ParseEnvelope) was read whole with it.
func readHead(b []byte, whole bool) (CFEHead, []byte, error) {
	if head := bytes.TrimLeft(b, " \t\r\n"); bytes.HasPrefix(head, []byte("<?xml")) {
		if end := bytes.Index(head, []byte("?>")); end > 0 {
			if enc := declaredEncoding(head[:end]); enc != "" && !strings.EqualFold(enc, "utf-8") {
				return CFEHead{}, nil, fmt.Errorf("el CFE está en %s: en un sobre va en UTF-8", enc)
			}
		}
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	malformed := func(err error) error {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("el CFE no es XML bien formado: %w", err)
	}
	// The prolog, up to the CFE element's start tag.
	var off int64
	for {
		off = d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return CFEHead{}, nil, errors.New("el documento no contiene un elemento CFE")
			}
			return CFEHead{}, nil, malformed(err)
		}
		if t, ok := tok.(xml.StartElement); ok {
			if t.Name.Space != NamespaceCFE || t.Name.Local != "CFE" {
				return CFEHead{}, nil, fmt.Errorf("el elemento raíz es <%s> y no <CFE> del espacio de nombres %s declarado en él", t.Name.Local, NamespaceCFE)
			}
			break
		}
		switch t := tok.(type) {
		case xml.ProcInst:
			if t.Target != "xml" {
				return CFEHead{}, nil, errors.New("el CFE contiene una instrucción de procesamiento antes del elemento CFE")
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return CFEHead{}, nil, errors.New("el CFE tiene texto fuera del elemento CFE")
			}
		default:
			return CFEHead{}, nil, errors.New("el CFE contiene comentarios o declaraciones antes del elemento CFE")
		}
	}
	// The CFE element's content: depth 2 is its children (the document and
	// the Signature), 3 the document's (Encabezado), 4 the Encabezado's, 5
	// their fields.
	var (
		h                   CFEHead
		found, inDoc, inEnc bool
		group, field        string
		text                []byte
		tipo, nro, tipoDoc  string
	)
	depth := 1
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return CFEHead{}, nil, malformed(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 2 && t.Name.Space == NamespaceDSig && t.Name.Local == "Signature":
				h.Signed = true
			case depth == 2 && t.Name.Space == NamespaceCFE && !found:
				found, inDoc = true, true
			case depth == 3 && inDoc && t.Name.Local == "Encabezado":
				inEnc = true
			case depth == 4 && inEnc:
				group = t.Name.Local
			case depth == 5 && group != "":
				field, text = t.Name.Local, text[:0]
			}
		case xml.CharData:
			if field != "" {
				text = append(text, t...)
			}
		case xml.EndElement:
			switch {
			case depth == 5 && field != "":
				v := strings.TrimSpace(string(text))
				switch group + "/" + field {
				case "IdDoc/TipoCFE":
					tipo = v
				case "IdDoc/Serie":
					h.Serie = v
				case "IdDoc/Nro":
					nro = v
				case "Emisor/RUCEmisor":
					h.RUCEmisor = v
				case "Receptor/TipoDocRecep":
					tipoDoc = v
				case "Receptor/DocRecep":
					h.DocRecep = v
				}
				field = ""
			case depth == 4:
				group = ""
			case depth == 3 && inEnc:
				inEnc = false
				if !whole {
					depth = -1 // the head is read
					continue
				}
			case depth == 2:
				inDoc = false
				if !whole && found {
					depth = -1 // a document without Encabezado
					continue
				}
			}
			depth--
		}
	}
	var elem []byte
	if whole {
		end := d.InputOffset()
		if len(bytes.TrimSpace(b[end:])) > 0 {
			return CFEHead{}, nil, errors.New("el CFE tiene contenido después del elemento CFE")
		}
		elem = b[off:end]
	} else {
		var err error
		if elem, h.Signed, err = cfeElement(b, off); err != nil {
			return CFEHead{}, nil, err
		}
	}
	t, _ := strconv.Atoi(tipo)
	h.Type = Type(t)
	h.Nro, _ = strconv.ParseInt(nro, 10, 64)
	h.TipoDocRecep, _ = strconv.Atoi(tipoDoc)
	if !found || !h.Type.Valid() {
		return CFEHead{}, nil, errors.New("el documento no tiene Encabezado/IdDoc/TipoCFE de un tipo de CFE conocido")
	}
	return h, elem, nil
}

// cfeElement returns the CFE element of b whose start tag is at off, found
// by its end tag: the last one of b, with only white space after it. signed
// reports whether the end tag of a Signature element comes right before it.
func cfeElement(b []byte, off int64) (elem []byte, signed bool, err error) {
	start := b[off:]
	name := start[1:]
	if i := bytes.IndexAny(name, " \t\r\n/>"); i >= 0 {
		name = name[:i]
	}
	trimmed := bytes.TrimRight(start, " \t\r\n")
	endTag, ok := lastEndTag(trimmed)
	if !ok || string(endTag.name) != string(name) {
		return nil, false, fmt.Errorf("el CFE no termina en </%s>: tiene contenido después del elemento CFE o está incompleto", name)
	}
	before, ok := lastEndTag(bytes.TrimRight(trimmed[:endTag.at], " \t\r\n"))
	local := before.name
	if i := bytes.IndexByte(local, ':'); i >= 0 {
		local = local[i+1:]
	}
	return trimmed, ok && string(local) == "Signature", nil
}

// endTag is an end tag found by lastEndTag: its qualified name and offset.
type endTag struct {
	name []byte
	at   int
}

// lastEndTag finds the end tag b ends with ("</name>" or "</name >").
func lastEndTag(b []byte) (endTag, bool) {
	if len(b) == 0 || b[len(b)-1] != '>' {
		return endTag{}, false
	}
	i := bytes.LastIndex(b, []byte("</"))
	if i < 0 {
		return endTag{}, false
	}
	name := bytes.TrimRight(b[i+2:len(b)-1], " \t\r\n")
	if len(name) == 0 || bytes.ContainsAny(name, " \t\r\n<>/\"'=") {
		return endTag{}, false
	}
	return endTag{name: name, at: i}, true
}

var encodingAttr = regexp.MustCompile(`encoding\s*=\s*["']([A-Za-z0-9._-]+)["']`)

func declaredEncoding(inst []byte) string {
	if m := encodingAttr.FindSubmatch(inst); m != nil {
		return string(m[1])
	}
	return ""
}

// caratulaRules returns a field error for each rule of DGI's envelope a
// Caratula of an envelope of kind breaks.
func caratulaRules(kind EnvelopeKind, c Caratula) []FieldError {
	var fs []FieldError
	add := func(campo, format string, args ...any) {
		fs = append(fs, FieldError{Campo: campo, Mensaje: fmt.Sprintf(format, args...)})
	}
	if kind.Root() == "" {
		add("tipo", "el tipo de sobre %d no existe", int(kind))
	}
	if !ValidRUC(c.RutReceptor) {
		add("Caratula/RutReceptor", "%q no es un RUC válido", c.RutReceptor)
	}
	if !ValidRUC(c.RUCEmisor) {
		add("Caratula/RUCEmisor", "%q no es un RUC válido", c.RUCEmisor)
	}
	if c.IdEmisor < 0 || c.IdEmisor > MaxEnvelopeID {
		add("Caratula/Idemisor", "debe ser un número de 0 a %d", int64(MaxEnvelopeID))
	}
	if c.Fecha.Before(fechaHoraMin) || c.Fecha.After(fechaHoraMax) {
		add("Caratula/Fecha", "debe estar entre 2011-10-01 y 2050-12-31")
	}
	if len(c.Certificate) == 0 {
		add("Caratula/X509Certificate", "falta el certificado con el que se firmaron los CFE")
	}
	return fs
}

// check returns a field error for each rule of DGI's envelope the envelope
// breaks, and the CFE element of each CFE (readHead, not whole: see there).
func (e *Envelope) check() ([]FieldError, [][]byte) {
	fs := caratulaRules(e.Kind, e.Caratula)
	add := func(campo, format string, args ...any) {
		fs = append(fs, FieldError{Campo: campo, Mensaje: fmt.Sprintf(format, args...)})
	}
	c := e.Caratula
	switch n := len(e.CFEs); {
	case n == 0:
		add("CFE", "un sobre lleva al menos un CFE")
	case n > MaxEnvelopeCFEs:
		add("CFE", "un sobre admite hasta %d CFE (DGI, Formato del Sobre) y se seleccionaron %d", MaxEnvelopeCFEs, n)
	}
	type number struct {
		t     Type
		serie string
		nro   int64
	}
	elems := make([][]byte, len(e.CFEs))
	seen := make(map[number]int, len(e.CFEs))
	for i, ec := range e.CFEs {
		campo := "CFE[" + strconv.Itoa(i+1) + "]"
		h, elem, err := readHead(ec.XML, false)
		if err != nil {
			add(campo, "%s", err.Error())
			continue
		}
		elems[i] = elem
		if !h.Signed {
			add(campo, "%s no está firmado", h)
		}
		if h.RUCEmisor != c.RUCEmisor {
			add(campo, "%s es del RUC emisor %s y el sobre del RUC %s: un sobre lleva los CFE de un solo emisor", h, h.RUCEmisor, c.RUCEmisor)
		}
		key := number{h.Type, h.Serie, h.Nro}
		if j, dup := seen[key]; dup {
			add(campo, "%s ya está en el sobre (CFE[%d])", h, j)
		}
		seen[key] = i + 1
		switch e.Kind {
		case EnvelopeReceiver:
			if info, _ := h.Type.Info(); info.Contingency {
				add(campo, "%s es un comprobante de contingencia: se envía a DGI y no al receptor", h)
			}
			if r := h.ReceiverRUC(); r != c.RutReceptor {
				add(campo, "%s no está dirigido al RUC %s (receptor: %s)", h, c.RutReceptor, describeReceiver(h))
			}
			if !utf8.ValidString(ec.Adenda) {
				add(campo, "la adenda de %s no es UTF-8 válido", h)
			}
		case EnvelopeDGI:
			if ec.Adenda != "" {
				add(campo, "la adenda de %s no va en el sobre a DGI", h)
			}
		}
	}
	return fs, elems
}

func describeReceiver(h CFEHead) string {
	switch h.TipoDocRecep {
	case 0:
		return "sin identificar"
	case 2:
		return "RUC " + h.DocRecep
	}
	return fmt.Sprintf("documento de tipo %d, no un RUC", h.TipoDocRecep)
}

// BuildEnvelope writes e as DGI's XML: a UTF-8 document whose root is
// EnvioCFE (or EnvioCFE_entreEmpresas), the Caratula (CantCFE is the number
// of CFEs, Fecha in Montevideo's zone to the second, the certificate in
// base64), then each CFE spliced in byte for byte as it was signed (an XML
// declaration in front of it is left out; the element is not re-serialized,
// so its signature stays valid), each in a CFE_Adenda with its Adenda in the
// receiver's envelope.
//
// It returns EINVALID naming each broken rule: a RUC without its check
// digit, no CFE or more than MaxEnvelopeCFEs, a CFE that is not a signed
// standalone CFE, of another issuer, repeated, or (receiver's envelope) not
// addressed to RutReceptor's RUC or a contingency receipt, and an envelope
// larger than MaxEnvelopeBytes.
//
// Of each CFE it reads the head (up to the Encabezado) and checks the ends
// (the prolog, the CFE element's end tag with a Signature's right before it,
// nothing after): it does not parse the rest, whose every byte the CFE's
// signature covers. Verifying those signatures is the caller's part, before
// anything is sent: signer.PrepareEnvelope (or signer.MakeEnvelope) does it.
func BuildEnvelope(e *Envelope) ([]byte, error) {
	const op = "cfe.BuildEnvelope"
	fs, elems := e.check()
	if len(fs) > 0 {
		return nil, envelopeInvalid(op, fs)
	}
	return e.write(op, elems)
}

// CheckedEnvelope is an envelope whose rules CheckEnvelope applied, to be
// written under a Caratula numbered afterwards (Build).
type CheckedEnvelope struct {
	env   Envelope
	elems [][]byte
}

// CheckEnvelope applies BuildEnvelope's rules to e once, for a caller that
// checks an envelope before it numbers it (an outbox records the envelope,
// which gives it its Idemisor, only once it is known to be buildable), and
// then writes it with Build. It keeps e's CFEs, whose bytes must not change
// in between. Errors: EINVALID as BuildEnvelope's.
func CheckEnvelope(e *Envelope) (*CheckedEnvelope, error) {
	fs, elems := e.check()
	if len(fs) > 0 {
		return nil, envelopeInvalid("cfe.CheckEnvelope", fs)
	}
	c := &CheckedEnvelope{env: *e, elems: elems}
	c.env.CFEs = slices.Clone(e.CFEs)
	return c, nil
}

// Build writes the checked envelope as BuildEnvelope does, its Caratula's
// Idemisor and Fecha replaced by idEmisor and fecha (checked again). Its
// CFEs are not read again. Errors: EINVALID for an Idemisor or Fecha
// out of range, or an envelope larger than MaxEnvelopeBytes.
func (c *CheckedEnvelope) Build(idEmisor int64, fecha time.Time) ([]byte, error) {
	const op = "cfe.BuildEnvelope"
	e := c.env
	e.Caratula.IdEmisor, e.Caratula.Fecha = idEmisor, fecha
	if fs := caratulaRules(e.Kind, e.Caratula); len(fs) > 0 {
		return nil, envelopeInvalid(op, fs)
	}
	return e.write(op, c.elems)
}

// write writes e, whose CFE elements are elems, once its rules were checked.
func (e *Envelope) write(op string, elems [][]byte) ([]byte, error) {
	c := e.Caratula
	size := 1024 + base64.StdEncoding.EncodedLen(len(c.Certificate))
	for i, ec := range e.CFEs {
		size += len(elems[i]) + len(ec.Adenda) + 64
	}
	var b bytes.Buffer
	b.Grow(size)
	root := e.Kind.Root()
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<%s xmlns="%s" version="%s">`, root, NamespaceCFE, envelopeVersion)
	fmt.Fprintf(&b, `<Caratula version="%s"><RutReceptor>%s</RutReceptor><RUCEmisor>%s</RUCEmisor><Idemisor>%d</Idemisor>`+
		`<CantCFE>%d</CantCFE><Fecha>%s</Fecha><X509Certificate>%s</X509Certificate></Caratula>`,
		envelopeVersion, c.RutReceptor, c.RUCEmisor, c.IdEmisor, len(e.CFEs),
		c.Fecha.In(Montevideo).Format("2006-01-02T15:04:05-07:00"), base64.StdEncoding.EncodeToString(c.Certificate))
	for i, ec := range e.CFEs {
		elem := elems[i]
		if e.Kind == EnvelopeReceiver {
			b.WriteString("<CFE_Adenda>")
			b.Write(elem)
			if ec.Adenda != "" {
				b.WriteString("<Adenda>")
				if err := xml.EscapeText(&b, []byte(ec.Adenda)); err != nil {
					return nil, &Error{Code: EINTERNAL, Op: op, Err: err}
				}
				b.WriteString("</Adenda>")
			}
			b.WriteString("</CFE_Adenda>")
		} else {
			b.Write(elem)
		}
	}
	fmt.Fprintf(&b, "</%s>\n", root)
	if b.Len() > MaxEnvelopeBytes {
		return nil, envelopeInvalid(op, []FieldError{{Campo: "CFE", Mensaje: fmt.Sprintf(
			"el sobre ocuparía %d bytes y DGI admite hasta %d: incluya menos CFE", b.Len(), MaxEnvelopeBytes)}})
	}
	return b.Bytes(), nil
}

func envelopeInvalid(op string, fs []FieldError) *Error {
	msg := "el sobre no cumple el formato de DGI"
	if len(fs) == 1 {
		msg = fs[0].Campo + ": " + fs[0].Mensaje
	}
	return &Error{Code: EINVALID, Op: op, Message: msg, Fields: fs}
}

// ParseEnvelope reads an envelope of either kind and cuts each CFE out of it
// byte for byte, as the standalone document that was signed (DGI's example
// envelope is ISO-8859-1: such an envelope is first decoded to UTF-8, and the
// CFEs are cut from that). It checks the envelope as BuildEnvelope does
// (CantCFE must equal the number of CFEs) and returns EINVALID naming what
// is wrong. It does not verify signatures: see signer.ReadEnvelope.
func ParseEnvelope(b []byte) (*Envelope, error) {
	const op = "cfe.ParseEnvelope"
	b, err := envelopeUTF8(b)
	if err != nil {
		return nil, &Error{Code: EINVALID, Op: op, Message: err.Error()}
	}
	e, err := cutEnvelope(b)
	if err != nil {
		return nil, &Error{Code: EINVALID, Op: op, Message: err.Error()}
	}
	fs, _ := e.check()
	if e.Caratula.CantCFE != len(e.CFEs) {
		fs = append(fs, FieldError{Campo: "Caratula/CantCFE", Mensaje: fmt.Sprintf("dice %d y el sobre contiene %d CFE", e.Caratula.CantCFE, len(e.CFEs))})
	}
	if len(fs) > 0 {
		return nil, envelopeInvalid(op, fs)
	}
	return e, nil
}

// caratulaXML is the Caratula as ParseEnvelope decodes it.
type caratulaXML struct {
	RutReceptor     string
	RUCEmisor       string
	Idemisor        string
	CantCFE         string
	Fecha           string
	X509Certificate string
}

// cutEnvelope walks the envelope's tokens, keeping the byte offsets of each
// CFE element.
func cutEnvelope(b []byte) (*Envelope, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	e := &Envelope{}
	depth := 0
	var car *caratulaXML
	var current *EnvelopeCFE // inside a CFE_Adenda
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("el sobre no es XML bien formado: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Space != NamespaceCFE {
				return nil, fmt.Errorf("el elemento <%s> no es del espacio de nombres %s", t.Name.Local, NamespaceCFE)
			}
			switch {
			case depth == 0:
				switch t.Name.Local {
				case EnvelopeDGI.Root():
					e.Kind = EnvelopeDGI
				case EnvelopeReceiver.Root():
					e.Kind = EnvelopeReceiver
				default:
					return nil, fmt.Errorf("el documento no es un sobre de CFE (EnvioCFE o EnvioCFE_entreEmpresas): su raíz es <%s>", t.Name.Local)
				}
				depth++
			case depth == 1 && t.Name.Local == "Caratula":
				if car != nil {
					return nil, errors.New("el sobre tiene más de una Caratula")
				}
				car = &caratulaXML{}
				if err := d.DecodeElement(car, &t); err != nil {
					return nil, fmt.Errorf("la Caratula no se puede leer: %w", err)
				}
			case depth == 1 && t.Name.Local == "CFE" && e.Kind == EnvelopeDGI,
				depth == 2 && t.Name.Local == "CFE" && current != nil && current.XML == nil:
				if err := d.Skip(); err != nil {
					return nil, fmt.Errorf("el sobre no es XML bien formado: %w", err)
				}
				cut := b[off:d.InputOffset()]
				if current != nil {
					current.XML = cut
				} else {
					e.CFEs = append(e.CFEs, EnvelopeCFE{XML: cut})
				}
			case depth == 1 && t.Name.Local == "CFE_Adenda" && e.Kind == EnvelopeReceiver:
				current = &EnvelopeCFE{}
				depth++
			case depth == 2 && t.Name.Local == "Adenda" && current != nil:
				var a struct {
					Text string `xml:",chardata"`
				}
				if err := d.DecodeElement(&a, &t); err != nil {
					return nil, fmt.Errorf("una Adenda no se puede leer: %w", err)
				}
				current.Adenda = a.Text
			default:
				return nil, fmt.Errorf("el elemento <%s> no corresponde en ese lugar de un sobre %s", t.Name.Local, e.Kind.Root())
			}
		case xml.EndElement:
			depth--
			if current != nil && depth == 1 {
				if current.XML == nil {
					return nil, errors.New("un CFE_Adenda no contiene un CFE")
				}
				e.CFEs = append(e.CFEs, *current)
				current = nil
			}
		case xml.CharData:
			if depth > 0 && len(bytes.TrimSpace(t)) > 0 {
				return nil, errors.New("el sobre tiene texto fuera de sus elementos")
			}
		}
	}
	if e.Kind == 0 {
		return nil, errors.New("el documento no es un sobre de CFE")
	}
	if car == nil {
		return nil, errors.New("el sobre no tiene Caratula")
	}
	c := &e.Caratula
	c.RutReceptor, c.RUCEmisor = strings.TrimSpace(car.RutReceptor), strings.TrimSpace(car.RUCEmisor)
	var err error
	if c.IdEmisor, err = strconv.ParseInt(strings.TrimSpace(car.Idemisor), 10, 64); err != nil {
		c.IdEmisor = -1
	}
	if c.CantCFE, err = strconv.Atoi(strings.TrimSpace(car.CantCFE)); err != nil {
		c.CantCFE = -1
	}
	if c.Fecha, err = time.Parse(time.RFC3339, strings.TrimSpace(car.Fecha)); err != nil {
		return nil, fmt.Errorf("la Fecha de la Caratula %q no es una fecha y hora con zona", car.Fecha)
	}
	if c.Certificate, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(car.X509Certificate), "")); err != nil {
		return nil, errors.New("el X509Certificate de la Caratula no es base64")
	}
	return e, nil
}

// envelopeUTF8 returns the envelope in UTF-8: as it is when it declares
// UTF-8 or nothing, decoded when it declares ISO-8859-1 (DGI's example), with
// its declaration then saying UTF-8.
func envelopeUTF8(b []byte) ([]byte, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("<?xml")) {
		return b, nil
	}
	end := bytes.Index(b, []byte("?>"))
	if end < 0 {
		return nil, errors.New("la declaración XML del sobre no termina")
	}
	decl := b[:end]
	enc := declaredEncoding(decl)
	switch strings.ToLower(enc) {
	case "", "utf-8", "utf8":
		return b, nil
	case "iso-8859-1", "latin1", "iso8859-1":
		out := make([]byte, 0, len(b)+len(b)/8)
		out = append(out, encodingAttr.ReplaceAll(decl, []byte(`encoding="UTF-8"`))...)
		for _, c := range b[end:] {
			out = utf8.AppendRune(out, rune(c))
		}
		return out, nil
	}
	return nil, fmt.Errorf("el sobre está en %s: se admiten UTF-8 e ISO-8859-1", enc)
}
