// Package cfe is the domain of cfe-agent: Uruguay's electronic fiscal receipts
// (Comprobantes Fiscales Electrónicos) as DGI defines them.
//
// It owns the CFE type table, the document model, the request shape that
// point-of-sale software sends, totals computed with DGI's formulas, DGI's
// business rules, building and parsing DGI XML, the security code and QR data,
// the annulment rules, DGI's envelopes of signed CFEs (envelope.go), the error type shared by every adapter, and the
// service interfaces that adapters implement.
//
// It imports only the standard library, etree (XML) and the decimal type.
// Money is always decimal.Decimal, never float64.
package cfe
