package cfe

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

// CAERange is a numbering range DGI authorized for one CFE type and serie
// (a CAE, "Constancia de Autorización para Emisión").
type CAERange struct {
	ID           string // stable key in the store: "<tipo>-<serie>-<dnro>"
	RUC          string // RucE
	Type         Type   // TCFE
	Serie        string
	DNro         int64  // first number
	HNro         int64  // last number
	CAEID        string // NA, 11 digits
	Autorizado   Date   // FA
	Vencimiento  Date   // FVD: the range may not be used after this date
	CAEEspecial  int
	CausalCAEEsp int
	Source       string // "dgi" (imported, DGI-signed file), "manual" or "sandbox"
	SignedXML    []byte `json:",omitempty"` // DGI's file, byte-exact, when imported
}

// RangeID returns the canonical ID of a range of type t, serie s starting at dnro.
func RangeID(t Type, serie string, dnro int64) string {
	return t.String() + "-" + serie + "-" + itoa(dnro)
}

// Size returns the count of numbers in the range.
func (r CAERange) Size() int64 { return r.HNro - r.DNro + 1 }

// Expired reports whether the range can no longer be used on day d.
func (r CAERange) Expired(d Date) bool { return d.After(r.Vencimiento) }

// CAEData returns zone G for a CFE numbered from this range.
func (r CAERange) CAEData() CAEData {
	return CAEData{CAEID: r.CAEID, DNro: r.DNro, HNro: r.HNro, FecVenc: r.Vencimiento,
		CAEEspecial: r.CAEEspecial, CausalCAEEsp: r.CausalCAEEsp}
}

// Delivery states of a locally signed CFE toward the hosted service.
const (
	DeliveryPending  = "pendiente"
	DeliveryAccepted = "aceptado"
	DeliveryRejected = "rechazado"
	// DeliveryQuarantined is a CFE whose stored record cannot be read back
	// (a damaged disk or file): it is held out of delivery, its number stays
	// used, and it waits for a technician to recover it from a backup or
	// from the hosted service's copy (docs/hosted.md, "Quarantine").
	DeliveryQuarantined = "cuarentena"
)

// Issued is a signed CFE as the agent keeps it.
type Issued struct {
	UUID         string
	Type         Type
	Serie        string
	Nro          int64
	RangeID      string
	CAE          CAEData
	TmstFirma    time.Time
	XML          []byte // the signed CFE, byte-exact; never re-serialized
	Adenda       string
	CodSeguridad string
	DatosQR      string
	Total        decimal.Decimal // the QR amount (MntPagar, MntTotRetenido, ...)
	RequestHash  string          // hex SHA-256 of the canonical request, for idempotency
	Delivery     Delivery
	// Corrects is, for a keyed-in contingency receipt (2xx) sent again
	// corrected after DGI observed it (CE), the uuid of the observed one;
	// CorrectedBy, on the observed one, the uuid of its correction: a CFE
	// with CorrectedBy is superseded (not counted again in the daily report).
	Corrects    string
	CorrectedBy string
	// Search is what the store indexes the CFE by (SearchTextOf its
	// model), when whoever made it has the model; nil: the store reads it
	// from XML.
	Search *SearchText
}

// Delivery is the state of an Issued CFE toward the hosted service.
type Delivery struct {
	State       string // DeliveryPending, DeliveryAccepted, DeliveryRejected or DeliveryQuarantined
	HostedID    int64
	Reason      string
	Attempts    int
	LastAttempt time.Time
}

// Reservation is a number taken from a CAE range and not yet committed. It must
// be committed or released.
type Reservation struct {
	Type  Type
	Serie string
	Nro   int64
	Range CAERange
}

// RangeCheck says whether a CFE may be numbered from range r: nil when it
// may, else why not (as CheckCAE answers).
type RangeCheck func(r CAERange) error

// IssueStore is what the issuing use case needs from durable storage.
type IssueStore interface {
	// FindByUUID returns the CFE stored under uuid, or ENOTFOUND.
	FindByUUID(ctx context.Context, uuid string) (*Issued, error)
	// Reserve takes the next number of type t from a range usable on day today
	// (not expired, not used up). EUNAVAILABLE with Respuesta RespSinRangoCAE
	// when there is none. Numbers are handed out in order; a released number is
	// handed out again before any higher one is committed.
	Reserve(ctx context.Context, t Type, today Date) (*Reservation, error)
	// ReserveFor is Reserve among the ranges fits accepts (a nil fits accepts
	// every range), so that the rules tying a CFE to its CAE (CheckCAE) are
	// checked before a number is taken. A serie whose next range fits refuses is
	// not used (its numbers are never skipped). When usable ranges exist and
	// fits refuses all of them, it returns fits's error for the one Reserve
	// would have used.
	ReserveFor(ctx context.Context, t Type, today Date, fits RangeCheck) (*Reservation, error)
	// Commit stores the signed CFE, its number, its uuid record, an outbox entry
	// and an audit event in one durable (fsynced) transaction. It waits until
	// every lower number of the same (type, serie) is committed, so the
	// committed numbers always form a gap-free sequence. ECONFLICT when uuid is
	// already stored.
	Commit(ctx context.Context, r *Reservation, doc *Issued) error
	// Release gives back a reservation that will not be committed.
	Release(r *Reservation)
}

// KeyedCFE is a signed contingency receipt (2xx) keyed in from its paper
// form, to store with KeyedStore.CommitKeyed. Corrects is the uuid of the
// stored CFE of the same number DGI observed (CE) that this one corrects,
// "" for a first key-in.
type KeyedCFE struct {
	Doc      *Issued
	Corrects string
}

// KeyedStore is what keying in contingency receipts needs from durable
// storage besides IssueStore: their numbers are the paper forms', never
// reserved.
type KeyedStore interface {
	// KeyedRange returns the contingency range holding the number after
	// checking it may be keyed in (not stored yet, or stored under
	// corrects and observed by DGI). EINVALID (Respuesta 01) naming
	// cfe.idDoc.serie, cfe.idDoc.numero or corrige otherwise.
	KeyedRange(ctx context.Context, t Type, serie string, nro int64, corrects string) (CAERange, error)
	// CommitKeyed stores the signed receipts in one durable transaction,
	// all or none, checking again what KeyedRange checks. ECONFLICT for a
	// uuid already stored, EINVALID as KeyedRange.
	CommitKeyed(ctx context.Context, docs []KeyedCFE) error
}

// LastNumber is the last number used of one type and serie: what the
// hosted service reports, what a store is raised to.
type LastNumber struct {
	Type  Type
	Serie string
	Last  int64
}

// ErrNumberGap is the cause (in Err) of a Commit that failed because a lower
// number of its serie was given back by another CFE and nobody took it again
// in time. The committed numbers stay gap-free; the CFE was not stored and its
// number was given back, so it can be signed again with a new reservation.
var ErrNumberGap = errors.New("a lower number of the serie was given back and not taken again")
