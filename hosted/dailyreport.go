package hosted

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Provider mode's daily report (docs/hosted.md, "The daily report"): the
// hosted service sends one report per RUC and day to DGI, built from every
// till's CFEs and annulled numbers. The agent delivers its annulled numbers
// (POST /api/v1/numerosanulados, AnnulledDeliverer) and reads the reports'
// states back (GET /api/v1/reportediario, DailyReports).

// AnnulledNumbers is a range of numbers the agent annulled, as
// POST /api/v1/numerosanulados takes it.
type AnnulledNumbers struct {
	TipoCfe        int    `json:"tipoCfe"`
	Serie          string `json:"serie"`
	Desde          int64  `json:"desde"`
	Hasta          int64  `json:"hasta"`
	Motivo         string `json:"motivo"`
	Detalle        string `json:"detalle,omitempty"`
	FechaAnulacion string `json:"fechaAnulacion"` // RFC 3339
	// FechaResumen is the day whose report counts the numbers, when it is
	// not FechaAnulacion's (AAAA-MM-DD).
	FechaResumen string `json:"fechaResumen,omitempty"`
}

// AnnulledRecorded is the service's answer: the range as it recorded it,
// and whether this request recorded it (false: it already had it).
type AnnulledRecorded struct {
	TipoCfe        int       `json:"tipoCfe"`
	Serie          string    `json:"serie"`
	Desde          int64     `json:"desde"`
	Hasta          int64     `json:"hasta"`
	Motivo         string    `json:"motivo"`
	FechaAnulacion time.Time `json:"fechaAnulacion"`
	FechaResumen   cfe.Date  `json:"fechaResumen"`
	Registrado     bool      `json:"registrado"`
}

// RegisterAnnulled delivers a range of annulled numbers. The service keeps
// the same range once, so the request is repeated on failures that may be
// transient.
//
// Errors: EINVALID when the service refuses the range's fields; ECONFLICT
// when it overlaps another range or an issued CFE at the service (the
// message names which); EUNAUTHORIZED / EFORBIDDEN for the credential;
// EUNAVAILABLE when the service is down or limiting (see RetryAfter).
func (c *Client) RegisterAnnulled(ctx context.Context, n AnnulledNumbers) (*AnnulledRecorded, error) {
	if c.Auth() == AuthNone {
		return nil, errNoCredentials
	}
	req, err := jsonRequest("hosted.RegisterAnnulled", http.MethodPost, "/api/v1/numerosanulados", n, true)
	if err != nil {
		return nil, err
	}
	var out AnnulledRecorded
	return &out, c.do(ctx, req, &out)
}

// reportStateWire is a day's report as GET /api/v1/reportediario lists it.
type reportStateWire struct {
	FechaResumen   cfe.Date    `json:"fechaResumen"`
	SecEnvio       int         `json:"secEnvio"`
	EstadoDgi      string      `json:"estadoDgi"`
	MotivosDgi     []MotivoDGI `json:"motivosDgi"`
	IdReceptor     int64       `json:"idReceptor"`
	FechaEnvio     *time.Time  `json:"fechaEnvio"`
	FechaEstadoDgi *time.Time  `json:"fechaEstadoDgi"`
}

// DailyReports lists the states of the company's daily reports of the days
// desde to hasta (zero bounds open), in date order: the last report sent
// for each day and DGI's answer to it.
//
// Errors: EINVALID; EFORBIDDEN; EUNAUTHORIZED; EUNAVAILABLE.
func (c *Client) DailyReports(ctx context.Context, desde, hasta cfe.Date) ([]cfe.DailyReportState, error) {
	if c.Auth() == AuthNone {
		return nil, errNoCredentials
	}
	q := url.Values{}
	if !desde.IsZero() {
		q.Set("fechaDesde", desde.String())
	}
	if !hasta.IsZero() {
		q.Set("fechaHasta", hasta.String())
	}
	var list []reportStateWire
	if err := c.do(ctx, &request{op: "hosted.DailyReports", method: http.MethodGet, path: "/api/v1/reportediario", query: q, retry: true}, &list); err != nil {
		return nil, err
	}
	out := make([]cfe.DailyReportState, 0, len(list))
	for _, w := range list {
		st := cfe.DailyReportState{Date: w.FechaResumen, Seq: w.SecEnvio, State: w.EstadoDgi, ReceiverID: w.IdReceptor}
		for _, m := range w.MotivosDgi {
			st.Reasons = append(st.Reasons, cfe.DGIReason{Codigo: m.Codigo, Glosa: m.Glosa, Detalle: m.Detalle})
		}
		if w.FechaEnvio != nil {
			st.SentAt = *w.FechaEnvio
		}
		if w.FechaEstadoDgi != nil {
			st.CheckedAt = *w.FechaEstadoDgi
		}
		out = append(out, st)
	}
	return out, nil
}
