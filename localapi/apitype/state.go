package apitype

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Report statuses.
const (
	HealthOK       = "ok"       // the agent can sign and nothing needs attention
	HealthDegraded = "degraded" // the agent can sign, but something needs attention soon
	HealthError    = "error"    // the agent cannot sign
)

// HealthReport is the body of GET /health, and the first part of the state
// report.
type HealthReport struct {
	// OK is true when the agent can sign (status "ok" or "degraded").
	OK          bool       `json:"ok"`
	Status      string     `json:"status"`
	BaseURL     string     `json:"base_url"`
	Version     string     `json:"version"`
	Profile     string     `json:"profile"`
	Environment string     `json:"environment"`
	ZonaHoraria ZoneReport `json:"zona_horaria"`
	// Warnings explain, in Spanish, every reason for a status other than "ok".
	Warnings []string `json:"warnings"`
}

// ZoneReport is the machine's time zone as the signing rule sees it.
type ZoneReport struct {
	OK      bool   `json:"ok"`
	Nombre  string `json:"nombre"`
	Desfase string `json:"desfase"` // ±hh:mm
	Mensaje string `json:"mensaje"`
}

// StateReport is the body of GET /state (and of GET / for JSON clients).
type StateReport struct {
	HealthReport
	// URLs are the addresses the module can be reached at, loopback first.
	URLs        []string           `json:"urls"`
	Certificate *CertificateReport `json:"certificate"`
	CAE         []CAETypeReport    `json:"cae"`
	Outbox      OutboxReport       `json:"outbox"`
	Receipts    ReceiptsReport     `json:"receipts"`
	// Hosted is the hosted service as last checked; null when the profile
	// names none.
	Hosted *HostedReport `json:"hosted"`
	// Numeracion is present while the agent refuses to number because it
	// does not know where numbering stands (docs/numbering.md).
	Numeracion *NumberingReport `json:"numeracion,omitempty"`
	// Storage is the disk of the store: free space and the last commit's
	// failure (storage.go); null when the agent does not report it.
	Storage *StorageReport `json:"storage"`
	// Backup is the last backup of the store and the automatic backups'
	// settings (backup.go); null when the agent does not report it.
	Backup *BackupReport `json:"backup"`
	// DGI counts the CFEs by their state at DGI: those the agent sends to
	// DGI itself (the profile's dgi.modo: directo), or in provider mode
	// those it delivered, as the hosted service reports them (absent while
	// the service reported no state of DGI).
	DGI *DGIReport `json:"dgi,omitempty"`
	// Printer is what the agent last learned of the profile's default
	// printer (printercheck.go); absent before the first check.
	Printer *PrinterCheck `json:"printer,omitempty"`
	// CertificateError is why there is no usable certificate (Certificate is
	// null), in Spanish; absent otherwise.
	CertificateError string `json:"certificate_error,omitempty"`
}

// NumberingReport is a numbering hold.
type NumberingReport struct {
	EnEspera          bool      `json:"en_espera"`
	Desde             time.Time `json:"desde"`
	Motivo            string    `json:"motivo"`
	SeriesConfirmadas []string  `json:"series_confirmadas"`
}

// CertificateReport describes the signing certificate: the signer's summary
// (cfe.CertSummary: subject, subject_dn, issuer, serial_number, ruc,
// not_before, expires_at, test) and the days left as the report sees them.
type CertificateReport struct {
	cfe.CertSummary
	DaysLeft int `json:"days_left"` // negative once expired
}

// CAETypeReport is what remains to number one CFE type.
type CAETypeReport struct {
	TipoCFE cfe.Type `json:"tipo_cfe"`
	Nombre  string   `json:"nombre"`
	// Remaining counts the numbers left in the type's ranges that have not
	// expired.
	Remaining int64 `json:"remaining"`
	// UsableUntil is the last day on which a number of the type can be used
	// (the latest expiry of its ranges with numbers left); absent when none.
	UsableUntil *cfe.Date        `json:"usable_until,omitempty"`
	Ranges      []CAERangeReport `json:"ranges"`
	Warnings    []string         `json:"warnings"`
}

// CAERangeReport is one CAE range: where it stands (its serie, numbers,
// expiry and origin: dgi, manual, sandbox) and its use as the store reports
// it (cfe.RangeUse: used, remaining, expired, nearly_used_up, near_expiry).
type CAERangeReport struct {
	Serie  string   `json:"serie"`
	Desde  int64    `json:"desde"`
	Hasta  int64    `json:"hasta"`
	Vence  cfe.Date `json:"vence"`
	Origen string   `json:"origen"`
	cfe.RangeUse
}

// OutboxReport is the delivery queue toward the hosted service: the store's
// counts (cfe.Outbox: pending, rejected, quarantined), the oldest pending
// CFE's age, and the first quarantined CFEs (up to 20), oldest first, by
// name.
type OutboxReport struct {
	cfe.Outbox
	OldestPendingAgeS int64 `json:"oldest_pending_age_s"`
	// Quarantine lists the first quarantined CFEs; it stands for the
	// embedded Outbox.Quarantine, which has no names.
	Quarantine []QuarantinedCFE `json:"quarantine"`
}

// QuarantinedCFE is a signed CFE whose stored record cannot be read back
// (cfe.Quarantined: uuid, tipo_cfe, serie, numero, registrado_a, desde,
// motivo), with its type's name; tipo_cfe, nombre, serie and numero are
// absent when the record does not say them, registrado_a when unknown.
type QuarantinedCFE struct {
	cfe.Quarantined
	Nombre string `json:"nombre,omitempty"`
}

// ReceiptsReport summarizes recent signing.
type ReceiptsReport struct {
	SignedToday  int        `json:"signed_today"`
	LastSignedAt *time.Time `json:"last_signed_at"`
	// Recent are the last CFEs signed, newest first.
	Recent []RecentReceipt `json:"recent"`
}

// RecentReceipt is one recently signed CFE.
type RecentReceipt struct {
	UUID     string          `json:"uuid"`
	TipoCFE  cfe.Type        `json:"tipo_cfe"`
	Nombre   string          `json:"nombre"`
	Serie    string          `json:"serie"`
	Numero   int64           `json:"numero"`
	Total    decimal.Decimal `json:"total"`
	FirmadoA time.Time       `json:"firmado_a"`
	// Entrega is the delivery state toward the hosted service: pendiente,
	// aceptado, rechazado or cuarentena (cfe.Delivery* values).
	Entrega string `json:"entrega"`
}

// HostedReport is the "hosted" object of /state; null when the profile names
// no hosted service.
type HostedReport struct {
	BaseURL string `json:"base_url"`
	// Reachable and CheckedAt are null until the first request or probe ends.
	Reachable *bool      `json:"reachable"`
	CheckedAt *time.Time `json:"checked_at"`
	Auth      string     `json:"auth,omitempty"`
	LastError string     `json:"last_error,omitempty"`
	// RateLimit is the profile key's headroom; absent with a JWT or before
	// the first answer.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	// WaitS is how many seconds requests wait, after a 429 or with the key's
	// window used up; absent when they go now.
	WaitS int64 `json:"wait_s,omitempty"`
}

// RateLimit is the profile key's quota as the hosted service last reported
// it (its X-RateLimit-* headers): the key's headroom.
type RateLimit struct {
	LimitMinute     int       `json:"limit_minute"`
	RemainingMinute int       `json:"remaining_minute"`
	LimitHour       int       `json:"limit_hour"`
	RemainingHour   int       `json:"remaining_hour"`
	ObservedAt      time.Time `json:"observed_at"`
}

// StorageReport is the "storage" object of /state: the disk of the store as
// the store reports it (cfe.Storage: dir, free_bytes, total_bytes,
// space_error, last_write_error, last_write_error_at), with its own status.
type StorageReport struct {
	// Status is the disk's own status: ok, degraded or error; the report's
	// status is at least this.
	Status string `json:"status"`
	cfe.Storage
	// Warnings are the disk's reasons for its status, also in the report's.
	Warnings []string `json:"warnings"`
}

// BackupReport is the "backup" object of /state.
type BackupReport struct {
	Automaticas bool   `json:"automaticas"`
	Carpeta     string `json:"carpeta,omitempty"`
	PeriodoS    int64  `json:"periodo_s,omitempty"`
	CadaN       int    `json:"cada_n,omitempty"`
	Conservar   int    `json:"conservar,omitempty"`
	// Ultima is the newest good backup: its time, age and file.
	Ultima *LastBackupReport `json:"ultima"`
	// Error is why the last attempt failed; absent after a success.
	Error   string     `json:"error,omitempty"`
	ErrorAt *time.Time `json:"error_at,omitempty"`
	// Status is ok or degraded (late, or the last one failed).
	Status string `json:"status"`
}

// LastBackupReport is a backup of /state.
type LastBackupReport struct {
	At      time.Time `json:"at"`
	EdadS   int64     `json:"edad_s"`
	Archivo string    `json:"archivo"`
}

// DGIReport is the /state block "dgi": CFEs by their state at DGI (outside
// checks read these names). Enviados counts every CFE whose envelope DGI
// received (with or without its verdict yet); Aceptados (AE), Rechazados
// (BE: the number annulled) and Observados (CE) are DGI's verdicts;
// Pendientes are not yet received by DGI; Desconocidos were sent without a
// trustworthy answer (DGI is asked before they are sent again).
type DGIReport struct {
	Enviados     int `json:"enviados"`
	Aceptados    int `json:"aceptados"`
	Rechazados   int `json:"rechazados"`
	Observados   int `json:"observados"`
	Pendientes   int `json:"pendientes"`
	Desconocidos int `json:"desconocidos"`
	// Reportes are the last days' daily reports to DGI, newest first
	// (dailyreport.go); absent where the agent knows none.
	Reportes []DailyReportReport `json:"reportes,omitempty"`
	// UrgenciaReporte is how late the most overdue day's report is: "ambar"
	// from 12:00 of the next business day, "roja" from 18:00 (DGI's
	// deadline); absent when none is late.
	UrgenciaReporte string `json:"urgencia_reporte,omitempty"`
}
