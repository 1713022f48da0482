package localapi

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
)

// StateSource reports what the agent holds; cmd/cfe-agent implements it over
// the store and the signer.
type StateSource interface {
	// State returns a snapshot of the agent's state. It is called on every
	// /health request, so it must be cheap (one read transaction). Any error
	// is reported as status "error" (EUNAVAILABLE or EINTERNAL).
	State(ctx context.Context) (State, error)
}

// State is what a StateSource reports.
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
	// Backup is the last backup of the store (backup.go); nil when unknown.
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
}

// Receipts summarizes the CFEs signed recently.
type Receipts struct {
	SignedToday  int       // signed since midnight in Montevideo
	LastSignedAt time.Time // zero when none was ever signed
	// Recent are the last CFEs signed, newest first (a handful, for the tray
	// and the status page).
	Recent []*cfe.Issued
}

// Report statuses.
const (
	HealthOK       = "ok"       // the agent can sign and nothing needs attention
	HealthDegraded = "degraded" // the agent can sign, but something needs attention soon
	HealthError    = "error"    // the agent cannot sign
)

// Warning thresholds.
const (
	certWarnDays    = 30        // certificate expiring within this many days
	outboxWarnAfter = time.Hour // oldest undelivered CFE older than this
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

// CertificateReport describes the signing certificate.
type CertificateReport struct {
	Subject   string    `json:"subject"`
	RUC       string    `json:"ruc"`
	ExpiresAt time.Time `json:"expires_at"`
	DaysLeft  int       `json:"days_left"` // negative once expired
	// SubjectDN and Issuer are the distinguished names; SerialNumber is
	// decimal; Test marks a sandbox test certificate.
	SubjectDN    string    `json:"subject_dn"`
	Issuer       string    `json:"issuer"`
	SerialNumber string    `json:"serial_number"`
	NotBefore    time.Time `json:"not_before"`
	Test         bool      `json:"test"`
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

// CAERangeReport is one CAE range.
type CAERangeReport struct {
	Serie     string   `json:"serie"`
	Desde     int64    `json:"desde"`
	Hasta     int64    `json:"hasta"`
	Remaining int64    `json:"remaining"`
	Vence     cfe.Date `json:"vence"`
	Expired   bool     `json:"expired"`
	// Used counts the numbers committed from the range; Origen is where the
	// range came from (dgi, manual, sandbox); the flags are the store's
	// warnings about it.
	Used         int64  `json:"used"`
	Origen       string `json:"origen"`
	NearlyUsedUp bool   `json:"nearly_used_up"`
	NearExpiry   bool   `json:"near_expiry"`
}

// OutboxReport is the delivery queue toward the hosted service.
type OutboxReport struct {
	Pending           int   `json:"pending"`
	OldestPendingAgeS int64 `json:"oldest_pending_age_s"`
	Rejected          int   `json:"rejected"`
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
	// aceptado or rechazado (cfe.Delivery* values).
	Entrega string `json:"entrega"`
}

func (s *Server) registerStatusRoutes(r *mux.Router) {
	s.handle(r, http.MethodGet, "/health", s.handleHealth)
	s.handle(r, http.MethodGet, "/state", s.handleState)
	s.handle(r, http.MethodGet, "/", s.handleRoot)
}

// handleHealth answers 200 while the agent can sign and 503 when it cannot.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := s.report(r.Context(), false).HealthReport
	status := http.StatusOK
	if !h.OK {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, h)
}

// handleState answers 200 with the full report, whatever the status.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.report(r.Context(), true))
}

// handleRoot is /state for JSON clients; browsers get the status page when
// one is configured.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	if s.cfg.StatusPage != nil && acceptsHTML(r) {
		s.cfg.StatusPage.ServeHTTP(w, r)
		return
	}
	s.handleState(w, r)
}

// acceptsHTML reports whether the request's Accept header lists text/html.
func acceptsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/html" {
			return true
		}
	}
	return false
}

// report builds the state report; full adds what only /state shows (the
// interface addresses are read only then).
func (s *Server) report(ctx context.Context, full bool) *StateReport {
	now := s.now()
	z := s.cfg.Zone(now)
	rep := &StateReport{HealthReport: HealthReport{
		Status:      HealthOK,
		BaseURL:     s.BaseURL(),
		Version:     s.cfg.Version,
		Profile:     s.cfg.Profile,
		Environment: s.cfg.Environment,
		ZonaHoraria: ZoneReport{OK: z.OK(), Nombre: z.Name, Desfase: issuer.FormatOffset(z.Offset), Mensaje: z.Message()},
		Warnings:    []string{},
	}}
	if !z.OK() {
		rep.flag(HealthError, z.Message())
	}
	if full {
		rep.URLs = s.URLs()
	}
	st, err := s.cfg.State.State(ctx)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "reading the agent's state",
			slog.String("request_id", requestID(ctx)), slog.String("err", err.Error()))
		msg := "no se pudo leer el estado del agente"
		if userFacingFault(err) {
			msg += ": " + cfe.ErrorMessage(err) // a fault the technician can act on (a damaged store file)
		}
		rep.flag(HealthError, msg)
	} else {
		rep.addCertificate(st.Certificate, st.CertificateError, now)
		rep.addCAE(st.CAE)
		rep.addOutbox(st.Outbox, now)
		rep.addReceipts(st.Receipts)
		rep.addHosted(st.Hosted, st.Outbox, now)
		rep.addNumberingHold(st.NumberingHold)
		rep.addStorage(st.Storage)
		rep.addBackup(st.Backup, now)
	}
	rep.OK = rep.Status != HealthError
	return rep
}

// flag raises the report's status to at least status and records why.
func (rep *StateReport) flag(status, warning string) {
	if severity(status) > severity(rep.Status) {
		rep.Status = status
	}
	rep.Warnings = append(rep.Warnings, warning)
}

func severity(status string) int {
	return slices.Index([]string{HealthOK, HealthDegraded, HealthError}, status)
}

func (rep *StateReport) addCertificate(c *Certificate, problem string, now time.Time) {
	if c == nil {
		rep.CertificateError = problem
		if problem != "" {
			rep.flag(HealthError, "el certificado de firma no se puede usar: "+problem+": no se puede firmar")
			return
		}
		rep.flag(HealthError, "no hay certificado de firma configurado: no se puede firmar")
		return
	}
	days := int(math.Floor(c.NotAfter.Sub(now).Hours() / 24))
	rep.Certificate = &CertificateReport{Subject: c.Subject, RUC: c.RUC, ExpiresAt: c.NotAfter, DaysLeft: days,
		SubjectDN: c.SubjectDN, Issuer: c.Issuer, SerialNumber: c.SerialNumber, NotBefore: c.NotBefore, Test: c.Test}
	expiry := c.NotAfter.In(cfe.Montevideo).Format(time.DateOnly)
	switch {
	case now.After(c.NotAfter):
		rep.flag(HealthError, fmt.Sprintf("el certificado de firma venció el %s: no se puede firmar", expiry))
	case now.Before(c.NotBefore):
		rep.flag(HealthError, fmt.Sprintf("el certificado de firma recién es válido desde el %s: no se puede firmar",
			c.NotBefore.In(cfe.Montevideo).Format(time.DateOnly)))
	case days < certWarnDays:
		rep.flag(HealthDegraded, fmt.Sprintf("el certificado de firma vence el %s (quedan %d días): renuévelo", expiry, days))
	}
}

// addCAE groups the ranges by CFE type and warns about types that run out of
// numbers or of time: a type is short of numbers when every range of it with
// numbers left is nearly used up, and short of time when every such range is
// near its expiry (the store flags each range). The agent cannot sign at all
// when no type has numbers.
func (rep *StateReport) addCAE(ranges []CAERangeUse) {
	byType := make(map[cfe.Type]*CAETypeReport)
	short := make(map[cfe.Type][2]bool) // [numbers, time] for every usable range so far
	for _, u := range ranges {
		t := u.Range.Type
		tr := byType[t]
		if tr == nil {
			tr = &CAETypeReport{TipoCFE: t, Nombre: t.Name(), Ranges: []CAERangeReport{}, Warnings: []string{}}
			byType[t] = tr
			short[t] = [2]bool{true, true}
		}
		tr.Ranges = append(tr.Ranges, CAERangeReport{Serie: u.Range.Serie, Desde: u.Range.DNro, Hasta: u.Range.HNro,
			Remaining: u.Remaining, Vence: u.Range.Vencimiento, Expired: u.Expired, Used: u.Used, Origen: u.Range.Source,
			NearlyUsedUp: u.NearlyUsedUp, NearExpiry: u.NearExpiry})
		if u.Expired || u.Remaining <= 0 {
			continue
		}
		tr.Remaining += u.Remaining
		if tr.UsableUntil == nil || u.Range.Vencimiento.After(*tr.UsableUntil) {
			v := u.Range.Vencimiento
			tr.UsableUntil = &v
		}
		sh := short[t]
		short[t] = [2]bool{sh[0] && u.NearlyUsedUp, sh[1] && u.NearExpiry}
	}

	rep.CAE = make([]CAETypeReport, 0, len(byType))
	usable := false
	for _, t := range slices.Sorted(maps.Keys(byType)) {
		tr := byType[t]
		slices.SortFunc(tr.Ranges, func(a, b CAERangeReport) int {
			return cmp.Or(cmp.Compare(a.Serie, b.Serie), cmp.Compare(a.Desde, b.Desde))
		})
		switch {
		case tr.Remaining == 0:
			tr.Warnings = append(tr.Warnings, fmt.Sprintf("no quedan números CAE vigentes para %s", tr.Nombre))
		case short[t][0]:
			tr.Warnings = append(tr.Warnings, fmt.Sprintf("quedan %d números CAE para %s: solicite un nuevo rango", tr.Remaining, tr.Nombre))
		}
		if tr.Remaining > 0 && short[t][1] {
			tr.Warnings = append(tr.Warnings, fmt.Sprintf("los rangos CAE de %s vencen el %s: solicite un nuevo rango", tr.Nombre, tr.UsableUntil))
		}
		for _, w := range tr.Warnings {
			rep.flag(HealthDegraded, w)
		}
		usable = usable || tr.Remaining > 0
		rep.CAE = append(rep.CAE, *tr)
	}
	if !usable {
		rep.flag(HealthError, "no hay números CAE vigentes para ningún tipo de comprobante: no se puede firmar")
	}
}

// addNumberingHold reports a store that refuses to number until it knows
// where numbering stands: the agent cannot sign (the series a technician
// already settled excepted).
func (rep *StateReport) addNumberingHold(h *NumberingHold) {
	if h == nil {
		return
	}
	rep.Numeracion = &NumberingReport{EnEspera: true, Desde: h.Since.In(cfe.Montevideo), Motivo: h.Reason,
		SeriesConfirmadas: append([]string{}, h.Settled...)}
	msg := "no se puede firmar: " + h.Reason + ". Se consulta al servicio en línea el último número usado; " +
		"si no responde, un técnico debe ejecutar «cfe-agent cae used-elsewhere»"
	if len(h.Settled) > 0 {
		msg += " (ya confirmadas: " + strings.Join(h.Settled, ", ") + ")"
	}
	rep.flag(HealthError, msg)
}

func (rep *StateReport) addOutbox(o Outbox, now time.Time) {
	rep.Outbox = OutboxReport{Pending: o.Pending, Rejected: o.Rejected}
	if o.Pending == 0 || o.OldestPending.IsZero() {
		return
	}
	age := now.Sub(o.OldestPending)
	rep.Outbox.OldestPendingAgeS = int64(age / time.Second)
	if age > outboxWarnAfter {
		rep.flag(HealthDegraded, fmt.Sprintf("comprobantes sin enviar al servicio: %d; el más antiguo espera desde hace %d h %02d min",
			o.Pending, int(age.Hours()), int(age.Minutes())%60))
	}
}

func (rep *StateReport) addReceipts(r Receipts) {
	rep.Receipts = ReceiptsReport{SignedToday: r.SignedToday, Recent: make([]RecentReceipt, 0, len(r.Recent))}
	for _, is := range r.Recent {
		rep.Receipts.Recent = append(rep.Receipts.Recent, RecentReceipt{UUID: is.UUID, TipoCFE: is.Type,
			Nombre: is.Type.Name(), Serie: is.Serie, Numero: is.Nro, Total: is.Total,
			FirmadoA: is.TmstFirma.In(cfe.Montevideo), Entrega: is.Delivery.State})
	}
	if !r.LastSignedAt.IsZero() {
		t := r.LastSignedAt.In(cfe.Montevideo)
		rep.Receipts.LastSignedAt = &t
	}
}
