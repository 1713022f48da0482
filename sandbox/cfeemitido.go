package sandbox

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"
	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func (s *Server) registerIssuedRoutes(r *mux.Router) {
	auth := func(h http.HandlerFunc) http.HandlerFunc { return s.authenticated(authAny, s.writeError, h) }
	r.HandleFunc("/api/v1/cfeemitido/buscar", auth(s.handleSearch)).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/cfeemitido/{id:[0-9]+}", auth(s.handleGetIssued)).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/cfeemitido/{id:[0-9]+}/marcar-aceptado", auth(s.handleMarkAccepted)).Methods(http.MethodPost)
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

func summaryOf(c *CFERecord) IssuedSummary {
	state := stateIssued
	if c.Accepted != nil {
		state = stateAccepted
	}
	return IssuedSummary{ID: c.ID, IdEmpresa: c.Company, UUID: c.UUID, TipoCfe: int(c.Type), Serie: c.Serie, Nro: c.Nro,
		FechaEmision: c.FchEmis, FechaFirma: c.TmstFirma, Total: c.Total, CodSeguridad: c.CodSeguridad,
		Estado: state, AceptadoEn: c.Accepted, Origen: c.Origin, Anula: c.Cancels}
}

func detailOf(c *CFERecord) IssuedDetail {
	return IssuedDetail{IssuedSummary: summaryOf(c), IdCAE: c.CAE.CAEID, NroInicalCAE: c.CAE.DNro, NroFinalCAE: c.CAE.HNro,
		VencimientoCAE: c.CAE.FecVenc, DatosQR: c.DatosQR, Adenda: c.Adenda, XmlFirmado: string(c.XML)}
}

// canSee reports whether the caller may act on company's CFEs.
func (p *principal) canSee(company int64) bool {
	if p.key != nil {
		return p.key.Company == company
	}
	return p.user.belongsTo(company)
}

var errOtherCFE = &cfe.Error{Code: cfe.EFORBIDDEN, Message: "no tiene acceso a este CFE"}

// visibleCFE reads CFE id for the caller: ENOTFOUND when it does not exist,
// EFORBIDDEN when it belongs to a company the caller cannot act for.
func (s *Server) visibleCFE(p *principal, id int64) (*CFERecord, error) {
	var rec *CFERecord
	err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		rec, err = getCFE(tx, id)
		return err
	})
	if err == nil && !p.canSee(rec.Company) {
		return nil, errOtherCFE
	}
	return rec, err
}

func pathID(r *http.Request) int64 {
	id, _ := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	return id
}

func (s *Server) handleGetIssued(w http.ResponseWriter, r *http.Request) {
	rec, err := s.visibleCFE(principalOf(r), pathID(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, detailOf(rec))
}

// handleGetComprobante is GET /api/v1/comprobante/getByIdCfeEmitido: the
// §2.3 answer of an issued CFE.
func (s *Server) handleGetComprobante(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("idCfeEmitido"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, invalid(cfe.FieldError{Campo: "idCfeEmitido", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	rec, err := s.visibleCFE(principalOf(r), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, comprobanteResponse(rec))
}

// handleMarkAccepted marks a CFE as accepted by hand; marking it again keeps
// the first time.
func (s *Server) handleMarkAccepted(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	var rec *CFERecord
	err := s.db.update(func(tx *bolt.Tx) error {
		var err error
		if rec, err = getCFE(tx, pathID(r)); err != nil {
			return err
		}
		if !p.canSee(rec.Company) {
			return errOtherCFE
		}
		if rec.Accepted == nil {
			now := s.now().UTC()
			rec.Accepted = &now
		}
		return putJSON(tx, bucketCFEs, idKey(rec.ID), rec)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, summaryOf(rec))
}

// searchFilter is the query of GET /api/v1/cfeemitido/buscar.
type searchFilter struct {
	company      int64
	tipo         cfe.Type // 0: every type
	desde, hasta cfe.Date // signing dates in Montevideo, inclusive; zero: open
}

// parseSearch reads buscar's query: idEmpresa, tipoFiltro (a CFE type code;
// empty or 0 for all) and fechaFirmaDesde/Hasta (YYYY-MM-DD, both optional,
// inclusive).
func parseSearch(r *http.Request, p *principal) (searchFilter, error) {
	q := r.URL.Query()
	return buildFilter(p, q.Get("idEmpresa"), q.Get("tipoFiltro"), q.Get("fechaFirmaDesde"), q.Get("fechaFirmaHasta"))
}

// CFEFilter is buscar's selection as the JSON body (or part of the body) of
// the POST endpoints that act on many CFEs: the same field names and rules as
// buscar's query parameters.
type CFEFilter struct {
	IdEmpresa       int64  `json:"idEmpresa,omitempty"`
	TipoFiltro      int    `json:"tipoFiltro,omitempty"`
	FechaFirmaDesde string `json:"fechaFirmaDesde,omitempty"`
	FechaFirmaHasta string `json:"fechaFirmaHasta,omitempty"`
}

// resolve checks the filter's fields and the caller's right to the company,
// with buscar's errors.
func (f CFEFilter) resolve(p *principal) (searchFilter, error) {
	tipo := ""
	if f.TipoFiltro != 0 {
		tipo = strconv.Itoa(f.TipoFiltro)
	}
	return buildFilter(p, idString(f.IdEmpresa), tipo, f.FechaFirmaDesde, f.FechaFirmaHasta)
}

func buildFilter(p *principal, idEmpresa, tipoFiltro, desde, hasta string) (searchFilter, error) {
	var f searchFilter
	var fields []cfe.FieldError
	if t := tipoFiltro; t != "" && t != "0" {
		n, err := strconv.Atoi(t)
		if _, known := cfe.Type(n).Info(); err != nil || !known {
			fields = append(fields, cfe.FieldError{Campo: "tipoFiltro", Mensaje: "debe ser un código de tipo de CFE (101, 111, ...) o 0 para todos"})
		}
		f.tipo = cfe.Type(n)
	}
	for _, d := range []struct {
		name, value string
		to          *cfe.Date
	}{{"fechaFirmaDesde", desde, &f.desde}, {"fechaFirmaHasta", hasta, &f.hasta}} {
		if d.value != "" {
			parsed, err := cfe.ParseDate(d.value)
			if err != nil {
				fields = append(fields, cfe.FieldError{Campo: d.name, Mensaje: "debe ser una fecha AAAA-MM-DD"})
			}
			*d.to = parsed
		}
	}
	if !f.desde.IsZero() && !f.hasta.IsZero() && f.hasta.Before(f.desde) {
		fields = append(fields, cfe.FieldError{Campo: "fechaFirmaHasta", Mensaje: "no puede ser anterior a fechaFirmaDesde"})
	}
	if err := invalid(fields...); err != nil {
		return f, err
	}
	var err error
	f.company, err = p.company(idEmpresa)
	return f, err
}

// selectCFEs calls fn for each of the filter's CFEs in id order, inside one
// read transaction.
func (s *Server) selectCFEs(f searchFilter, fn func(*CFERecord) error) error {
	return s.db.view(func(tx *bolt.Tx) error {
		return companyCFEs(tx, f.company, func(c *CFERecord) error {
			if f.match(c) {
				return fn(c)
			}
			return nil
		})
	})
}

func (f searchFilter) match(c *CFERecord) bool {
	day := cfe.DateOf(c.TmstFirma.In(cfe.Montevideo))
	return (f.tipo == 0 || c.Type == f.tipo) &&
		(f.desde.IsZero() || !day.Before(f.desde)) &&
		(f.hasta.IsZero() || !day.After(f.hasta))
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	f, err := parseSearch(r, principalOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := []IssuedSummary{}
	err = s.selectCFEs(f, func(c *CFERecord) error {
		out = append(out, summaryOf(c))
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
