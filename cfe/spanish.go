package cfe

import (
	"fmt"
	"strings"
	"time"
)

// Spanish wording shared by every user-facing text (the module's answers,
// the tray, the status page, doctor): a participle that agrees with the
// document's gender, a count that agrees in number, and one form of "hace …"
// for ages.

// Feminine reports whether the type's name is feminine in Spanish ("la
// e-Factura", "la Nota de Crédito de e-Ticket", "la e-Boleta"), so that
// what is said of it agrees: "e-Factura A-1 firmada", "e-Ticket A-1
// firmado". An unknown type ("tipo N") is masculine.
func (t Type) Feminine() bool {
	name := t.Name()
	return strings.HasPrefix(name, "Nota de ") || strings.HasPrefix(name, "e-Factura") || strings.HasPrefix(name, "e-Boleta")
}

// Agree returns the participle or adjective masc (ending in "o") in the
// gender of t's name: Agree(EFactura, "firmado") is "firmada".
func (t Type) Agree(masc string) string {
	if t.Feminine() && strings.HasSuffix(masc, "o") {
		return strings.TrimSuffix(masc, "o") + "a"
	}
	return masc
}

// Count writes n with the noun phrase in its number: Count(1, "comprobante
// pendiente", "comprobantes pendientes") is "1 comprobante pendiente", 0 and
// 2 take the plural.
func Count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Hace writes how long ago something was, the one form of the tray, the
// status page and doctor: "hace menos de 1 min", "hace 5 min", "hace 2 h 5
// min", and from two days "hace 3 días". A negative age (a clock set back)
// reads as just now.
func Hace(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "hace menos de 1 min"
	case d < time.Hour:
		return fmt.Sprintf("hace %d min", int(d/time.Minute))
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("hace %d h", h)
		}
		return fmt.Sprintf("hace %d h %d min", h, m)
	}
	return fmt.Sprintf("hace %d días", int(d/(24*time.Hour)))
}
