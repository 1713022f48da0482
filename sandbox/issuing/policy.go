package issuing

import "time"

// Choices the interface leaves open ("not shown") about issuing. Each is
// described in docs/sandbox.md; change them here and only here.

// hostedSerie is the serie of the CAE ranges the sandbox signs with. It is
// not "A", the serie of the ranges local agents generate for testing, so the
// numbers of the CFEs they deliver never collide with the sandbox's own.
const hostedSerie = "H"

// maxUUIDLen bounds a client's uuid.
const maxUUIDLen = 64

// The uuids of the CFEs the sandbox issues on its own (anular's
// counter-receipts, reaplicarReferencia's collections) are derived from the
// original's id, so that a retry finds them. A client's uuid may not take
// these forms, or it could stand in for one of them.
const (
	annulUUID         = "anulacion-"
	reapplyUUIDPrefix = "reaplicacion-"
)

// Printed representations by id, previews and re-applied collections
// (printer.go, preview.go, reapply.go).
const (
	// previewTTL is how long a preview's token serves its PDF: long enough
	// to open it from a link in the same screen, short enough not to keep
	// drafts around.
	previewTTL = 10 * time.Minute
	// maxPreviews bounds the previews kept in memory (a PDF each, about
	// 40 kB): at most some 20 MB.
	maxPreviews = 512
	// maxCompanyPreviews bounds one company's share of them, so that one
	// company's previews never push out another's before they expire.
	maxCompanyPreviews = 32
	// previewTokenBytes are the random bytes of a preview's token.
	previewTokenBytes = 32
	// razonReaplicacion is RazonRef (optional, printed) of the references
	// of a re-applied collection.
	razonReaplicacion = "Reaplicación de cobranza"
	// maxReferences is DGI's bound on zone F lines (F-C1: 1 to 40).
	maxReferences = 40
)
