package dgi

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
	"github.com/cfe-agent/cfe-agent/signer"
)

// CFEs are the issued CFEs an envelope carries (issuing.Issued).
type CFEs interface {
	// Visible reads CFE id for p: ENOTFOUND when it does not exist,
	// EFORBIDDEN when it is another company's.
	Visible(p *auth.Principal, id int64) (*data.CFERecord, error)
	// Select calls fn for each CFE f selects, in id order.
	Select(f issuing.Filter, fn func(*data.CFERecord) error) error
}

// Envelopes serves DGI's envelopes ("sobres", Formato del Sobre v05) of
// issued CFEs, numbering each company's envelopes.
type Envelopes struct {
	db   *data.DB
	cfes CFEs
	now  func() time.Time
	log  *slog.Logger
}

// NewEnvelopes builds the envelope routes.
func NewEnvelopes(db *data.DB, cfes CFEs, now func() time.Time, log *slog.Logger) *Envelopes {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Envelopes{db: db, cfes: cfes, now: now, log: log}
}

// DGI's envelopes of issued CFEs: POST /api/v1/cfeemitido/generarSobreAutoridad
// (EnvioCFE, to DGI) and POST /api/v1/cfeemitido/generarSobreReceptor
// (EnvioCFE_entreEmpresas, to an electronic receiver). The envelope is built
// by cfe and signer; this file selects the CFEs and numbers the envelopes.

// bucketEnvelopeIDs holds each company's last envelope number (Idemisor):
// company id → decimal number. It is created on first use.
var bucketEnvelopeIDs = []byte("envelopeids")

// EnvelopeRequest is the body of both envelope endpoints: the CFEs by id
// (ids) or by buscar's filter (CFEFilter's fields), not both. RucReceptor is
// the receiving company (generarSobreReceptor: required; only CFEs addressed
// to that RUC; generarSobreAutoridad: DGI's RUC when sent). IdEmisor is the
// envelope's number; when absent the company's next one is taken. Ids sent
// as an empty list is refused: it names no CFE (JSON null is "not sent").
type EnvelopeRequest struct {
	issuing.CFEFilter
	Ids         []int64 `json:"ids,omitempty"`
	RucReceptor string  `json:"rucReceptor,omitempty"`
	IdEmisor    *int64  `json:"idEmisor,omitempty"`
}

// HandleAuthority is POST /api/v1/cfeemitido/generarSobreAutoridad: the
// EnvioCFE of the CFEs asked for, to DGI.
func (e *Envelopes) HandleAuthority(w http.ResponseWriter, r *http.Request) {
	e.handle(w, r, cfe.EnvelopeDGI)
}

// HandleReceiver is POST /api/v1/cfeemitido/generarSobreReceptor: the
// EnvioCFE_entreEmpresas of the CFEs asked for, to an electronic receiver.
func (e *Envelopes) HandleReceiver(w http.ResponseWriter, r *http.Request) {
	e.handle(w, r, cfe.EnvelopeReceiver)
}

func (e *Envelopes) handle(w http.ResponseWriter, r *http.Request, kind cfe.EnvelopeKind) {
	var req EnvelopeRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(e.log, w, r, err)
		return
	}
	company, recs, err := e.envelopeCFEs(auth.PrincipalOf(r), kind, &req)
	if err != nil {
		web.WriteError(e.log, w, r, err)
		return
	}
	b, env, err := e.make(company, kind, &req, recs)
	if err != nil {
		web.WriteError(e.log, w, r, err)
		return
	}
	c := env.Caratula
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	// DGI's file name: Sob_RUC_Fecha de creación (AAAAMMDD)_Id emisor.xml.
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="Sob_%s_%s_%d.xml"`,
		c.RUCEmisor, c.Fecha.In(cfe.Montevideo).Format("20060102"), c.IdEmisor))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b) // a failure means the client went away
}

// checkEnvelopeRequest checks the request's own fields.
func checkEnvelopeRequest(kind cfe.EnvelopeKind, req *EnvelopeRequest) error {
	var fs []cfe.FieldError
	add := func(campo, msg string) { fs = append(fs, cfe.FieldError{Campo: campo, Mensaje: msg}) }
	byFilter := req.TipoFiltro != 0 || req.FechaFirmaDesde != "" || req.FechaFirmaHasta != ""
	if req.Ids != nil && len(req.Ids) == 0 {
		// "ids": [] names no CFE: read as "no ids", it would select every
		// CFE of the company through the empty filter.
		add("ids", "indique al menos un CFE; para elegirlos por el filtro, no envíe ids")
	}
	if len(req.Ids) > 0 && byFilter {
		add("ids", "indique los CFE por ids o por el filtro (tipoFiltro, fechaFirmaDesde, fechaFirmaHasta), no ambos")
	}
	if len(req.Ids) > cfe.MaxEnvelopeCFEs {
		add("ids", fmt.Sprintf("un sobre admite hasta %d CFE (DGI, Formato del Sobre) y se indicaron %d", cfe.MaxEnvelopeCFEs, len(req.Ids)))
	}
	seen := map[int64]bool{}
	for i, id := range req.Ids {
		switch {
		case id <= 0:
			add(fmt.Sprintf("ids[%d]", i), "debe ser un número mayor que cero")
		case seen[id]:
			add(fmt.Sprintf("ids[%d]", i), fmt.Sprintf("el CFE %d está repetido", id))
		}
		seen[id] = true
	}
	switch {
	case kind == cfe.EnvelopeReceiver && req.RucReceptor == "":
		add("rucReceptor", "es obligatorio: el RUC de la empresa que recibe los CFE")
	case kind == cfe.EnvelopeReceiver && !cfe.ValidRUC(req.RucReceptor):
		add("rucReceptor", fmt.Sprintf("%q no es un RUC válido", req.RucReceptor))
	case kind == cfe.EnvelopeDGI && req.RucReceptor != "" && req.RucReceptor != cfe.RUCDGI:
		add("rucReceptor", "el sobre para DGI va dirigido al RUC de DGI "+cfe.RUCDGI)
	}
	if req.IdEmisor != nil && (*req.IdEmisor < 0 || *req.IdEmisor > cfe.MaxEnvelopeID) {
		add("idEmisor", fmt.Sprintf("debe ser un número de 0 a %d", int64(cfe.MaxEnvelopeID)))
	}
	return web.Invalid(fs...)
}

// envelopeCFEs returns the company and the CFEs the request selects, after
// every check of the request, the caller's rights and DGI's count.
func (e *Envelopes) envelopeCFEs(p *auth.Principal, kind cfe.EnvelopeKind, req *EnvelopeRequest) (int64, []*data.CFERecord, error) {
	if err := checkEnvelopeRequest(kind, req); err != nil {
		return 0, nil, err
	}
	if len(req.Ids) > 0 {
		return e.byIDs(p, req)
	}
	f, err := req.Resolve(p)
	if err != nil {
		return 0, nil, err
	}
	var recs []*data.CFERecord
	count := 0
	err = e.cfes.Select(f, func(c *data.CFERecord) error {
		if kind == cfe.EnvelopeReceiver {
			if h, err := cfe.ReadCFEHead(c.XML); err != nil || !h.AddressedTo(req.RucReceptor) {
				return nil
			}
		}
		count++
		if count <= cfe.MaxEnvelopeCFEs {
			recs = append(recs, c)
		}
		return nil
	})
	switch {
	case err != nil:
		return 0, nil, err
	case count == 0 && kind == cfe.EnvelopeReceiver:
		return 0, nil, web.Invalid(cfe.FieldError{Campo: "rucReceptor", Mensaje: "ningún CFE del filtro está dirigido al RUC " + req.RucReceptor})
	case count == 0:
		return 0, nil, web.Invalid(cfe.FieldError{Campo: "filtro", Mensaje: "ningún CFE coincide con el filtro"})
	case count > cfe.MaxEnvelopeCFEs:
		return 0, nil, web.Invalid(cfe.FieldError{Campo: "filtro", Mensaje: fmt.Sprintf(
			"el filtro selecciona %d CFE y un sobre admite hasta %d (DGI, Formato del Sobre): acote las fechas o el tipo", count, cfe.MaxEnvelopeCFEs)})
	}
	return f.Company, recs, nil
}

// byIDs reads the CFEs named by id: 404 for a missing one, 403 for
// another company's, and all of one company (idEmpresa's when sent).
func (e *Envelopes) byIDs(p *auth.Principal, req *EnvelopeRequest) (int64, []*data.CFERecord, error) {
	var company int64
	if req.IdEmpresa != 0 {
		var err error
		if company, err = p.Company(web.IDString(req.IdEmpresa)); err != nil {
			return 0, nil, err
		}
	}
	recs := make([]*data.CFERecord, 0, len(req.Ids))
	for i, id := range req.Ids {
		rec, err := e.cfes.Visible(p, id)
		if err != nil {
			return 0, nil, err
		}
		if company == 0 {
			company = rec.Company
		}
		if rec.Company != company {
			return 0, nil, web.Invalid(cfe.FieldError{Campo: fmt.Sprintf("ids[%d]", i),
				Mensaje: fmt.Sprintf("el CFE %d es de otra empresa: un sobre lleva los CFE de un solo emisor", id)})
		}
		recs = append(recs, rec)
	}
	return company, recs, nil
}

// make verifies the CFEs and writes the envelope. The company's next
// envelope number is taken in the same transaction as the last check, so a
// refused envelope uses no number.
func (e *Envelopes) make(company int64, kind cfe.EnvelopeKind, req *EnvelopeRequest, recs []*data.CFERecord) ([]byte, *cfe.Envelope, error) {
	rut := req.RucReceptor
	if kind == cfe.EnvelopeDGI {
		rut = cfe.RUCDGI
	}
	sreq := signer.EnvelopeRequest{Kind: kind, RutReceptor: rut, Fecha: e.now()}
	for _, c := range recs {
		ec := cfe.EnvelopeCFE{XML: c.XML}
		if kind == cfe.EnvelopeReceiver {
			ec.Adenda = c.Adenda
		}
		sreq.CFEs = append(sreq.CFEs, ec)
	}
	env, err := signer.PrepareEnvelope(sreq)
	if err != nil {
		return nil, nil, err
	}
	var out []byte
	err = e.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketEnvelopeIDs)
		if err != nil {
			return err
		}
		key := data.IDKey(company)
		last, _ := strconv.ParseInt(string(b.Get(key)), 10, 64)
		next := last + 1
		if req.IdEmisor != nil {
			next = *req.IdEmisor
		} else if next > cfe.MaxEnvelopeID {
			next = 1 // Idemisor has 10 digits: the numbering starts again
		}
		env.Caratula.IdEmisor = next
		if out, err = cfe.BuildEnvelope(env); err != nil {
			return err
		}
		if req.IdEmisor != nil {
			return nil
		}
		return b.Put(key, []byte(strconv.FormatInt(next, 10)))
	})
	return out, env, err
}
