package issuing

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"
	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Issued serves the issued CFEs as the service shows them (interface §4.3):
// one by id, buscar and marcar-aceptado. Visible and Select are how the
// other rooms read them.
type Issued struct {
	db  *data.DB
	now func() time.Time
	log *slog.Logger
}

// Issued CFE states as the service shows them.
const (
	stateIssued   = "emitido"
	stateAccepted = "aceptado"
)

// IssuedSummary is an issued CFE in a search result.
type IssuedSummary struct {
	ID           int64           `json:"id"`
	IdEmpresa    int64           `json:"idEmpresa"`
	UUID         string          `json:"uuid"`
	TipoCfe      int             `json:"tipoCfe"`
	Serie        string          `json:"serie"`
	Nro          int64           `json:"nro"`
	FechaEmision cfe.Date        `json:"fechaEmision"`
	FechaFirma   time.Time       `json:"fechaFirma"`
	Total        decimal.Decimal `json:"total"`
	CodSeguridad string          `json:"codSeguridad"`
	Estado       string          `json:"estado"`
	AceptadoEn   *time.Time      `json:"aceptadoEn,omitempty"`
	Origen       string          `json:"origen"`
	Anula        int64           `json:"anula,omitempty"`
	// The CFE's state at DGI, once the provider put it in an envelope:
	// DGI's codes AE, BE (rejected: the number is annulled) and CE
	// (observed) for its verdict; before it, pendiente (not yet received
	// by DGI), enviado (DGI received its envelope; verdict awaited) or
	// desconocido (sent, DGI's answer lost: DGI is asked before anything
	// is sent again). motivosDgi are DGI's codes for a BE or CE.
	EstadoDgi      string      `json:"estadoDgi,omitempty"`
	MotivosDgi     []MotivoDGI `json:"motivosDgi,omitempty"`
	FechaEstadoDgi *time.Time  `json:"fechaEstadoDgi,omitempty"`
}

// MotivoDGI is one of DGI's codes with its text (Motivo of ACKCFE).
type MotivoDGI struct {
	Codigo  string `json:"codigo"`
	Glosa   string `json:"glosa,omitempty"`
	Detalle string `json:"detalle,omitempty"`
}

// DGI's codes of a verdict on a CFE (ACKCFE's Estado).
const (
	DGICodeAccepted = "AE"
	DGICodeRejected = "BE"
	DGICodeObserved = "CE"
)

// DGICode is how cfeemitido shows a DGI state: DGI's code for a verdict,
// the provider's word before it.
func DGICode(state string) string {
	switch state {
	case cfe.DGIAccepted:
		return DGICodeAccepted
	case cfe.DGIRejected:
		return DGICodeRejected
	case cfe.DGIObserved:
		return DGICodeObserved
	case cfe.DGIPending, cfe.DGIInEnvelope:
		return cfe.DGIPending
	}
	return state // enviado, desconocido
}

// withDGI adds CFE id's DGI state to sum.
func withDGI(tx *bolt.Tx, sum *IssuedSummary) error {
	r, err := data.GetDGI(tx, sum.ID)
	if err != nil || r == nil {
		return err
	}
	sum.EstadoDgi = DGICode(r.State)
	at := r.UpdatedAt.UTC()
	sum.FechaEstadoDgi = &at
	for _, m := range r.Reasons {
		sum.MotivosDgi = append(sum.MotivosDgi, MotivoDGI{Codigo: m.Codigo, Glosa: m.Glosa, Detalle: m.Detalle})
	}
	return nil
}

// IssuedDetail is GET /api/v1/cfeemitido/{id}: the summary, the CAE, the QR
// and the signed XML.
type IssuedDetail struct {
	IssuedSummary
	IdCAE          string   `json:"idCAE"`
	NroInicalCAE   int64    `json:"NroInicalCAE"`
	NroFinalCAE    int64    `json:"NroFinalCAE"`
	VencimientoCAE cfe.Date `json:"vencimientoCAE"`
	DatosQR        string   `json:"datosQR"`
	Adenda         string   `json:"adenda,omitempty"`
	XmlFirmado     string   `json:"xmlFirmado"`
}

// SummaryOf is c as buscar lists it.
func SummaryOf(c *data.CFERecord) IssuedSummary {
	state := stateIssued
	if c.Accepted != nil {
		state = stateAccepted
	}
	return IssuedSummary{ID: c.ID, IdEmpresa: c.Company, UUID: c.UUID, TipoCfe: int(c.Type), Serie: c.Serie, Nro: c.Nro,
		FechaEmision: c.FchEmis, FechaFirma: c.TmstFirma, Total: c.Total, CodSeguridad: c.CodSeguridad,
		Estado: state, AceptadoEn: c.Accepted, Origen: c.Origin, Anula: c.Cancels}
}

func detailOf(c *data.CFERecord) IssuedDetail {
	return IssuedDetail{IssuedSummary: SummaryOf(c), IdCAE: c.CAE.CAEID, NroInicalCAE: c.CAE.DNro, NroFinalCAE: c.CAE.HNro,
		VencimientoCAE: c.CAE.FecVenc, DatosQR: c.DatosQR, Adenda: c.Adenda, XmlFirmado: string(c.XML)}
}

// Visible reads CFE id for the caller p: ENOTFOUND when it does not exist,
// EFORBIDDEN (ErrOtherCFE) when it belongs to a company p cannot act for.
func (x *Issued) Visible(p *auth.Principal, id int64) (*data.CFERecord, error) {
	return visibleCFE(x.db, p, id)
}

func pathID(r *http.Request) int64 {
	id, _ := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	return id
}

// HandleGet is GET /api/v1/cfeemitido/{id}.
func (x *Issued) HandleGet(w http.ResponseWriter, r *http.Request) {
	rec, err := visibleCFE(x.db, auth.PrincipalOf(r), pathID(r))
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	d := detailOf(rec)
	if err := x.db.View(func(tx *bolt.Tx) error { return withDGI(tx, &d.IssuedSummary) }); err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, d)
}

// HandleMarkAccepted is POST /api/v1/cfeemitido/{id}/marcar-aceptado: it marks a CFE as accepted by hand; marking it again keeps
// the first time. The mark is the service's own (estado, aceptadoEn): it
// never changes the CFE's state at DGI (estadoDgi), which only DGI's
// verdict sets, and a CFE DGI rejected (BE) cannot be marked accepted
// (409): its number is annulled.
func (x *Issued) HandleMarkAccepted(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalOf(r)
	var sum IssuedSummary
	err := x.db.Update(func(tx *bolt.Tx) error {
		rec, err := data.GetCFE(tx, pathID(r))
		if err != nil {
			return err
		}
		if !p.CanSee(rec.Company) {
			return ErrOtherCFE
		}
		if d, err := data.GetDGI(tx, rec.ID); err != nil {
			return err
		} else if d != nil && d.State == cfe.DGIRejected {
			return &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf(
				"DGI rechazó el CFE %d (BE): su número quedó anulado y no puede marcarse como aceptado; emita un CFE nuevo", rec.ID)}
		}
		if rec.Accepted == nil {
			now := x.now().UTC()
			rec.Accepted = &now
		}
		sum = SummaryOf(rec)
		if err := withDGI(tx, &sum); err != nil {
			return err
		}
		return data.PutCFE(tx, rec)
	})
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, sum)
}

// Select calls fn for each of the filter's CFEs in id order, inside one
// read transaction.
func (x *Issued) Select(f Filter, fn func(*data.CFERecord) error) error {
	return x.db.View(func(tx *bolt.Tx) error {
		return data.CompanyCFEs(tx, f.Company, func(c *data.CFERecord) error {
			if f.Match(c) {
				return fn(c)
			}
			return nil
		})
	})
}

// Match reports whether f selects c: its company, its type, and its signing
// day in Montevideo within the dates.
func (f Filter) Match(c *data.CFERecord) bool {
	day := cfe.DateOf(c.TmstFirma.In(cfe.Montevideo))
	return c.Company == f.Company && (f.Type == 0 || c.Type == f.Type) &&
		(f.From.IsZero() || !day.Before(f.From)) &&
		(f.To.IsZero() || !day.After(f.To))
}

// HandleSearch is GET /api/v1/cfeemitido/buscar.
func (x *Issued) HandleSearch(w http.ResponseWriter, r *http.Request) {
	f, err := ParseSearch(r, auth.PrincipalOf(r))
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	out := []IssuedSummary{}
	err = x.db.View(func(tx *bolt.Tx) error {
		return data.CompanyCFEs(tx, f.Company, func(c *data.CFERecord) error {
			if !f.Match(c) {
				return nil
			}
			sum := SummaryOf(c)
			if err := withDGI(tx, &sum); err != nil {
				return err
			}
			out = append(out, sum)
			return nil
		})
	})
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, out)
}
