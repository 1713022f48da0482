package cfe

// This file lends the facet engine of dgifacets.go to package cfe/xsdvalid, which
// validates whole documents against DGI's schema set with the same simple-type
// checks that guard a CFE before numbering: one facet engine, not two.

// XSDType is a simple type of XML Schema with the facets of its whole
// derivation chain, as dgifacets_gen.go writes DGI's. Length, MinLength,
// MaxLength and TotalDigits are absent when 0; FractionDigits is absent when
// -1 (it only applies to XSDDecimal).
type XSDType = xsdType

// XSDBase is the built-in type an XSDType derives from.
type XSDBase = xsdBase

// Built-in bases.
const (
	XSDString       = xsdBaseString
	XSDInteger      = xsdBaseInteger
	XSDDecimal      = xsdBaseDecimal
	XSDDate         = xsdBaseDate
	XSDDateTime     = xsdBaseDateTime
	XSDBase64Binary = xsdBaseBase64Binary
	XSDAnyURI       = xsdBaseAnyURI
	XSDID           = xsdBaseID
)

// XSDWhiteSpace is the whiteSpace facet.
type XSDWhiteSpace = xsdWhiteSpace

// WhiteSpace facet values.
const (
	XSDPreserve = xsdWSPreserve
	XSDReplace  = xsdWSReplace
	XSDCollapse = xsdWSCollapse
)

// XSDFacets is an XSDType ready to check values.
type XSDFacets struct{ ft *facetType }

// CompileXSDType prepares t for checking values, and fails when one of its
// enumeration values, patterns or bounds is not well formed.
func CompileXSDType(t XSDType) (*XSDFacets, error) {
	ft, err := newFacetType(&t)
	if err != nil {
		return nil, err
	}
	return &XSDFacets{ft: ft}, nil
}

// Type returns the type f checks.
func (f *XSDFacets) Type() XSDType { return *f.ft.xsdType }

// Check returns why text breaks the type, in Spanish for the user, or "".
func (f *XSDFacets) Check(text string) string { return f.ft.check(text) }

// Canonical returns the canonical form of text's value after whitespace
// normalization ("+07" and "7" are the same integer), and false when text is
// not of the base type. Two texts of the type are equal when their canonical
// forms are.
func (f *XSDFacets) Canonical(text string) (string, bool) {
	return f.ft.canonical(f.ft.normalize(text))
}
