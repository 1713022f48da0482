package cfe

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// QRBaseURL is DGI's page for checking a CFE; the QR data is this URL followed
// by "?" and the comma-separated fields (Formato de los CFE v24, printed
// representation).
const QRBaseURL = "https://www.efactura.dgi.gub.uy/consultaQR/cfe"

// SecurityCode returns the security code printed under the QR: the first six
// characters of the signature's DigestValue.
func SecurityCode(digestValue string) string {
	if len(digestValue) <= 6 {
		return digestValue
	}
	return digestValue[:6]
}

// QRAmount returns the amount the QR carries: 0 for an e-Remito (181, 281),
// MntTotRetenido for an e-Resguardo (182, 282), MntTotal for an e-Remito de
// Exportación (124, 224) and MntPagar for every other type. An absent amount
// counts as 0.
func QRAmount(c *CFE) decimal.Decimal {
	valueOf := func(d *decimal.Decimal) decimal.Decimal {
		if d == nil {
			return decimal.Zero
		}
		return *d
	}
	info, _ := c.Type().Info()
	switch info.Element {
	case ElemRemito:
		return decimal.Zero
	case ElemResguardo:
		return valueOf(c.Totales.MntTotRetenido)
	case ElemRemitoExp:
		return valueOf(c.Totales.MntTotal)
	}
	return valueOf(c.Totales.MntPagar)
}

// qrHashEscaper percent-encodes the base64 characters that are not allowed
// as they are in the URL.
var qrHashEscaper = strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D")

// QRData returns the text of the QR code of a signed CFE:
//
//	https://www.efactura.dgi.gub.uy/consultaQR/cfe?RUC,TipoCFE,Serie,Nro,Monto,Fecha,Hash
//
// with Nro without leading zeros, Monto (QRAmount) with exactly two decimals
// and a dot, Fecha the date of TmstFirma in Montevideo as dd/mm/yyyy, and
// Hash the DigestValue with "+", "/" and "=" percent-encoded.
func QRData(c *CFE, digestValue string) string {
	return QRBaseURL + "?" + strings.Join([]string{
		c.Emisor.RUCEmisor,
		c.IdDoc.TipoCFE.String(),
		c.IdDoc.Serie,
		strconv.FormatInt(c.IdDoc.Nro, 10),
		QRAmount(c).StringFixed(2),
		c.TmstFirma.In(Montevideo).Format("02/01/2006"),
		qrHashEscaper.Replace(digestValue),
	}, ",")
}
