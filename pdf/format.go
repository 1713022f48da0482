package pdf

import (
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/shopspring/decimal"
)

// Numbers print the Uruguayan way: "." groups thousands and "," separates the
// decimals (1.234,56). Amounts always carry two decimals; quantities, unit
// prices and rates drop the decimals they do not need.

// money formats an amount with two decimals: 1234.5 → "1.234,50".
func money(d decimal.Decimal) string { return uruguayan(d.StringFixed(2)) }

// moneyIn formats an amount preceded by its currency code: "UYU 1.234,50".
func moneyIn(currency string, d decimal.Decimal) string {
	if currency == "" {
		return money(d)
	}
	return currency + " " + money(d)
}

// quantity formats a quantity with up to three decimals: 10 → "10", 1.5 → "1,5".
func quantity(d decimal.Decimal) string { return uruguayan(trimZeros(d.StringFixed(3), 0)) }

// price formats a unit price with two to six decimals: 1000 → "1.000,00",
// 12.345 → "12,345".
func price(d decimal.Decimal) string { return uruguayan(trimZeros(d.StringFixed(6), 2)) }

// rate formats a percentage without needless decimals: 22 → "22 %", 10.5 → "10,5 %".
func rate(d decimal.Decimal) string { return uruguayan(trimZeros(d.StringFixed(3), 0)) + " %" }

// date formats a civil date as dd/mm/yyyy.
func date(d cfe.Date) string { return d.Time(cfe.Montevideo).Format("02/01/2006") }

// trimZeros drops trailing fractional zeros of a fixed-point string, keeping
// at least keep decimals (and the point only when a decimal is left).
func trimZeros(s string, keep int) string {
	point := strings.IndexByte(s, '.')
	if point < 0 {
		return s
	}
	end := len(s)
	for end > point+1+keep && s[end-1] == '0' {
		end--
	}
	if end == point+1 {
		end = point
	}
	return s[:end]
}

// uruguayan rewrites a plain decimal string ("-1234.5") with Uruguayan
// separators ("-1.234,5").
func uruguayan(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.Grow(len(s) + len(s)/3 + 1)
	b.WriteString(sign)
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteByte(',')
		b.WriteString(frac)
	}
	return b.String()
}
