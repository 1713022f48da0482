package cfe

// SaleSign is how a CFE of type t counts in the issuer's sales: +1 for a sale
// (e-Ticket, e-Factura, e-Factura de Exportación, their forms "venta por
// cuenta ajena" and their debit notes, which raise what the buyer owes), -1
// for a credit note of a sale (a return or a discount), and 0 for what is
// not a sale of the issuer:
//
//   - e-Remito (181) and e-Remito de Exportación (124) move goods and e-Resguardo
//     (182) documents retentions: they bill nothing;
//   - e-Boleta de entrada (151) and its notes (152, 153) document a purchase:
//     "Si tipo de CFE: 151, 152 y 153 (e-boleta de entrada, N/C, N/D):
//     corresponde al RUC del que emite el CFE, que es el comprador de los
//     bienes" (Formato de los CFE v24, A-C40, p. 26), and its printed form
//     names the other party "RUC VENDEDOR" under "operaciones de compra
//     documentadas mediante e-Boleta de entrada" (same text, "Identificación
//     del receptor", p. 77). Its credit and debit notes correct that purchase,
//     so they are no sale either;
//   - a code DGI does not define.
//
// A contingency type (2xx, the paper form of the 1xx type 100 below it, table
// A) counts as its electronic type. An annulment needs no rule of its own: it
// is a note (or a correction) of the type it annuls, so an e-Ticket and the
// credit note that annuls it net to zero.
func SaleSign(t Type) int {
	info, ok := t.Info()
	if !ok {
		return 0
	}
	switch info.Element {
	case ElemTicket, ElemFactura, ElemFacturaExp:
	default: // ElemRemito, ElemRemitoExp, ElemResguardo, ElemBoleta
		return 0
	}
	if info.Kind == KindCreditNote {
		return -1
	}
	return 1
}
