// Package verifier is the verification use case behind "cfe-agent verify":
// it checks signed documents of any issuer — CFEs, DGI's CAE files, daily
// reports and envelopes of CFEs (to DGI or to a receiver, each CFE checked
// with the certificate of the envelope's carátula) — and says, per file, what
// it found: the XML signature and its digest, whether the certificate that
// signed is the document's RUC's (DGI's for a CAE file) and was valid when
// the document says it was signed, whether its chain reaches an accredited
// CA the binary carries (EmbeddedTrust) or a certificate the technician
// pinned, and DGI's XSD, with the validator the binary carries and, when
// xmllint is installed, xmllint as a second opinion.
//
// It is independent of the agent: it reads files, not a profile nor a store,
// so it is its own package over the domain (cfe, cfe/xsdvalid), the signer and
// the embedded assets, and the command line and the application package
// (doctor's chain check, profile add's trust) call it. Results are
// structured (Result); their Spanish report lines are the technician's.
package verifier
