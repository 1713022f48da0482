package sandbox

import (
	"encoding/json"
	"net/http"

	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
)

// PDFRequest is the body of POST /api/v1/cfeemitido/pdf (interface §4.3.1).
// IdEmpresa names the company for a JWT user of several companies.
type PDFRequest struct {
	UUID           string          `json:"uuid"`
	TipoCfe        int             `json:"tipo_cfe"`
	Serie          string          `json:"serie"`
	Numero         int64           `json:"numero"`
	Variant        string          `json:"variant"`
	IdEmpresa      int64           `json:"idEmpresa,omitempty"`
	CodComercio    json.RawMessage `json:"cod_comercio,omitempty"`    // accepted and ignored
	CodTerminal    json.RawMessage `json:"cod_terminal,omitempty"`    // accepted and ignored
	Impresora      json.RawMessage `json:"impresora,omitempty"`       // accepted and ignored
	FallbackCopies json.RawMessage `json:"fallback_copies,omitempty"` // accepted and ignored
}

// TemplateConfig is a company's custom print template (pdf.TemplateConfig
// without a logo), named by variant or FormatoRepImpresa.
type TemplateConfig struct {
	Nombre       string   `json:"nombre"`
	Base         string   `json:"base"` // Estandar, Rollo or Rollo58
	Leyendas     []string `json:"leyendas,omitempty"`
	TamanoFuente float64  `json:"tamanoFuente,omitempty"`
	WebURL       string   `json:"webURL,omitempty"`
}

// catalog returns the print templates of a company: the built-in ones and
// its own. EINVALID names a bad template.
func catalog(templates []TemplateConfig) (*pdf.Catalog, error) {
	cfgs := make([]pdf.TemplateConfig, 0, len(templates))
	for _, t := range templates {
		cfgs = append(cfgs, pdf.TemplateConfig{Name: t.Nombre, Base: t.Base, Legends: t.Leyendas, FontSize: t.TamanoFuente, WebURL: t.WebURL})
	}
	return pdf.NewCatalog(cfgs)
}

func (s *Server) registerPDFRoutes(r *mux.Router) {
	r.HandleFunc("/api/v1/cfeemitido/pdf", s.authenticated(authAnyPDFKey, s.writePDFError, s.handlePDF)).Methods(http.MethodPost)
}

var (
	errPDFIdentity = &cfe.Error{Code: cfe.EINVALID, Message: "identifique el CFE con uuid, o con tipo_cfe, serie y numero"}
	errPDFNotFound = &cfe.Error{Code: cfe.ENOTFOUND, Message: "CFE no encontrado"}
	errPDFRender   = &cfe.Error{Code: cfe.EINTERNAL, Message: "no se pudo generar el PDF"}
)

// handlePDF renders the printed representation of an issued CFE of the
// caller's company, with the watermark outside production. Errors answer
// {ok:false, error}: 400 identification missing or idEmpresa unresolved or
// unknown variant, 403 idEmpresa not the caller's or the uuid another
// company's, 404 CFE not found (a folio names a CFE of the caller's company
// only), 500 rendering failed.
func (s *Server) handlePDF(w http.ResponseWriter, r *http.Request) {
	var req PDFRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writePDFError(w, r, err)
		return
	}
	if req.UUID == "" && (req.TipoCfe == 0 || req.Serie == "" || req.Numero == 0) {
		s.writePDFError(w, r, errPDFIdentity)
		return
	}
	companyID, err := principalOf(r).company(idString(req.IdEmpresa))
	if err != nil {
		s.writePDFError(w, r, err)
		return
	}
	var rec *CFERecord
	var company *Company
	err = s.db.view(func(tx *bolt.Tx) error {
		var err error
		if company, err = getCompany(tx, companyID); err != nil {
			return err
		}
		find := func(company int64) (*CFERecord, error) {
			if req.UUID != "" {
				return cfeByUUID(tx, company, req.UUID)
			}
			return cfeByFolio(tx, company, cfe.Type(req.TipoCfe), req.Serie, req.Numero)
		}
		rec, err = find(companyID)
		switch {
		case err != nil || rec != nil:
		case req.UUID != "":
			// A uuid names one receipt of the whole service: when another
			// company has it, the caller lacks permission over that CFE.
			err = foreignCFE(tx, principalOf(r), find)
		default:
			// A folio is only unique within a company (every company
			// numbers its own ranges): the caller's company has no such CFE.
			err = errPDFNotFound
		}
		return err
	})
	if err != nil {
		s.writePDFError(w, r, err)
		return
	}
	body, err := s.render(rec, company, req.Variant)
	if err != nil {
		s.writePDFError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // a failure means the client went away
}

// foreignCFE is the error for a CFE the caller's company does not have:
// EFORBIDDEN when a company the caller cannot act for has it (interface §7:
// no permission over the company or the CFE), else ENOTFOUND.
func foreignCFE(tx *bolt.Tx, p *principal, find func(company int64) (*CFERecord, error)) error {
	c := tx.Bucket(bucketCompanies).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		company := keyID(k)
		if p.canSee(company) {
			continue
		}
		if rec, err := find(company); err != nil || rec != nil {
			return firstErr(err, errOtherCFE)
		}
	}
	return errPDFNotFound
}

// render makes the PDF of rec with the variant asked for, else the
// company's FormatoRepImpresa, and the company's footer data.
func (s *Server) render(rec *CFERecord, company *Company, variant string) ([]byte, error) {
	cat, err := catalog(company.Templates)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	if variant == "" {
		variant = company.FormatoRepImpresa
	}
	tmpl, err := cat.Template(variant)
	if err != nil {
		return nil, invalid(cfe.FieldError{Campo: "variant", Mensaje: cfe.ErrorMessage(err)})
	}
	out, err := pdf.Render(rec.XML, pdf.Options{Template: tmpl, Production: s.cfg.Environment == EnvProduccion, Adenda: rec.Adenda,
		Footer: company.footer()})
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	return out, nil
}

// footer is the company's data for the printed footer. A company without
// any (stored before the sandbox kept it, or seeded without it) prints
// neither "Fecha emisor" nor "Res.", sends e-Tickets to www.dgi.gub.uy and
// prints the IVA constancia where the CFE allows it.
func (c *Company) footer() pdf.Footer {
	return pdf.Footer{FechaEmisor: c.FechaEmisor, Resolucion: c.Resolucion, WebURL: c.WebURL, OmitIVAConstancia: c.OmitIVAConstancia}
}
