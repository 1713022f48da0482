package cfe

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

//go:generate go run ./internal/xsdgen/cmd/xsdgen -xsd ../assets/xsd -o dgifacets_gen.go

// This file checks a CFE against the facets of DGI's XSDs before a number is
// reserved. dgifacets_gen.go, generated from the embedded schemas
// (assets/xsd), gives the type of every element of simple content a CFE can
// carry: code lists (currencies, countries, indicators), patterns, lengths,
// digit limits and bounds. The check walks the content models BuildXML writes
// from, with placeholders for what numbering fills in later, and tests the
// text of every element it would write against its element's type, so that
// no element escapes it (TestCheckXSDFacets_seesWhatBuildXMLWrites).

// xsdBase is the built-in type a simple type derives from.
type xsdBase uint8

const (
	xsdBaseString xsdBase = iota + 1
	xsdBaseInteger
	xsdBaseDecimal
	xsdBaseDate
	xsdBaseDateTime
	// The bases below appear in the signature's schemas (xmldsig, xmlenc),
	// not in a CFE's own data; package cfe/xsdvalid validates them.
	xsdBaseBase64Binary
	xsdBaseAnyURI
	xsdBaseID // an NCName; its uniqueness is the document's, not the value's
)

// textual reports whether values of the base are text, whose length facets
// count characters.
func (b xsdBase) textual() bool {
	return b == xsdBaseString || b == xsdBaseAnyURI || b == xsdBaseID
}

// ordered reports whether the base has an order, so that bounds apply.
func (b xsdBase) ordered() bool {
	switch b {
	case xsdBaseInteger, xsdBaseDecimal, xsdBaseDate, xsdBaseDateTime:
		return true
	}
	return false
}

// xsdWhiteSpace is the whiteSpace facet: how the text is normalized before
// the other facets apply.
type xsdWhiteSpace uint8

const (
	xsdWSPreserve xsdWhiteSpace = iota + 1
	xsdWSReplace
	xsdWSCollapse
)

// xsdType is one simple type with the facets of its whole derivation chain.
// Length, MinLength, MaxLength and TotalDigits are absent when 0 (DGI's
// schemas never set them to 0); FractionDigits is written for every decimal
// type, -1 when absent.
type xsdType struct {
	Name                       string
	Base                       xsdBase
	WhiteSpace                 xsdWhiteSpace
	Enum                       []string   // allowed values; none: any
	Patterns                   [][]string // a value matches one pattern of every list
	Length, MinLength          int
	MaxLength                  int
	TotalDigits                int
	FractionDigits             int
	MinInclusive, MaxInclusive string // "": none
}

// facetType is an xsdType ready to check values.
type facetType struct {
	*xsdType
	enum     map[string]bool // canonical values
	patterns []*regexp.Regexp
	min, max string // canonical bounds of a number or date; "" when none
	minTime  time.Time
	maxTime  time.Time
}

// dgiFacets maps the path of an element below CFE (eTck/Encabezado/IdDoc/TipoCFE)
// to its type.
var dgiFacets = compileFacets()

func compileFacets() map[string]*facetType {
	types := make([]*facetType, len(dgiTypes))
	for i := range dgiTypes {
		types[i] = compileFacetType(&dgiTypes[i])
	}
	out := make(map[string]*facetType, len(dgiElements))
	for path, i := range dgiElements {
		out[path] = types[i]
	}
	return out
}

// compileFacetType prepares t; the generator has already checked that its
// patterns and bounds are well formed, so a failure here is a programming error.
func compileFacetType(t *xsdType) *facetType {
	ft, err := newFacetType(t)
	if err != nil {
		panic("cfe: " + err.Error())
	}
	return ft
}

// newFacetType prepares t, or says which of its facets is not well formed.
func newFacetType(t *xsdType) (*facetType, error) {
	ft := &facetType{xsdType: t}
	if len(t.Enum) > 0 {
		ft.enum = make(map[string]bool, len(t.Enum))
		for _, v := range t.Enum {
			c, ok := ft.canonical(ft.normalize(v))
			if !ok {
				return nil, fmt.Errorf("enumeration value %q of XSD type %s is not valid", v, t.Name)
			}
			ft.enum[c] = true
		}
	}
	for _, ps := range t.Patterns {
		re, err := regexp.Compile(`^(?:` + strings.Join(ps, "|") + `)$`)
		if err != nil {
			return nil, fmt.Errorf("pattern of XSD type %s: %w", t.Name, err)
		}
		ft.patterns = append(ft.patterns, re)
	}
	for _, b := range []struct {
		s    string
		c    *string
		tm   *time.Time
		name string
	}{{t.MinInclusive, &ft.min, &ft.minTime, "minInclusive"}, {t.MaxInclusive, &ft.max, &ft.maxTime, "maxInclusive"}} {
		if b.s == "" {
			continue
		}
		c, ok := ft.canonical(b.s)
		if ok && t.Base == xsdBaseDateTime {
			var zoned bool
			*b.tm, zoned, _ = parseDateTime(c)
			ok = zoned // a bound without a zone is not supported
		}
		if !ok || !t.Base.ordered() {
			return nil, fmt.Errorf("%s %q of XSD type %s is not valid", b.name, b.s, t.Name)
		}
		*b.c = c
	}
	return ft, nil
}

// normalize applies the whiteSpace facet.
func (ft *facetType) normalize(s string) string {
	if ft.WhiteSpace == xsdWSPreserve || !strings.ContainsAny(s, "\t\n\r ") {
		return s
	}
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	if ft.WhiteSpace == xsdWSCollapse {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// canonical returns the value space's canonical form of the normalized text
// s (numbers by value: "22.000" is "22", "+07" is "7"), and false when s is
// not in the base type's lexical space.
func (ft *facetType) canonical(s string) (string, bool) {
	switch ft.Base {
	case xsdBaseInteger:
		return canonicalNumber(s, false)
	case xsdBaseDecimal:
		return canonicalNumber(s, true)
	case xsdBaseDate:
		if len(s) < 10 || s[4] != '-' || s[7] != '-' || !validZone(s[10:]) {
			return "", false
		}
		if _, err := time.Parse(time.DateOnly, s[:10]); err != nil {
			return "", false
		}
	case xsdBaseDateTime:
		if _, _, ok := parseDateTime(s); !ok {
			return "", false
		}
	case xsdBaseBase64Binary:
		return canonicalBase64(s)
	case xsdBaseID:
		if !isNCName(s) {
			return "", false
		}
	}
	return s, true
}

// localDateTime is the layout of an xs:dateTime without a time zone.
const localDateTime = "2006-01-02T15:04:05"

// parseDateTime parses an xs:dateTime, with its zone (zoned) or without one
// (then read as UTC).
func parseDateTime(s string) (t time.Time, zoned, ok bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true, true
	}
	if t, err := time.Parse(localDateTime, s); err == nil {
		return t, false, true
	}
	return time.Time{}, false, false
}

// validZone reports whether z is an xs:date's optional time zone: "", "Z"
// or ±hh:mm up to 14:00.
func validZone(z string) bool {
	if z == "" || z == "Z" {
		return true
	}
	if len(z) != 6 || z[0] != '+' && z[0] != '-' || z[3] != ':' || !digitsOnly(z[1:3]) || !digitsOnly(z[4:]) {
		return false
	}
	h, m := int(z[1]-'0')*10+int(z[2]-'0'), int(z[4]-'0')*10+int(z[5]-'0')
	return m < 60 && (h < 14 || h == 14 && m == 0)
}

// canonicalBase64 returns an xs:base64Binary literal without its spaces, and
// false when it is not base64 (with its "=" padding).
func canonicalBase64(s string) (string, bool) {
	c := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	if _, err := base64.StdEncoding.Strict().DecodeString(c); err != nil {
		return "", false
	}
	return c, true
}

// isNCName reports whether s is an XML name without a colon.
func isNCName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || unicode.IsLetter(r)
		if i == 0 && !letter {
			return false
		}
		if !letter && !unicode.IsDigit(r) && r != '.' && r != '-' && !unicode.Is(unicode.Mn, r) &&
			!unicode.Is(unicode.Mc, r) && r != 0xB7 {
			return false
		}
	}
	return true
}

// canonicalNumber returns the canonical form of an xs:decimal (frac) or
// xs:integer literal: no "+", no leading zeros, no trailing zeros after the
// point, no point without decimals, "0" for zero. It does not allocate when s
// is canonical already, as the numbers the agent writes are.
func canonicalNumber(s string, frac bool) (string, bool) {
	neg := false
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	intPart, fracPart, hasPoint := strings.Cut(body, ".")
	if hasPoint && !frac || intPart == "" && fracPart == "" || !digitsOnly(intPart) || !digitsOnly(fracPart) {
		return "", false
	}
	intPart = strings.TrimLeft(intPart, "0")
	fracPart = strings.TrimRight(fracPart, "0")
	if intPart == "" && fracPart == "" {
		return "0", true
	}
	zeroAdded := intPart == "" // ".5" is "0.5"
	if zeroAdded {
		intPart = "0"
	}
	n := len(intPart)
	if fracPart != "" {
		n += 1 + len(fracPart)
	}
	if neg {
		n++
	}
	if n == len(s) && !zeroAdded && s[0] != '+' { // nothing dropped or added: s is canonical
		return s, true
	}
	c := intPart
	if fracPart != "" {
		c += "." + fracPart
	}
	if neg {
		c = "-" + c
	}
	return c, true
}

// digitsOnly reports whether s has no byte but 0-9 ("" has none).
func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareNumbers compares two canonical numbers by value: -1, 0 or 1.
func compareNumbers(a, b string) int {
	negA, negB := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	switch {
	case negA && !negB:
		return -1
	case !negA && negB:
		return 1
	case negA:
		return -compareMagnitudes(a[1:], b[1:])
	}
	return compareMagnitudes(a, b)
}

func compareMagnitudes(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	if len(ai) != len(bi) {
		if len(ai) < len(bi) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	for i := 0; i < max(len(af), len(bf)); i++ {
		da, db := byte('0'), byte('0')
		if i < len(af) {
			da = af[i]
		}
		if i < len(bf) {
			db = bf[i]
		}
		if da != db {
			if da < db {
				return -1
			}
			return 1
		}
	}
	return 0
}

// check returns why text breaks the type, or "".
func (ft *facetType) check(text string) string {
	s := ft.normalize(text)
	c, ok := ft.canonical(s)
	if !ok {
		switch ft.Base {
		case xsdBaseInteger:
			return xmlMsgInteger
		case xsdBaseDecimal:
			return xmlMsgDecimal
		case xsdBaseDate:
			return "debe ser una fecha AAAA-MM-DD"
		case xsdBaseDateTime:
			return xmlMsgTimestamp
		case xsdBaseBase64Binary:
			return "debe ser un valor en base64"
		default:
			return fmt.Sprintf("%q no es un identificador XML (letras, dígitos, '.', '-' o '_', sin ':', y no empieza con dígito)", s)
		}
	}
	if ft.Base.textual() {
		n := utf8.RuneCountInString(s)
		switch {
		case ft.Length > 0 && n != ft.Length:
			return fmt.Sprintf("debe tener exactamente %d caracteres (tiene %d)", ft.Length, n)
		case n < ft.MinLength:
			return fmt.Sprintf("como mínimo %d caracteres (tiene %d)", ft.MinLength, n)
		case ft.MaxLength > 0 && n > ft.MaxLength:
			return fmt.Sprintf("como máximo %d caracteres (tiene %d)", ft.MaxLength, n)
		}
	}
	if ft.enum != nil && !ft.enum[c] {
		if len(ft.Enum) <= 12 {
			return fmt.Sprintf("%q no es un valor que DGI admita: debe ser %s", s, orList(ft.Enum))
		}
		return fmt.Sprintf("%q no es un código de la lista de DGI (%s)", s, ft.Name)
	}
	for i, re := range ft.patterns {
		if !re.MatchString(s) {
			return fmt.Sprintf("%q no tiene el formato que DGI admite (%s)", s, strings.Join(ft.Patterns[i], " o "))
		}
	}
	switch ft.Base {
	case xsdBaseInteger, xsdBaseDecimal:
		intPart, fracPart, _ := strings.Cut(strings.TrimPrefix(c, "-"), ".")
		if ft.Base == xsdBaseDecimal && ft.FractionDigits >= 0 && len(fracPart) > ft.FractionDigits {
			return fmt.Sprintf("admite como máximo %d decimales", ft.FractionDigits)
		}
		if digits := len(strings.TrimLeft(intPart, "0")) + len(fracPart); ft.TotalDigits > 0 && digits > ft.TotalDigits {
			return fmt.Sprintf("admite como máximo %d dígitos", ft.TotalDigits)
		}
		switch {
		case ft.min != "" && compareNumbers(c, ft.min) < 0:
			return "debe ser como mínimo " + ft.min
		case ft.max != "" && compareNumbers(c, ft.max) > 0:
			return "debe ser como máximo " + ft.max
		}
	case xsdBaseDate:
		// A date's time zone does not move it across the bounds.
		switch {
		case ft.min != "" && c[:10] < ft.min[:10]:
			return "debe ser una fecha desde " + ft.min
		case ft.max != "" && c[:10] > ft.max[:10]:
			return "debe ser una fecha hasta " + ft.max
		}
	case xsdBaseDateTime:
		// Without a zone, the time is within bounds only if it is at any
		// zone (-14:00 to +14:00), as XML Schema orders such times.
		earliest, zoned, _ := parseDateTime(c)
		latest := earliest
		if !zoned {
			earliest, latest = earliest.Add(-14*time.Hour), earliest.Add(14*time.Hour)
		}
		switch {
		case !ft.minTime.IsZero() && earliest.Before(ft.minTime):
			return "debe ser desde " + ft.MinInclusive
		case !ft.maxTime.IsZero() && latest.After(ft.maxTime):
			return "debe ser hasta " + ft.MaxInclusive
		}
	}
	return ""
}

// orList writes "1, 2 o 3".
func orList(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " o " + vs[len(vs)-1]
}
