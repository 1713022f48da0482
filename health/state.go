package health

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// State is the plain facts the assessment reads: what localapi.StateSource
// reports.
type State struct {
	// Certificate is the signing certificate, nil when none is configured.
	Certificate *Certificate
	// CertificateError says, in Spanish, why there is no usable certificate
	// (file missing, wrong password…) when Certificate is nil.
	CertificateError string
	// CAE lists every CAE range in the store, used up and expired ones too.
	CAE []CAERangeUse
	// Outbox counts signed CFEs not yet accepted by the hosted service.
	Outbox Outbox
	// Receipts summarizes recent signing.
	Receipts Receipts
	// Hosted is the last check of the hosted service, nil when the profile
	// names none (the agent then works offline only).
	Hosted *Hosted
	// NumberingHold is why the store refuses to number (it does not know
	// where numbering stands: docs/numbering.md); nil when it numbers.
	NumberingHold *NumberingHold
	// Storage is the disk that holds the store; nil when unknown.
	Storage *Storage
	// Backup is the last backup of the store; nil when unknown.
	Backup *BackupStatus
}

// NumberingHold is a store that waits to know where numbering stands.
type NumberingHold struct {
	Since  time.Time
	Reason string // Spanish
	// Settled lists the series a technician already settled, in Spanish
	// ("e-Ticket serie A"); every other serie waits.
	Settled []string
}

// Certificate describes the signing certificate.
type Certificate struct {
	Subject   string // the subject's common name or distinguished name
	RUC       string // the company's RUC, as the certificate carries it
	NotBefore time.Time
	NotAfter  time.Time
	// SubjectDN and Issuer are distinguished names; SerialNumber is decimal.
	SubjectDN    string
	Issuer       string
	SerialNumber string
	Test         bool // a sandbox test certificate, without fiscal value
}

// CAERangeUse is one CAE range and its use, as the store reports it (see
// store.RangeStatus).
type CAERangeUse struct {
	Range        cfe.CAERange
	Used         int64 // numbers committed from the range
	Remaining    int64 // numbers that can still be issued; 0 once expired
	Expired      bool
	NearlyUsedUp bool // numbers left, but few
	NearExpiry   bool // not expired, but expiring soon
}

// Outbox is the state of the delivery queue toward the hosted service.
type Outbox struct {
	Pending       int
	OldestPending time.Time // zero when Pending is 0
	Rejected      int       // CFEs the hosted service refused for good
	// Quarantined counts the CFEs held out of delivery because their stored
	// record cannot be read back; Quarantine lists the first of them.
	Quarantined int
	Quarantine  []QuarantinedCFE
}

// QuarantinedCFE is a signed CFE whose stored record cannot be read back.
type QuarantinedCFE struct {
	UUID  string
	Type  cfe.Type // 0 when the record does not say; Serie and Nro too
	Serie string
	Nro   int64
	// CommittedAt is when it was signed and stored (zero when unknown);
	// Since when the outbox found it unreadable.
	CommittedAt time.Time
	Since       time.Time
	Reason      string // Spanish
}

// Name is the CFE as a technician knows it: "e-Ticket A-8", else its uuid.
func (q QuarantinedCFE) Name() string {
	if q.Type != 0 {
		return fmt.Sprintf("%s %s-%d", q.Type.Name(), q.Serie, q.Nro)
	}
	return "con uuid " + q.UUID
}

// Receipts summarizes the CFEs signed recently.
type Receipts struct {
	SignedToday  int       // signed since midnight in Montevideo
	LastSignedAt time.Time // zero when none was ever signed
	// Recent are the last CFEs signed, newest first (a handful, for the tray
	// and the status page).
	Recent []*cfe.Issued
}

// Hosted is what the agent knows of the hosted service, from its last
// requests and probes (no request is made to build it).
type Hosted struct {
	BaseURL   string
	CheckedAt time.Time // when the last request or probe ended; zero until the first
	Reachable bool      // the last request or probe got an answer
	Auth      string    // "api_key", "jwt" or "ninguna"; "" when unknown
	LastError string    // Spanish; "" after a success
	RateLimit *apitype.RateLimit
	// WaitUntil is when requests may go again after a 429 or with the key's
	// window used up; zero when they may go now.
	WaitUntil time.Time
}

// Storage is what the agent knows of the disk that holds its data: whether
// the store's last commit failed, and the space left on its filesystem.
type Storage struct {
	Dir string // the store file's directory
	// LastWriteError is why the store's last commit failed, in Spanish; ""
	// once a commit succeeded (or none failed since the agent started).
	LastWriteError   string
	LastWriteErrorAt time.Time
	// FreeBytes and TotalBytes are the space left to the agent and the size
	// of Dir's filesystem; both zero when SpaceError is set.
	FreeBytes, TotalBytes uint64
	// SpaceError is why the free space could not be read, for the log and
	// /state; "" when it was.
	SpaceError string
}

// BackupStatus is what the agent knows of its automatic backups, for /state.
type BackupStatus struct {
	Automatic bool          // a backup folder is configured
	Folder    string        // where automatic backups go
	Period    time.Duration // how often
	EveryN    int           // and after every N CFEs (0: only by period)
	Keep      int           // how many are kept
	// LastAt and LastFile are the newest good backup (manual ones too);
	// zero when there is none.
	LastAt   time.Time
	LastFile string
	// LastError is why the last attempt failed (Spanish); "" when it
	// succeeded or none was tried.
	LastError   string
	LastErrorAt time.Time
}
