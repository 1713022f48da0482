// Package dgi is the emulator's room for DGI's side of the service: what the
// provider writes for DGI in DGI's own formats, and, from the DGI issues on,
// what it exchanges with DGI.
//
// Today it holds DGI's envelopes of issued CFEs (Formato del Sobre v05):
// generarSobreAutoridad (EnvioCFE, to DGI) and generarSobreReceptor
// (EnvioCFE_entreEmpresas, to an electronic receiver), each company's
// envelope numbering (Idemisor) included. The envelope is built and checked
// by cfe and signer; this room selects the CFEs, refuses what DGI would, and
// numbers the envelopes.
//
// Room left for issue 30 (DGI's web services), so that it needs no new cut:
//
//   - the provider's sending: a Provider here that packs what the sandbox
//     holds (agents' deliveries, its own emitir and anular) into envelopes,
//     numbered by the same counter as the generated ones (envelopes.go), sends
//     them with the project's DGI client, and keeps each CFE's DGI state; the
//     composition root wires it beside Envelopes, and the issuing room shows
//     the state it keeps through Issued (cfeemitido/{id}, buscar);
//   - DGI's own services (`cfe-sandbox dgi`, the emulator of DGI's reception
//     and query services): package sandbox/dgi/emulator, with its own data
//     directory and certificate, sharing no records with the provider, and
//     a subcommand of cmd/cfe-sandbox (docs/dgi-emulator.md). The provider
//     sends to it with the project's DGI client (package dgi), pinning the
//     emulator's certificate.
//
// It reads the issued CFEs through a narrow interface (CFEs) that the
// composition root fills with issuing.Issued.
package dgi
