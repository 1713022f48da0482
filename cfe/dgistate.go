package cfe

import (
	"time"

	"github.com/shopspring/decimal"
)

// The DGI state of a CFE in direct mode (the agent sends to DGI itself;
// dgi-lifecycle.md §1, §3). The store keeps it durably (store/dgi.go); the
// sender (dgisend) moves it.
const (
	// DGIPending: signed, not yet in an envelope DGI acknowledged (also a
	// CFE put back after DGI refused its envelope, not as S08).
	DGIPending = "pendiente"
	// DGIInEnvelope: in an envelope recorded before it was sent, whose
	// answer has not come yet.
	DGIInEnvelope = "en_sobre"
	// DGISent: DGI received its envelope (ACKSobre AS); its verdict comes
	// with ACKCFE after Fechahora.
	DGISent = "enviado"
	// DGIAccepted: AE. DGIRejected: BE, its number annulled. DGIObserved:
	// CE (a contingency receipt DGI observed).
	DGIAccepted = "aceptado"
	DGIRejected = "rechazado"
	DGIObserved = "observado"
	// DGIUnknown: its envelope was sent and no trustworthy answer came back
	// (a timeout, a dropped connection): DGI must be asked before anything
	// is sent again.
	DGIUnknown = "desconocido"
)

// DGIReason is one of DGI's codes with its text (Motivo: Codigo, Glosa,
// Detalle).
type DGIReason struct {
	Codigo  string
	Glosa   string
	Detalle string
}

// DGIItem is a committed CFE the sender may put in an envelope.
type DGIItem struct {
	Seq         uint64 // its commit sequence: the order it is sent in
	UUID        string
	Type        Type
	Serie       string
	Nro         int64
	TmstFirma   time.Time
	CommittedAt time.Time
	Total       decimal.Decimal // the QR amount (cfe.Issued.Total)
	XML         []byte          // the signed CFE, byte-exact
}

// DGICFE is the DGI state of one CFE.
type DGICFE struct {
	Seq         uint64
	UUID        string
	Type        Type
	Serie       string
	Nro         int64
	TmstFirma   time.Time
	CommittedAt time.Time
	Total       decimal.Decimal
	State       string // one of the DGI* states
	Envelope    int64  // the envelope (its Idemisor) that carried it last
	Reasons     []DGIReason
	UpdatedAt   time.Time
}

// The states of an envelope in direct mode.
const (
	// EnvelopePrepared: recorded with its CFEs before it is sent; after a
	// restart it is asked about before it is sent (it may have left).
	EnvelopePrepared = "preparado"
	// EnvelopeUnknown: sent, outcome unknown: ask DGI before sending again.
	EnvelopeUnknown = "desconocido"
	// EnvelopeReceived: AS, with IDReceptor, Token and Fechahora; its CFEs'
	// verdicts are asked for from Fechahora on.
	EnvelopeReceived = "recibido"
	// EnvelopeRefused: BS for another reason than S08: DGI holds none of
	// its CFEs, which went back to pending.
	EnvelopeRefused = "rechazado"
	// EnvelopeDone: every CFE has DGI's verdict.
	EnvelopeDone = "resuelto"
)

// DGIEnvelope is one envelope sent (or to be sent) to DGI.
type DGIEnvelope struct {
	ID         int64     // Idemisor: the agent's number of the envelope
	Seqs       []uint64  // its CFEs' commit sequences, in order
	Fecha      time.Time // the Caratula's Fecha: the envelope is rebuilt byte for byte with it
	State      string    // one of the Envelope* states above
	IDReceptor int64     // DGI's number of the envelope (ACKSobre)
	Token      string
	Fechahora  time.Time // ask for the verdicts from then on
	Reasons    []DGIReason
	Attempts   int       // sendings and questions
	LastError  string    // the last failure, Spanish, no secrets
	SentAt     time.Time // the last sending
	UpdatedAt  time.Time
}

// DGIVerdict is DGI's verdict on one CFE of an envelope.
type DGIVerdict struct {
	Seq     uint64
	State   string // DGIAccepted, DGIRejected or DGIObserved
	Reasons []DGIReason
}

// DGICounts is the /state block "dgi" (counts of CFEs by DGI state).
type DGICounts struct {
	Enviados      int // DGI received their envelope (AS): the verdicts below, and those still awaited
	Aceptados     int
	Rechazados    int
	Observados    int
	Pendientes    int       // not yet received by DGI (not sent, or in an envelope not answered)
	Desconocidos  int       // sent, outcome unknown
	OldestPending time.Time // commit time of the oldest pending or unknown CFE; zero when none
}

// DGIRejection is a CFE DGI rejected (BE): its number is annulled (kept for
// the daily report, dgi-lifecycle.md §3-4) and a new CFE must be issued.
type DGIRejection struct {
	UUID      string
	Type      Type
	Serie     string
	Nro       int64
	TmstFirma time.Time
	Reasons   []DGIReason
	At        time.Time
}

// UrgentForDGI reports whether DGI must hold a CFE of type t before the goods
// leave or the printed copy is handed over (SOBRE §1): e-Factura and its
// notes, e-Remito, e-Resguardo and their export and contingency forms. An
// e-Ticket is urgent only above the cap: the caller decides that from its
// amount (aboveCap).
func UrgentForDGI(t Type, aboveCap bool) bool {
	info, ok := t.Info()
	if !ok {
		return false
	}
	switch info.Element {
	case ElemTicket:
		return aboveCap
	case ElemBoleta:
		return false
	}
	return true
}

// DGIProviderState is a CFE's state at DGI as the hosted service (the
// provider, which sends to DGI for the agent) reports it: one of the DGI*
// states above, and DGI's codes for a BE or CE.
type DGIProviderState struct {
	Seq     uint64 // the CFE's commit sequence in the store
	State   string
	Reasons []DGIReason
}

// DGIFinal reports whether state is one of DGI's verdicts (AE, BE, CE).
func DGIFinal(state string) bool {
	return state == DGIAccepted || state == DGIRejected || state == DGIObserved
}
