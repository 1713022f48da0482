package cfe

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/beevik/etree"
	"github.com/shopspring/decimal"
)

// This file holds the small engine behind BuildXML and ParseXML. A content
// model (xmlschema.go) is a list of xmlNode values, one per element of an
// xs:sequence of CFEType.xsd, in the schema's order. Each node knows how to
// write its element from the model and how to read it back, so that writing
// and reading share one description of every CFE type and cannot drift apart.

// Spanish rule messages shared by the builder and the parser.
const (
	xmlMsgRequired  = "es obligatorio"
	xmlMsgRepeated  = "aparece más de una vez"
	xmlMsgBadChars  = "contiene caracteres que XML no admite"
	xmlMsgInteger   = "debe ser un número entero"
	xmlMsgDigits    = "debe contener solo dígitos"
	xmlMsgDecimal   = "debe ser un número decimal (por ejemplo 1234.56)"
	xmlMsgTimestamp = "debe ser una fecha y hora AAAA-MM-DDThh:mm:ss-03:00"
)

// xmlState carries the path of the element being visited and the field errors
// found so far. The builder and the parser both use it, so both name a field
// the same way: "Encabezado/Totales/MntPagar", "Detalle/Item[2]/IndFact".
type xmlState struct {
	path []string
	errs []FieldError
}

func (st *xmlState) enter(name string) { st.path = append(st.path, name) }
func (st *xmlState) leave()            { st.path = st.path[:len(st.path)-1] }

// fail records that the element name, a child of the current one, breaks a
// rule; an empty name stands for the current element itself.
func (st *xmlState) fail(name, msg string) {
	campo := strings.Join(st.path, "/")
	if name != "" {
		campo = strings.Join(append(st.path[:len(st.path):len(st.path)], name), "/")
	}
	st.errs = append(st.errs, FieldError{Campo: campo, Mensaje: msg})
}

// child returns parent's only child element called name in the CFE namespace,
// or nil. A repeated element is an error.
func (st *xmlState) child(parent *etree.Element, name string) *etree.Element {
	els := cfeChildren(parent, name)
	if len(els) == 0 {
		return nil
	}
	if len(els) > 1 {
		st.fail(name, xmlMsgRepeated)
	}
	return els[0]
}

// cfeChildren returns parent's child elements called name in the CFE namespace.
func cfeChildren(parent *etree.Element, name string) []*etree.Element {
	var out []*etree.Element
	for _, el := range parent.ChildElements() {
		if el.Tag == name && el.NamespaceURI() == NamespaceCFE {
			out = append(out, el)
		}
	}
	return out
}

// xmlNode maps one element (or one group of elements) of a content model to
// the model struct S.
type xmlNode[S any] interface {
	build(st *xmlState, parent *etree.Element, s *S)
	parse(st *xmlState, parent *etree.Element, s *S)
}

// leafNode is an element of simple content bound to one field of S.
type leafNode[S any] struct {
	name     string
	required bool
	bind     func(*S) xmlValue
}

// reqElem is a required element of simple content (minOccurs 1).
func reqElem[S any](name string, bind func(*S) xmlValue) leafNode[S] {
	return leafNode[S]{name: name, required: true, bind: bind}
}

// optElem is an optional element of simple content (minOccurs 0).
func optElem[S any](name string, bind func(*S) xmlValue) leafNode[S] {
	return leafNode[S]{name: name, bind: bind}
}

func (n leafNode[S]) build(st *xmlState, parent *etree.Element, s *S) {
	text, ok, err := n.bind(s).format()
	switch {
	case err != nil:
		st.fail(n.name, err.Error())
	case ok:
		parent.CreateElement(n.name).SetText(text)
	case n.required:
		st.fail(n.name, xmlMsgRequired)
	}
}

func (n leafNode[S]) parse(st *xmlState, parent *etree.Element, s *S) {
	el := st.child(parent, n.name)
	if el == nil {
		if n.required {
			st.fail(n.name, xmlMsgRequired)
		}
		return
	}
	v := n.bind(s)
	if err := v.parse(el.Text()); err != nil {
		st.fail(n.name, err.Error())
		return
	}
	// A required element whose text reads as the model's "absent" value
	// (0, "") could not be written back: reject it here already.
	if _, ok, _ := v.format(); !ok && n.required {
		st.fail(n.name, xmlMsgRequired)
	}
}

// childNode is a required element of complex content held by value in S.
type childNode[S, T any] struct {
	name    string
	get     func(*S) *T
	content []xmlNode[T]
}

func (n childNode[S, T]) build(st *xmlState, parent *etree.Element, s *S) {
	buildElement(st, parent.CreateElement(n.name), n.name, n.content, n.get(s))
}

func (n childNode[S, T]) parse(st *xmlState, parent *etree.Element, s *S) {
	el := st.child(parent, n.name)
	if el == nil {
		st.fail(n.name, xmlMsgRequired)
		return
	}
	parseElement(st, el, n.name, n.content, n.get(s))
}

// optChildNode is an optional element of complex content; a nil pointer in S
// means the element is absent.
type optChildNode[S, T any] struct {
	name    string
	get     func(*S) **T
	content []xmlNode[T]
}

func (n optChildNode[S, T]) build(st *xmlState, parent *etree.Element, s *S) {
	if v := *n.get(s); v != nil {
		buildElement(st, parent.CreateElement(n.name), n.name, n.content, v)
	}
}

func (n optChildNode[S, T]) parse(st *xmlState, parent *etree.Element, s *S) {
	if el := st.child(parent, n.name); el != nil {
		v := new(T)
		parseElement(st, el, n.name, n.content, v)
		*n.get(s) = v
	}
}

// listNode is a repeated element of complex content (minOccurs min, maxOccurs max).
type listNode[S, T any] struct {
	name     string
	min, max int
	get      func(*S) *[]T
	content  []xmlNode[T]
}

func (n listNode[S, T]) build(st *xmlState, parent *etree.Element, s *S) {
	items := *n.get(s)
	if !n.checkCount(st, len(items)) {
		return
	}
	for i := range items {
		buildElement(st, parent.CreateElement(n.name), n.indexed(i), n.content, &items[i])
	}
}

func (n listNode[S, T]) parse(st *xmlState, parent *etree.Element, s *S) {
	els := cfeChildren(parent, n.name)
	if !n.checkCount(st, len(els)) || len(els) == 0 {
		return
	}
	items := make([]T, len(els))
	for i, el := range els {
		parseElement(st, el, n.indexed(i), n.content, &items[i])
	}
	*n.get(s) = items
}

func (n listNode[S, T]) checkCount(st *xmlState, count int) bool {
	switch {
	case count < n.min:
		st.fail(n.name, xmlMsgRequired)
	case count > n.max:
		st.fail(n.name, fmt.Sprintf("admite como máximo %d elementos", n.max))
	default:
		return true
	}
	return false
}

// indexed names the i-th element XPath style, counting from 1.
func (n listNode[S, T]) indexed(i int) string { return fmt.Sprintf("%s[%d]", n.name, i+1) }

// wrapperNode is an element that only groups others (Encabezado, Detalle,
// SubTotInfo...). It is written only when its content writes something; when
// reading, a missing wrapper reads as an empty one, so that the required
// elements inside it are reported by name.
type wrapperNode[S any] struct {
	name    string
	content []xmlNode[S]
}

func (n wrapperNode[S]) build(st *xmlState, parent *etree.Element, s *S) {
	el := etree.NewElement(n.name)
	buildElement(st, el, n.name, n.content, s)
	if len(el.Child) > 0 {
		parent.AddChild(el)
	}
}

func (n wrapperNode[S]) parse(st *xmlState, parent *etree.Element, s *S) {
	el := st.child(parent, n.name)
	if el == nil {
		el = etree.NewElement(n.name)
	}
	parseElement(st, el, n.name, n.content, s)
}

// choiceNode is an optional xs:choice between elements of simple content
// (DocRecep | DocRecepExt): at most one of them may be present.
type choiceNode[S any] []leafNode[S]

func (n choiceNode[S]) build(st *xmlState, parent *etree.Element, s *S) {
	before := len(parent.Child)
	for _, leaf := range n {
		leaf.build(st, parent, s)
	}
	if len(parent.Child)-before > 1 {
		n.fail(st)
	}
}

func (n choiceNode[S]) parse(st *xmlState, parent *etree.Element, s *S) {
	present := 0
	for _, leaf := range n {
		if len(cfeChildren(parent, leaf.name)) > 0 {
			present++
		}
		leaf.parse(st, parent, s)
	}
	if present > 1 {
		n.fail(st)
	}
}

func (n choiceNode[S]) fail(st *xmlState) {
	names := make([]string, len(n))
	for i, leaf := range n {
		names[i] = leaf.name
	}
	st.fail(strings.Join(names, "|"), "son excluyentes: solo puede haber uno")
}

// xmlTextContent is the text of the current element itself, for repeated
// elements of simple content such as Telefono.
type xmlTextContent struct{}

func (xmlTextContent) build(st *xmlState, parent *etree.Element, s *string) {
	text, ok, err := xmlText{s}.format()
	switch {
	case err != nil:
		st.fail("", err.Error())
	case !ok:
		st.fail("", xmlMsgRequired)
	default:
		parent.SetText(text)
	}
}

func (xmlTextContent) parse(st *xmlState, parent *etree.Element, s *string) {
	if *s = parent.Text(); *s == "" {
		st.fail("", xmlMsgRequired)
	}
}

func buildElement[T any](st *xmlState, el *etree.Element, name string, content []xmlNode[T], v *T) {
	st.enter(name)
	for _, n := range content {
		n.build(st, el, v)
	}
	st.leave()
}

func parseElement[T any](st *xmlState, el *etree.Element, name string, content []xmlNode[T], v *T) {
	st.enter(name)
	for _, n := range content {
		n.parse(st, el, v)
	}
	st.leave()
}

// xmlValue converts one model field to and from the text of one element.
type xmlValue interface {
	// format returns the element's text. ok is false when the field holds
	// the model's "absent" value (nil, 0, "" or the zero date); err says
	// which rule of the XSD the value breaks.
	format() (text string, ok bool, err error)
	// parse sets the field from the element's text.
	parse(text string) error
}

// xmlText is an xs:string field; "" means absent. Its text is kept as is.
type xmlText struct{ p *string }

func (v xmlText) format() (string, bool, error) {
	if *v.p == "" {
		return "", false, nil
	}
	if !validXMLText(*v.p) {
		return "", false, errors.New(xmlMsgBadChars)
	}
	return *v.p, true, nil
}

func (v xmlText) parse(s string) error { *v.p = s; return nil }

// validXMLText reports whether s is UTF-8 made only of characters XML 1.0 allows.
func validXMLText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

// xmlDigits is a string field the XSD types as a non-negative xs:integer
// (CAE_ID, CP): digits only; surrounding white space is dropped when reading.
type xmlDigits struct{ p *string }

func (v xmlDigits) format() (string, bool, error) {
	if *v.p == "" {
		return "", false, nil
	}
	if strings.ContainsFunc(*v.p, func(r rune) bool { return r < '0' || r > '9' }) {
		return "", false, errors.New(xmlMsgDigits)
	}
	return *v.p, true, nil
}

func (v xmlDigits) parse(s string) error {
	*v.p = strings.TrimSpace(s)
	_, _, err := v.format()
	return err
}

// xmlInteger is an integer field (indicator, code or number); 0 means absent.
type xmlInteger[T ~int | ~int64] struct{ p *T }

func (v xmlInteger[T]) format() (string, bool, error) {
	if *v.p == 0 {
		return "", false, nil
	}
	return strconv.FormatInt(int64(*v.p), 10), true, nil
}

func (v xmlInteger[T]) parse(s string) error {
	n, err := parseXMLInteger[T](s)
	*v.p = n
	return err
}

// xmlCount is an integer field whose every value, 0 included, is written
// (CdgDGISucur, CantLinDet).
type xmlCount struct{ p *int }

func (v xmlCount) format() (string, bool, error) { return strconv.Itoa(*v.p), true, nil }

func (v xmlCount) parse(s string) error {
	n, err := parseXMLInteger[int](s)
	*v.p = n
	return err
}

func parseXMLInteger[T ~int | ~int64](s string) (T, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || int64(T(n)) != n {
		return 0, errors.New(xmlMsgInteger)
	}
	return T(n), nil
}

// xsdDecimal is the lexical and size rule of one xs:decimal type of
// DGITypes.xsd: at most frac digits after the point and total digits in all.
type xsdDecimal struct{ frac, total int32 }

var (
	xsdMonto      = xsdDecimal{frac: 2, total: 17} // MontoType, Monto_admite_negType
	xsdPrecio     = xsdDecimal{frac: 6, total: 17} // PrecioUnitarioType
	xsdCantidad   = xsdDecimal{frac: 3, total: 17} // Cant_admite_negType
	xsdPct        = xsdDecimal{frac: 3, total: 6}  // PctType
	xsdTasaIVA    = xsdDecimal{frac: 3, total: 6}  // TasaIVAType (10, 22)
	xsdTipoCambio = xsdDecimal{frac: 3, total: 7}  // TipCambioType
)

// xsdDecimalLexical is the lexical space of xs:decimal (no exponent).
var xsdDecimalLexical = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// format writes d in its shortest exact form, as DGI's samples do: no
// exponent, no thousands separator, no trailing zeros after the point
// ("420", "137704.92", "8.5").
func (f xsdDecimal) format(d decimal.Decimal) (string, error) {
	if err := f.check(d); err != nil {
		return "", err
	}
	return d.String(), nil
}

func (f xsdDecimal) parse(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	// The length bound keeps hostile input from building huge numbers; no
	// value that fits the XSD is longer once leading zeros are counted fairly.
	if len(s) > 64 || !xsdDecimalLexical.MatchString(s) {
		return decimal.Decimal{}, errors.New(xmlMsgDecimal)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, errors.New(xmlMsgDecimal)
	}
	return d, f.check(d)
}

func (f xsdDecimal) check(d decimal.Decimal) error {
	if !d.Equal(d.Truncate(f.frac)) {
		return fmt.Errorf("admite como máximo %d decimales", f.frac)
	}
	// String has no trailing zeros after the point; leading zeros do not count.
	digits := strings.TrimLeft(strings.Replace(d.Abs().String(), ".", "", 1), "0")
	if len(digits) > int(f.total) {
		return fmt.Errorf("admite como máximo %d dígitos", f.total)
	}
	return nil
}

// xmlDecimal is a required decimal field.
type xmlDecimal struct {
	p *decimal.Decimal
	f xsdDecimal
}

func (v xmlDecimal) format() (string, bool, error) {
	s, err := v.f.format(*v.p)
	return s, err == nil, err
}

func (v xmlDecimal) parse(s string) (err error) {
	*v.p, err = v.f.parse(s)
	return err
}

// xmlOptDecimal is an optional decimal field; nil means absent.
type xmlOptDecimal struct {
	p **decimal.Decimal
	f xsdDecimal
}

func (v xmlOptDecimal) format() (string, bool, error) {
	if *v.p == nil {
		return "", false, nil
	}
	s, err := v.f.format(**v.p)
	return s, err == nil, err
}

func (v xmlOptDecimal) parse(s string) error {
	d, err := v.f.parse(s)
	*v.p = &d
	return err
}

// xmlDate is an xs:date field (YYYY-MM-DD); the zero Date means absent.
type xmlDate struct{ p *Date }

func (v xmlDate) format() (string, bool, error) {
	if v.p.IsZero() {
		return "", false, nil
	}
	return v.p.String(), true, nil
}

func (v xmlDate) parse(s string) (err error) {
	*v.p, err = ParseDate(strings.TrimSpace(s))
	return err
}

// xmlOptDate is an optional xs:date field; nil means absent.
type xmlOptDate struct{ p **Date }

func (v xmlOptDate) format() (string, bool, error) {
	if *v.p == nil {
		return "", false, nil
	}
	return xmlDate{*v.p}.format()
}

func (v xmlOptDate) parse(s string) error {
	d := new(Date)
	*v.p = d
	return xmlDate{d}.parse(s)
}

// tmstFirmaLayout is TmstFirma's form: local time of Montevideo with its offset.
const tmstFirmaLayout = "2006-01-02T15:04:05-07:00"

// xmlTimestamp is an xs:dateTime field written to the second in Montevideo's
// zone (TmstFirma); the zero time means absent. Read times are moved to
// Montevideo too, so a model always holds them there.
type xmlTimestamp struct{ p *time.Time }

func (v xmlTimestamp) format() (string, bool, error) {
	if v.p.IsZero() {
		return "", false, nil
	}
	return v.p.In(Montevideo).Format(tmstFirmaLayout), true, nil
}

func (v xmlTimestamp) parse(s string) error {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return errors.New(xmlMsgTimestamp)
	}
	*v.p = t.In(Montevideo)
	return nil
}
