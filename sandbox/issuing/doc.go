// Package issuing is the emulator's issuing core and its routes (interface
// §4.3, §4.4, §4.5): each company signs with a generated test certificate
// and numbers from generated CAE ranges in a store of its own (issuers.go),
// composing the issuer, signer and store packages as the agent does.
//
//   - Receipts: emitir, firmarXml, anular, recibirFirmado (CFEs a local agent
//     signed), getByIdCfeEmitido and reaplicarReferencia; every CFE they
//     sign or receive is recorded under a hosted id (data.CFERecord).
//   - Issued: the issued CFEs as the service shows them: cfeemitido/{id},
//     buscar (whose filter, Filter and CFEFilter, the other rooms share) and
//     marcar-aceptado; Visible and Select are what other rooms read.
//   - Printer: printed representations: cfeemitido/pdf,
//     representacionImpresa and the previews; Render is what other rooms
//     attach or zip.
//   - Points: puntoemision/editar.
//
// Every check that can refuse a request runs before a number is taken.
// Choices the interface leaves open are named in policy.go.
package issuing
