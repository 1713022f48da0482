package cfe

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// The currency of an issued CFE (Formato de los CFE V24, zone A):
//
//   - A-C110 TpoMoneda is the currency of the document's amounts ("Todos los
//     campos de montos del documento estarán indicados en esta moneda"). It is
//     required (obligatoriedad 1) on every type but the e-Remito, where it
//     "no corresponde" (0: "el dato no debe ir en un determinado
//     comprobante"); an e-Remito's Totales are CantLinDet alone (CFEType.xsd)
//     and it bills nothing.
//   - A CFE that names no currency counts in Uruguayan pesos, UYU: the
//     currency whose amounts need no exchange rate (A-C111 TpoCambio:
//     "Obligatorio completar si A-C110 ≠ UYU").
//
// Whatever reads issued CFEs by currency (the agent's status page, the
// sandbox's charts and exports) takes it from Totales.Currency or
// ReadIssuedTotal, so that an e-Remito counts in the same currency
// everywhere.

// CurrencyUYU is the Uruguayan peso (ISO 4217): the currency of a CFE that
// names none.
const CurrencyUYU = "UYU"

// Currency returns the currency of the document's amounts: TpoMoneda, or UYU
// when the document names none (an e-Remito).
func (t Totales) Currency() string {
	if c := strings.TrimSpace(t.TpoMoneda); c != "" {
		return c
	}
	return CurrencyUYU
}

// IssuedTotal is what an issued CFE bills, as its Encabezado/Totales say.
type IssuedTotal struct {
	// Currency is Totales.Currency's: TpoMoneda, UYU when absent.
	Currency string
	// MntTotal is A-C124, the billed total; zero when the CFE has none (an
	// e-Remito, an e-Resguardo: its Totales carry MntTotRetenido instead).
	MntTotal decimal.Decimal
}

// ReadIssuedTotal reads the currency and MntTotal of a signed CFE's
// Encabezado/Totales. It reads the XML as a stream and stops at the end of
// Totales, which comes before the lines and the signature: reports over many
// stored CFEs read two fields without parsing each whole document. Elements
// are matched by local name, whatever their namespace prefix (DGI's samples
// use ns0:). Errors: EINVALID when the document has no Encabezado/Totales
// or its MntTotal is no number.
func ReadIssuedTotal(signed []byte) (IssuedTotal, error) {
	const op = "cfe.ReadIssuedTotal"
	var t Totales
	var total decimal.Decimal
	dec := xml.NewDecoder(bytes.NewReader(signed))
	var path []string
	var text []byte
	for {
		tok, err := dec.Token()
		if err != nil {
			return IssuedTotal{}, &Error{Code: EINVALID, Op: op, Message: "el CFE no tiene Encabezado/Totales legibles",
				Err: fmt.Errorf("Totales not found: %w", err)}
		}
		switch el := tok.(type) {
		case xml.StartElement:
			path = append(path, el.Name.Local)
			text = text[:0]
		case xml.CharData:
			text = append(text, el...)
		case xml.EndElement:
			n := len(path)
			if n >= 3 && path[n-3] == "Encabezado" && path[n-2] == "Totales" {
				switch path[n-1] {
				case "TpoMoneda":
					t.TpoMoneda = strings.TrimSpace(string(text))
				case "MntTotal":
					v := strings.TrimSpace(string(text))
					if total, err = decimal.NewFromString(v); err != nil {
						return IssuedTotal{}, &Error{Code: EINVALID, Op: op,
							Message: fmt.Sprintf("el MntTotal del CFE no es un número: %q", v), Err: err}
					}
				}
			}
			if n >= 2 && path[n-2] == "Encabezado" && path[n-1] == "Totales" {
				return IssuedTotal{Currency: t.Currency(), MntTotal: total}, nil
			}
			path = path[:n-1]
		}
	}
}
