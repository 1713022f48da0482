package cfe

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

//go:generate go run ./internal/xsdgen/cmd/xsdgen -xsd ../assets/xsd -o dgifacets_gen.go

// This file checks a CFE against the facets of DGI's XSDs before a number is
// reserved. dgifacets_gen.go, generated from the embedded schemas
// (assets/xsd), gives the type of every element of simple content a CFE can
// carry: code lists (currencies, countries, indicators), patterns, lengths,
// digit limits and bounds. The check builds the document exactly as BuildXML
// does, with placeholders for what numbering fills in later, and tests the
// text of every element it would write against its element's type, so that
// no element escapes it.

// xsdBase is the built-in type a simple type derives from.
type xsdBase uint8

const (
	xsdBaseString xsdBase = iota + 1
	xsdBaseInteger
	xsdBaseDecimal
	xsdBaseDate
	xsdBaseDateTime
)

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
	minInt   *int64
	maxInt   *int64
	minDec   *decimal.Decimal
	maxDec   *decimal.Decimal
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
	ft := &facetType{xsdType: t}
	if len(t.Enum) > 0 {
		ft.enum = make(map[string]bool, len(t.Enum))
		for _, v := range t.Enum {
			c, ok := ft.canonical(ft.normalize(v))
			if !ok {
				panic(fmt.Sprintf("cfe: enumeration value %q of XSD type %s is not valid", v, t.Name))
			}
			ft.enum[c] = true
		}
	}
	for _, ps := range t.Patterns {
		ft.patterns = append(ft.patterns, regexp.MustCompile(`^(?:`+strings.Join(ps, "|")+`)$`))
	}
	for _, b := range []struct {
		s    string
		i    **int64
		d    **decimal.Decimal
		tm   *time.Time
		name string
	}{{t.MinInclusive, &ft.minInt, &ft.minDec, &ft.minTime, "minInclusive"},
		{t.MaxInclusive, &ft.maxInt, &ft.maxDec, &ft.maxTime, "maxInclusive"}} {
		if b.s == "" {
			continue
		}
		var err error
		switch t.Base {
		case xsdBaseInteger:
			var n int64
			n, err = strconv.ParseInt(b.s, 10, 64)
			*b.i = &n
		case xsdBaseDecimal:
			var d decimal.Decimal
			d, err = decimal.NewFromString(b.s)
			*b.d = &d
		case xsdBaseDate:
			_, err = time.Parse(time.DateOnly, b.s)
		case xsdBaseDateTime:
			*b.tm, err = time.Parse(time.RFC3339, b.s)
		}
		if err != nil {
			panic(fmt.Sprintf("cfe: %s %q of XSD type %s: %v", b.name, b.s, t.Name, err))
		}
	}
	return ft
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

var (
	xsdIntegerLexical = regexp.MustCompile(`^[+-]?[0-9]+$`)
	xsdDateLexical    = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// canonical returns the value space's canonical form of the normalized text
// s (numbers by value: "22.000" is "22"), and false when s is not in the
// base type's lexical space.
func (ft *facetType) canonical(s string) (string, bool) {
	switch ft.Base {
	case xsdBaseInteger:
		if !xsdIntegerLexical.MatchString(s) {
			return "", false
		}
		neg := s[0] == '-'
		s = strings.TrimLeft(strings.TrimLeft(s, "+-"), "0")
		switch {
		case s == "":
			return "0", true
		case neg:
			return "-" + s, true
		}
		return s, true
	case xsdBaseDecimal:
		if len(s) > 64 || !xsdDecimalLexical.MatchString(s) {
			return "", false
		}
		d, err := decimal.NewFromString(s)
		if err != nil {
			return "", false
		}
		return d.String(), true
	case xsdBaseDate:
		if !xsdDateLexical.MatchString(s) {
			return "", false
		}
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "", false
		}
	case xsdBaseDateTime:
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "", false
		}
	}
	return s, true
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
		default:
			return xmlMsgTimestamp
		}
	}
	if ft.Base == xsdBaseString {
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
	case xsdBaseInteger:
		if ft.TotalDigits > 0 && len(strings.TrimPrefix(c, "-")) > ft.TotalDigits {
			return fmt.Sprintf("admite como máximo %d dígitos", ft.TotalDigits)
		}
		n, err := strconv.ParseInt(c, 10, 64)
		switch {
		case err != nil && (ft.minInt != nil || ft.maxInt != nil):
			return "está fuera del rango que DGI admite"
		case ft.minInt != nil && n < *ft.minInt:
			return fmt.Sprintf("debe ser como mínimo %d", *ft.minInt)
		case ft.maxInt != nil && n > *ft.maxInt:
			return fmt.Sprintf("debe ser como máximo %d", *ft.maxInt)
		}
	case xsdBaseDecimal:
		intPart, frac, _ := strings.Cut(strings.TrimPrefix(c, "-"), ".")
		if ft.FractionDigits >= 0 && len(frac) > ft.FractionDigits {
			return fmt.Sprintf("admite como máximo %d decimales", ft.FractionDigits)
		}
		if digits := len(strings.TrimLeft(intPart, "0")) + len(frac); ft.TotalDigits > 0 && digits > ft.TotalDigits {
			return fmt.Sprintf("admite como máximo %d dígitos", ft.TotalDigits)
		}
		if ft.minDec != nil || ft.maxDec != nil {
			d := decimal.RequireFromString(c)
			switch {
			case ft.minDec != nil && d.LessThan(*ft.minDec):
				return fmt.Sprintf("debe ser como mínimo %s", ft.minDec.String())
			case ft.maxDec != nil && d.GreaterThan(*ft.maxDec):
				return fmt.Sprintf("debe ser como máximo %s", ft.maxDec.String())
			}
		}
	case xsdBaseDate:
		switch {
		case ft.MinInclusive != "" && c < ft.MinInclusive:
			return fmt.Sprintf("debe ser una fecha desde %s", ft.MinInclusive)
		case ft.MaxInclusive != "" && c > ft.MaxInclusive:
			return fmt.Sprintf("debe ser una fecha hasta %s", ft.MaxInclusive)
		}
	case xsdBaseDateTime:
		tm, _ := time.Parse(time.RFC3339, c)
		switch {
		case !ft.minTime.IsZero() && tm.Before(ft.minTime):
			return fmt.Sprintf("debe ser desde %s", ft.MinInclusive)
		case !ft.maxTime.IsZero() && tm.After(ft.maxTime):
			return fmt.Sprintf("debe ser hasta %s", ft.MaxInclusive)
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
