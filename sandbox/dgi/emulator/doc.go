// Package emulator emulates DGI's web services for electronic receipts, the
// other side of package dgi: the reception service (EFACRECEPCIONSOBRE,
// EFACCONSULTARESTADOENVIO, EFACRECEPCIONREPORTE) at /ePrueba/ws_eprueba
// and the query service (EFACCONSULTARESTADOCFE, EFACCONSULTARENVIOSSOBRE,
// EFACCONSULTARENVIOSREPORTE) at /ePrueba/ws_consultasPrueba, as
// `cfe-sandbox dgi` serves them (docs/dgi-emulator.md).
//
// It behaves as DGI's texts say: a request without a valid WS-Security
// signature gets a SOAP fault; an envelope is checked against the envelope
// format (S01–S08, S08 for one already received, envelope.go) and answered
// ACKSobre with Token and Fechahora; each CFE of a received envelope is
// judged (E02 already received, E03/E09 the CAE, E04 the signature, E05 the
// XSD and DGI's rules, E07 the signature date against the CAE; C codes for a
// contingency receipt, which is observed (CE), never rejected: C03 its
// constancia or its form's date outside it, C04 the signature, C05 the XSD
// and the rules of the type it replaces, C06 a total above a million pesos,
// the emulator's stand-in for "excede montos habituales") and its verdict
// answered in ACKCFE once Fechahora has passed; a daily report gets AR or BR
// (R01–R06) and, once processed, DR, or ER when it does not agree with the
// CFEs received for its day (reportcheck.go says what is compared), and FR
// when a later SecEnvio of the day is received (ReportOutcome can decide
// instead). Every ACK is signed as DGI signs them and
// every answer carries WS-Security, with the emulator's own key and
// certificate (made on first use, marked test, written to
// DataDir/dgi-cert.pem for clients to pin).
//
// It knows the CAEs the sandbox generates (signer.SandboxRanges and
// signer.SandboxContingencyRanges: the agent's sandbox profile and the
// hosted sandbox), keeps its records in a
// bbolt file in its data directory (a restart keeps every answer), and has
// knobs on a separate admin endpoint (admin.go): delay answers, drop the
// connection after recording an envelope, be unreachable, reject chosen
// CFEs with chosen codes, move its clock; it counts the envelopes that
// carried each CFE.
//
// It is a room of the sandbox (sandbox/dgi's package comment), sharing no
// records with the hosted-service emulator; it imports the DGI client's
// wire format (dgi), cfe, signer and DGI's schemas.
package emulator
