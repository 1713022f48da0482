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
// It also sends to DGI as the provider (issue 30):
//
//   - the provider's sending (provider.go): a Provider that sends what the
//     sandbox holds (agents' deliveries, its own emitir and anular) with the
//     agent's own sender (dgisend) over each company's records, in
//     envelopes numbered by the same counter as the generated ones
//     (envelopes.go), signed with the company's certificate through the
//     project's DGI client, and keeps each CFE's DGI state
//     (sandbox/data/dgi.go); the composition root wires it beside Envelopes,
//     and the issuing room shows the state through Issued (cfeemitido/{id},
//     buscar);
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
