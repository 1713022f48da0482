package dgi

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// The provider's endpoints of the daily report (docs/sandbox.md, "The daily
// report"); the interface shows none, so they follow its style: JSON with
// Spanish camelCase names, the company from the API key (or idEmpresa with
// a JWT), the common error shape.
//
//	POST /api/v1/numerosanulados         an agent delivers a range of annulled numbers
//	GET  /api/v1/numerosanulados         the company's ranges, by day annulled
//	GET  /api/v1/reportediario           the company's daily reports and their states at DGI
//	GET  /api/v1/reportediario/xml       the signed report of one day

// Limits of an annulled range's texts.
const (
	maxReasonLen = 40
	maxNoteLen   = 500
	// futureSlack is how far in the service's future fechaAnulacion may
	// be (the agents' clocks drift).
	futureSlack = time.Hour
)

// ReportRoutes serves the daily report's endpoints.
type ReportRoutes struct {
	db       *data.DB
	now      func() time.Time
	log      *slog.Logger
	reporter *Reporter // kicked after a change; nil when the sandbox sends nothing to DGI
}

// NewReportRoutes returns the routes over db. reporter may be nil.
func NewReportRoutes(db *data.DB, now func() time.Time, log *slog.Logger, reporter *Reporter) *ReportRoutes {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ReportRoutes{db: db, now: now, log: log, reporter: reporter}
}

// SetReporter sets the reporter kicked after a change.
func (rr *ReportRoutes) SetReporter(r *Reporter) { rr.reporter = r }

// AnnulledRequest is POST /api/v1/numerosanulados's body: numbers desde to
// hasta of tipoCfe and serie, annulled at fechaAnulacion for motivo.
type AnnulledRequest struct {
	IdEmpresa      int64  `json:"idEmpresa,omitempty"`
	TipoCfe        int    `json:"tipoCfe"`
	Serie          string `json:"serie"`
	Desde          int64  `json:"desde"`
	Hasta          int64  `json:"hasta"`
	Motivo         string `json:"motivo"`
	Detalle        string `json:"detalle,omitempty"`
	FechaAnulacion string `json:"fechaAnulacion"` // RFC 3339
	// FechaResumen is the day whose report counts the numbers
	// (AAAA-MM-DD), when it is not fechaAnulacion's day in Montevideo (a
	// number DGI rejected counts on its CFE's signature day).
	FechaResumen string `json:"fechaResumen,omitempty"`
}

// AnnulledRange is a range as the endpoints show it.
type AnnulledRange struct {
	TipoCfe        int       `json:"tipoCfe"`
	Serie          string    `json:"serie"`
	Desde          int64     `json:"desde"`
	Hasta          int64     `json:"hasta"`
	Motivo         string    `json:"motivo"`
	Detalle        string    `json:"detalle,omitempty"`
	FechaAnulacion time.Time `json:"fechaAnulacion"`
	FechaRegistro  time.Time `json:"fechaRegistro"`
	FechaResumen   cfe.Date  `json:"fechaResumen"` // the day whose report lists it
}

// AnnulledResponse is POST's answer: the range as recorded, and whether
// this request recorded it (false: it was already recorded, nothing changed).
type AnnulledResponse struct {
	AnnulledRange
	Registrado bool `json:"registrado"`
}

func rangeOf(a *data.AnnulledRecord) AnnulledRange {
	return AnnulledRange{TipoCfe: int(a.Type), Serie: a.Serie, Desde: a.From, Hasta: a.To, Motivo: a.Reason, Detalle: a.Note,
		FechaAnulacion: a.At, FechaRegistro: a.Received, FechaResumen: a.Day()}
}

// check returns the request's field errors and, without any, its parsed
// time and report day (zero: the time's).
func (req *AnnulledRequest) check(now time.Time) (time.Time, cfe.Date, []cfe.FieldError) {
	var fs []cfe.FieldError
	fail := func(campo, msg string) { fs = append(fs, cfe.FieldError{Campo: campo, Mensaje: msg}) }
	req.Serie, req.Motivo, req.Detalle = strings.TrimSpace(req.Serie), strings.TrimSpace(req.Motivo), strings.TrimSpace(req.Detalle)
	if !cfe.Type(req.TipoCfe).Valid() {
		fail("tipoCfe", "debe ser un código de tipo de CFE de DGI (101, 111, ...)")
	}
	if !cfe.ValidSerie(req.Serie) {
		fail("serie", "debe ser una serie de DGI: una o dos letras mayúsculas, o un dígito y una letra")
	}
	if req.Desde < 1 || req.Desde > cfe.MaxNro {
		fail("desde", "debe ser un número de CFE, de 1 a 9999999")
	}
	if req.Hasta < 1 || req.Hasta > cfe.MaxNro {
		fail("hasta", "debe ser un número de CFE, de 1 a 9999999")
	} else if req.Hasta < req.Desde {
		fail("hasta", "no puede ser menor que desde")
	}
	fs = append(fs, web.Required("motivo", req.Motivo)...)
	fs = append(fs, web.MaxLen("motivo", req.Motivo, maxReasonLen)...)
	fs = append(fs, web.MaxLen("detalle", req.Detalle, maxNoteLen)...)
	var at time.Time
	if req.FechaAnulacion == "" {
		fail("fechaAnulacion", "es obligatorio")
	} else if t, err := time.Parse(time.RFC3339, req.FechaAnulacion); err != nil {
		fail("fechaAnulacion", "debe ser una fecha y hora RFC 3339 (2026-11-27T10:15:00-03:00)")
	} else if t.After(now.Add(futureSlack)) {
		fail("fechaAnulacion", "es posterior a la hora del servicio")
	} else {
		at = t
	}
	var day cfe.Date
	if req.FechaResumen != "" {
		d, err := cfe.ParseDate(req.FechaResumen)
		switch {
		case err != nil:
			fail("fechaResumen", "debe ser una fecha AAAA-MM-DD")
		case d.After(cfe.DateOf(now.Add(futureSlack).In(cfe.Montevideo))):
			fail("fechaResumen", "es posterior a la fecha del servicio")
		default:
			day = d
		}
	}
	return at, day, fs
}

// HandleRegister is POST /api/v1/numerosanulados: it records a range of the
// company's annulled numbers. The same range again is answered with the
// range as recorded and registrado false; a range that overlaps another
// range or a CFE of the company (one DGI did not reject) is refused, 409,
// naming what it overlaps.
func (rr *ReportRoutes) HandleRegister(w http.ResponseWriter, r *http.Request) {
	var req AnnulledRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	now := rr.now()
	at, day, fs := req.check(now)
	if err := web.Invalid(fs...); err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	company, err := auth.PrincipalOf(r).Company(web.IDString(req.IdEmpresa))
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	rec := &data.AnnulledRecord{Company: company, Type: cfe.Type(req.TipoCfe), Serie: req.Serie, From: req.Desde, To: req.Hasta,
		Reason: req.Motivo, Note: req.Detalle, At: at, Received: now.UTC(), ReportDay: day}
	var created bool
	err = rr.db.Update(func(tx *bolt.Tx) error {
		var err error
		if created, err = data.AddAnnulled(tx, rec, rejectedByDGI); err != nil || created {
			return err
		}
		// Already recorded: answer the range as it was recorded first.
		prev, err := data.AnnulledAt(tx, company, rec.Type, rec.Serie, rec.From)
		if err == nil && prev != nil {
			rec = prev
		}
		return err
	})
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	if created {
		rr.log.Info("annulled numbers recorded", "company", company, "tipo", req.TipoCfe, "serie", req.Serie,
			"desde", req.Desde, "hasta", req.Hasta, "motivo", req.Motivo)
		if rr.reporter != nil {
			rr.reporter.Kick()
		}
	}
	web.WriteJSON(w, http.StatusOK, AnnulledResponse{AnnulledRange: rangeOf(rec), Registrado: created})
}

// rejectedByDGI reports whether DGI rejected CFE id (BE): its number is
// annulled, and an agent that learnt it may deliver it as annulled too.
func rejectedByDGI(tx *bolt.Tx, id int64) (bool, error) {
	r, err := data.GetDGI(tx, id)
	return r != nil && r.State == cfe.DGIRejected, err
}

// period reads the optional fechaDesde and fechaHasta of a listing.
func period(r *http.Request) (from, to cfe.Date, err error) {
	q := r.URL.Query()
	var fs []cfe.FieldError
	for _, p := range []struct {
		name string
		to   *cfe.Date
	}{{"fechaDesde", &from}, {"fechaHasta", &to}} {
		if v := q.Get(p.name); v != "" {
			d, err := cfe.ParseDate(v)
			if err != nil {
				fs = append(fs, cfe.FieldError{Campo: p.name, Mensaje: "debe ser una fecha AAAA-MM-DD"})
			}
			*p.to = d
		}
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		fs = append(fs, cfe.FieldError{Campo: "fechaHasta", Mensaje: "no puede ser anterior a fechaDesde"})
	}
	return from, to, web.Invalid(fs...)
}

func inPeriod(d, from, to cfe.Date) bool {
	return (from.IsZero() || !d.Before(from)) && (to.IsZero() || !d.After(to))
}

// HandleList is GET /api/v1/numerosanulados: the company's ranges annulled
// on the days fechaDesde to fechaHasta (both optional, inclusive), by type,
// serie and number.
func (rr *ReportRoutes) HandleList(w http.ResponseWriter, r *http.Request) {
	from, to, err := period(r)
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	company, err := auth.PrincipalOf(r).Company(r.URL.Query().Get("idEmpresa"))
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	out := []AnnulledRange{}
	err = rr.db.View(func(tx *bolt.Tx) error {
		return data.CompanyAnnulled(tx, company, func(a *data.AnnulledRecord) error {
			if inPeriod(a.Day(), from, to) {
				out = append(out, rangeOf(a))
			}
			return nil
		})
	})
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, out)
}

// ReportState is a day's report as GET /api/v1/reportediario lists it: the
// last report sent for the day (secEnvio) and DGI's answer (estadoDgi: AR,
// BR, DR, ER, FR; absent while it is not known), with what it counted.
type ReportState struct {
	FechaResumen     cfe.Date         `json:"fechaResumen"`
	SecEnvio         int              `json:"secEnvio"`
	EstadoDgi        string           `json:"estadoDgi,omitempty"`
	MotivosDgi       []data.DGIReason `json:"motivosDgi,omitempty"`
	IdReceptor       int64            `json:"idReceptor,omitempty"`
	FechaEnvio       *time.Time       `json:"fechaEnvio,omitempty"`
	FechaEstadoDgi   *time.Time       `json:"fechaEstadoDgi,omitempty"`
	CantidadCfe      int              `json:"cantidadCfe"`
	CantidadAnulados int              `json:"cantidadAnulados"`
	Anteriores       []EarlierState   `json:"anteriores,omitempty"`
	UltimoError      string           `json:"ultimoError,omitempty"`
}

// EarlierState is a report of the day a later secEnvio superseded.
type EarlierState struct {
	SecEnvio   int        `json:"secEnvio"`
	EstadoDgi  string     `json:"estadoDgi,omitempty"`
	IdReceptor int64      `json:"idReceptor,omitempty"`
	FechaEnvio *time.Time `json:"fechaEnvio,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func stateOf(rec *data.DailyReportRecord) ReportState {
	st := ReportState{FechaResumen: rec.Date, SecEnvio: rec.Seq, EstadoDgi: rec.State, MotivosDgi: rec.Reasons, IdReceptor: rec.IDReceptor,
		FechaEnvio: timePtr(rec.SentAt), FechaEstadoDgi: timePtr(rec.CheckedAt), CantidadCfe: rec.CFEs, CantidadAnulados: rec.Annulled,
		UltimoError: rec.LastError}
	for _, e := range rec.Earlier {
		st.Anteriores = append(st.Anteriores, EarlierState{SecEnvio: e.Seq, EstadoDgi: e.State, IdReceptor: e.IDReceptor, FechaEnvio: timePtr(e.SentAt)})
	}
	return st
}

// HandleStates is GET /api/v1/reportediario: the company's daily reports
// of the days fechaDesde to fechaHasta (both optional, inclusive), in date
// order. A day appears once its report is built (after midnight).
func (rr *ReportRoutes) HandleStates(w http.ResponseWriter, r *http.Request) {
	from, to, err := period(r)
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	company, err := auth.PrincipalOf(r).Company(r.URL.Query().Get("idEmpresa"))
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	recs, err := States(rr.db, company, from, to)
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	out := make([]ReportState, 0, len(recs))
	for _, rec := range recs {
		out = append(out, stateOf(rec))
	}
	web.WriteJSON(w, http.StatusOK, out)
}

// HandleXML is GET /api/v1/reportediario/xml?fecha=AAAA-MM-DD: the last
// signed report of the day (application/xml), as it was sent to DGI.
func (rr *ReportRoutes) HandleXML(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d, err := cfe.ParseDate(q.Get("fecha"))
	if err != nil {
		web.WriteError(rr.log, w, r, web.Invalid(cfe.FieldError{Campo: "fecha", Mensaje: "debe ser una fecha AAAA-MM-DD"}))
		return
	}
	company, err := auth.PrincipalOf(r).Company(q.Get("idEmpresa"))
	if err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	var rec *data.DailyReportRecord
	if err := rr.db.View(func(tx *bolt.Tx) error {
		rec, err = data.GetDailyReport(tx, company, d)
		return err
	}); err != nil {
		web.WriteError(rr.log, w, r, err)
		return
	}
	if rec == nil {
		web.WriteError(rr.log, w, r, data.NotFound("el reporte diario del "+d.String()))
		return
	}
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("X-Sec-Envio", strconv.Itoa(rec.Seq))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(rec.XML)
}
