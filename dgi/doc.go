// Package dgi is the client of DGI's web services for electronic receipts:
// the reception service (ws_efactura: EFACRECEPCIONSOBRE,
// EFACCONSULTARESTADOENVIO, EFACRECEPCIONREPORTE) and the query service
// (ws_consultas: EFACCONSULTARESTADOCFE, EFACCONSULTARENVIOSSOBRE,
// EFACCONSULTARENVIOSREPORTE), over SOAP 1.1, document/literal, namespace
// http://dgi.gub.uy, signed with WS-Security exactly as DGI's example
// (wsse.go).
//
// It owns the wire format of both sides: the requests the client sends and
// the emulator (sandbox/dgi/emulator) reads, and the answers the emulator
// writes and the client reads. Every answer is checked before it is read:
// its WS-Security signature and its ACK document's own signature must be
// DGI's (the certificate pinned in Config, by default the one shipped for
// the environment, certs/SOURCE.md), and the ACK must be valid against DGI's
// XSD (ACKSobre, ACKCFE_DGI, ACKRepDiario). ack.go reads the ACKs into
// typed results, codes.go holds DGI's reasons (S, E, C, R codes with their
// Glosa) and service exceptions (ExcepcionesServicios), query.go the query
// documents.
//
// Errors are *cfe.Error with a Spanish message. A sending call whose answer
// did not come back trustworthy (a timeout, a dropped connection, an answer
// that does not verify) carries ErrOutcomeUnknown: DGI may hold the
// envelope, and the caller must ask (CFEState, Envelopes) before sending it
// again; ErrNotSent says nothing reached DGI.
//
// It is an adapter: it imports cfe, signer (the company's credentials and
// DGI's signature profile for the ACKs), cfe/xsdvalid and assets (DGI's
// schemas), never the store or the local module.
package dgi
