package cfe

import (
	"fmt"
	"time"
)

// Facts the agent reports about itself. Each is one type, filled by the
// part that knows it (the store, the signer) and read as it is by the
// health assessment (package health); the state report's wire types
// (localapi/apitype) embed them, so their JSON names are here. A new field
// of one of them reaches GET /state by being added here and filled by its
// producer. Fields tagged "-" are for the assessment and the technician's
// commands, not the wire.

// RangeUse is one CAE range and its use as committed on disk (numbers
// reserved but not yet committed are not counted), on a given day: what the
// store reports (store.DB.RangeStatus).
type RangeUse struct {
	Range     CAERange `json:"-"`         // the wire names its serie, numbers, expiry and origin itself
	Used      int64    `json:"used"`      // numbers committed from the range
	Remaining int64    `json:"remaining"` // numbers that can still be issued; 0 once expired
	// Skipped counts numbers that will never be issued: passed over, or
	// left over when the range expired. DGI expects them reported as
	// annulled.
	Skipped      int64 `json:"-"`
	Expired      bool  `json:"expired"`
	DaysLeft     int   `json:"-"`              // days from the day until the expiry date; negative once expired
	NearlyUsedUp bool  `json:"nearly_used_up"` // numbers left, but few (the store's threshold)
	NearExpiry   bool  `json:"near_expiry"`    // not expired, but expiring soon (the store's threshold)
}

// CertSummary describes a signing certificate as of a moment: what the
// signer reports (signer.CertInfo) for the status page, the tray and the
// technician's commands.
type CertSummary struct {
	SubjectDN    string    `json:"subject_dn"`    // the subject's distinguished name, RFC 2253 form
	CommonName   string    `json:"subject"`       // the subject's common name
	Issuer       string    `json:"issuer"`        // the issuer's distinguished name
	SerialNumber string    `json:"serial_number"` // decimal, as X509SerialNumber
	RUC          string    `json:"ruc"`           // from the subject's serialNumber attribute, when it holds one
	NotBefore    time.Time `json:"not_before"`
	NotAfter     time.Time `json:"expires_at"`
	DaysToExpiry int       `json:"-"`    // whole days left until NotAfter; negative once expired
	Expired      bool      `json:"-"`    // the moment is after NotAfter
	NotYetValid  bool      `json:"-"`    // the moment is before NotBefore
	Test         bool      `json:"test"` // a sandbox test certificate, without fiscal value
}

// Outbox is the queue of signed CFEs toward the hosted service: what the
// store reports (store.DB.Stats).
type Outbox struct {
	Pending       int       `json:"pending"`  // CFEs not yet delivered
	OldestPending time.Time `json:"-"`        // commit time of the oldest pending CFE; zero when none
	Rejected      int       `json:"rejected"` // CFEs the hosted service refused for good
	// Quarantined counts the CFEs held out of delivery because their stored
	// record cannot be read back; Quarantine lists the first of them, in
	// commit order.
	Quarantined int           `json:"quarantined"`
	Quarantine  []Quarantined `json:"-"` // the wire lists them with their names
}

// Quarantined is a signed CFE held out of delivery because its stored record
// cannot be read back (a damaged disk or file): it is not delivered, printed
// or reused until a technician recovers it («cfe-agent recuperar»).
type Quarantined struct {
	UUID  string `json:"uuid"` // "" when not even the uuid could be read
	Type  Type   `json:"tipo_cfe,omitempty"`
	Serie string `json:"serie,omitempty"`
	Nro   int64  `json:"numero,omitempty"` // Type, Serie and Nro are zero when the record does not say
	// CommittedAt is when it was signed and stored (zero when unknown);
	// Since when the outbox found it unreadable; both in Montevideo.
	CommittedAt time.Time `json:"registrado_a,omitzero"`
	Since       time.Time `json:"desde"`
	Reason      string    `json:"motivo"` // Spanish: what cannot be read
}

// Name is the CFE as a technician knows it: "e-Ticket A-7", or its uuid
// when the record does not say its number.
func (q Quarantined) Name() string {
	if q.Type != 0 {
		return fmt.Sprintf("%s %s-%d", q.Type.Name(), q.Serie, q.Nro)
	}
	if q.UUID == "" {
		return "un comprobante sin uuid legible"
	}
	return "el comprobante con uuid " + q.UUID
}

// Storage is what the agent knows of the disk that holds its data: whether
// the store's last commit failed, and the space left on its filesystem. The
// store reports it (store.DB.Storage).
type Storage struct {
	Dir string `json:"dir"` // the store file's directory
	// FreeBytes and TotalBytes are the space left to the agent and the size
	// of Dir's filesystem; both zero when SpaceError is set.
	FreeBytes  uint64 `json:"free_bytes"`
	TotalBytes uint64 `json:"total_bytes"`
	// SpaceError is why the free space could not be read, in Spanish; ""
	// when it was.
	SpaceError string `json:"space_error,omitempty"`
	// LastWriteError is why the store's last commit failed, in Spanish; ""
	// once a commit succeeded (or none failed since the store opened).
	// LastWriteErrorAt is when, in Montevideo.
	LastWriteError   string    `json:"last_write_error,omitempty"`
	LastWriteErrorAt time.Time `json:"last_write_error_at,omitzero"`
}
