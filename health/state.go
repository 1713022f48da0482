package health

import (
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// State is the plain facts the assessment reads, each of the type its
// producer fills (cfe's where the store or the signer report it): what the
// application reads of the agent (app.Facade.Report).
type State struct {
	// Certificate is the signing certificate, as the signer summarizes it
	// (signer.CertInfo); nil when none is configured.
	Certificate *cfe.CertSummary
	// CertificateError says, in Spanish, why there is no usable certificate
	// (file missing, wrong password…) when Certificate is nil.
	CertificateError string
	// CAE lists every CAE range in the store and its use, used up and
	// expired ones too (store.DB.RangeStatus).
	CAE []cfe.RangeUse
	// Outbox counts signed CFEs not yet accepted by the hosted service
	// (store.DB.Stats).
	Outbox cfe.Outbox
	// Receipts summarizes recent signing.
	Receipts Receipts
	// Hosted is the last check of the hosted service, nil when the profile
	// names none (the agent then works offline only).
	Hosted *Hosted
	// NumberingHold is why the store refuses to number (it does not know
	// where numbering stands: docs/numbering.md); nil when it numbers.
	NumberingHold *NumberingHold
	// Storage is the disk that holds the store (store.DB.Storage); nil when
	// unknown.
	Storage *cfe.Storage
	// Backup is the last backup of the store; nil when unknown.
	Backup *BackupStatus
	// DGI is the CFEs' states at DGI (dgi.go): sent directly, or reported
	// by the provider; nil in provider mode while the provider reported
	// none.
	DGI *DGIStatus
	// Printer is what the agent last learned of the profile's default
	// printer (printer.go); nil before the first check, or without one.
	Printer *Printer
}

// NumberingHold is a store that waits to know where numbering stands.
type NumberingHold struct {
	Since  time.Time
	Reason string // Spanish
	// Settled lists the series a technician already settled, in Spanish
	// ("e-Ticket serie A"); every other serie waits.
	Settled []string
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
