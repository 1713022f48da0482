package issuing

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Printer serves printed representations (interface §4.3, §4.3.1, §4.4): the
// PDF of an issued CFE by uuid or folio and by id, and previews of what an
// emission would sign. Render is how the other rooms print a CFE.
type Printer struct {
	db         *data.DB
	now        func() time.Time
	log        *slog.Logger
	production bool // no test watermark
	previews   previewStore
}

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

// Catalog returns the print templates of a company: the built-in ones and
// its own. EINVALID names a bad template.
func Catalog(templates []data.TemplateConfig) (*pdf.Catalog, error) {
	cfgs := make([]pdf.TemplateConfig, 0, len(templates))
	for _, t := range templates {
		cfgs = append(cfgs, pdf.TemplateConfig{Name: t.Nombre, Base: t.Base, Legends: t.Leyendas, FontSize: t.TamanoFuente, WebURL: t.WebURL})
	}
	return pdf.NewCatalog(cfgs)
}

var (
	errPDFIdentity = &cfe.Error{Code: cfe.EINVALID, Message: "identifique el CFE con uuid, o con tipo_cfe, serie y numero"}
	errPDFNotFound = &cfe.Error{Code: cfe.ENOTFOUND, Message: "CFE no encontrado"}
	errPDFRender   = &cfe.Error{Code: cfe.EINTERNAL, Message: "no se pudo generar el PDF"}
)

// HandlePDF is POST /api/v1/cfeemitido/pdf (interface §4.3.1): it renders the printed representation of an issued CFE of the
// caller's company, with the watermark outside production. Errors answer
// {ok:false, error}: 400 identification missing or idEmpresa unresolved or
// unknown variant, 403 idEmpresa not the caller's or the uuid another
// company's, 404 CFE not found (a folio names a CFE of the caller's company
// only), 500 rendering failed.
func (pr *Printer) HandlePDF(w http.ResponseWriter, r *http.Request) {
	var req PDFRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WritePDFError(pr.log, w, r, err)
		return
	}
	if req.UUID == "" && (req.TipoCfe == 0 || req.Serie == "" || req.Numero == 0) {
		web.WritePDFError(pr.log, w, r, errPDFIdentity)
		return
	}
	companyID, err := auth.PrincipalOf(r).Company(web.IDString(req.IdEmpresa))
	if err != nil {
		web.WritePDFError(pr.log, w, r, err)
		return
	}
	var rec *data.CFERecord
	var company *data.Company
	err = pr.db.View(func(tx *bolt.Tx) error {
		var err error
		if company, err = data.GetCompany(tx, companyID); err != nil {
			return err
		}
		find := func(company int64) (*data.CFERecord, error) {
			if req.UUID != "" {
				return data.CFEByUUID(tx, company, req.UUID)
			}
			return data.CFEByFolio(tx, company, cfe.Type(req.TipoCfe), req.Serie, req.Numero)
		}
		rec, err = find(companyID)
		switch {
		case err != nil || rec != nil:
		case req.UUID != "":
			// A uuid names one receipt of the whole service: when another
			// company has it, the caller lacks permission over that CFE.
			err = foreignCFE(tx, auth.PrincipalOf(r), find)
		default:
			// A folio is only unique within a company (every company
			// numbers its own ranges): the caller's company has no such CFE.
			err = errPDFNotFound
		}
		return err
	})
	if err != nil {
		web.WritePDFError(pr.log, w, r, err)
		return
	}
	body, err := pr.Render(rec, company, req.Variant)
	if err != nil {
		web.WritePDFError(pr.log, w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // a failure means the client went away
}

// foreignCFE is the error for a CFE the caller's company does not have:
// EFORBIDDEN when a company the caller cannot act for has it (interface §7:
// no permission over the company or the CFE), else ENOTFOUND.
func foreignCFE(tx *bolt.Tx, p *auth.Principal, find func(company int64) (*data.CFERecord, error)) error {
	err := data.CompanyIDs(tx, func(company int64) error {
		if p.CanSee(company) {
			return nil
		}
		if rec, err := find(company); err != nil || rec != nil {
			return data.FirstErr(err, ErrOtherCFE)
		}
		return nil
	})
	return data.FirstErr(err, errPDFNotFound)
}

// Render makes the PDF of rec with the variant asked for, else the
// company's FormatoRepImpresa, and the company's footer data.
func (pr *Printer) Render(rec *data.CFERecord, company *data.Company, variant string) ([]byte, error) {
	cat, err := Catalog(company.Templates)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	if variant == "" {
		variant = company.FormatoRepImpresa
	}
	tmpl, err := cat.Template(variant)
	if err != nil {
		return nil, web.Invalid(cfe.FieldError{Campo: "variant", Mensaje: cfe.ErrorMessage(err)})
	}
	out, err := pdf.Render(rec.XML, pdf.Options{Template: tmpl, Production: pr.production, Adenda: rec.Adenda,
		Footer: footerOf(company)})
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	return out, nil
}

// footerOf is the company's data for the printed footer. A company without
// any (stored before the sandbox kept it, or seeded without it) prints
// neither "Fecha emisor" nor "Res.", sends e-Tickets to www.dgi.gub.uy and
// prints the IVA constancia where the CFE allows it.
func footerOf(c *data.Company) pdf.Footer {
	return pdf.Footer{FechaEmisor: c.FechaEmisor, Resolucion: c.Resolucion, WebURL: c.WebURL, OmitIVAConstancia: c.OmitIVAConstancia}
}

// CheckFormato refuses a print template the company does not have, naming
// the request field formato; "" is the company's FormatoRepImpresa.
func CheckFormato(company *data.Company, formato string) error {
	if formato == "" {
		return nil
	}
	cat, err := Catalog(company.Templates)
	if err != nil {
		return &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	if _, err := cat.Template(formato); err != nil {
		return web.Invalid(cfe.FieldError{Campo: "formato", Mensaje: cfe.ErrorMessage(err)})
	}
	return nil
}

// writePDF answers a rendered PDF, named for the browser's download.
func writePDF(w http.ResponseWriter, name string, body []byte) {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", name))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // a failure means the client went away
}

// HandleRepresentation is GET /api/v1/cfeemitido/representacionImpresa
// ?idCfe=N&formato=T: the PDF of POST /api/v1/cfeemitido/pdf for the CFE of
// hosted id N, with template T (default the company's FormatoRepImpresa).
// Errors in the common shape: 400 idCfe not a positive number or formato
// unknown, 403 a CFE of a company the caller cannot act for, 404 no such CFE.
func (pr *Printer) HandleRepresentation(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, err := strconv.ParseInt(strings.TrimSpace(q.Get("idCfe")), 10, 64)
	if err != nil || id <= 0 {
		web.WriteError(pr.log, w, r, web.Invalid(cfe.FieldError{Campo: "idCfe", Mensaje: "debe ser el id (número mayor que cero) de un CFE emitido"}))
		return
	}
	rec, err := visibleCFE(pr.db, auth.PrincipalOf(r), id)
	if err != nil {
		web.WriteError(pr.log, w, r, err)
		return
	}
	company, err := companyOf(pr.db, rec.Company)
	if err != nil {
		web.WriteError(pr.log, w, r, err)
		return
	}
	formato := strings.TrimSpace(q.Get("formato"))
	if err := CheckFormato(company, formato); err != nil {
		web.WriteError(pr.log, w, r, err)
		return
	}
	body, err := pr.Render(rec, company, formato)
	if err != nil {
		web.WriteError(pr.log, w, r, err)
		return
	}
	writePDF(w, PDFName(rec), body)
}

// PDFName is how a CFE's PDF is named in a zip or a download:
// type-serie-number, the number zero-padded to DGI's seven digits so that
// names sort in issuing order ("101-H-0000042.pdf").
func PDFName(c *data.CFERecord) string {
	return fmt.Sprintf("%d-%s-%07d.pdf", int(c.Type), c.Serie, c.Nro)
}
