package issuing

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Headers of a preview's answer.
const (
	headerPreviewToken   = "X-Preview-Token"
	headerPreviewExpires = "X-Preview-Expires"
)

// HandlePreview is POST /api/v1/comprobante/previsualizar: the emitir body
// (decoded, its company resolved and the document built and validated as
// emitir does, with emitir's rejections) answered as the PDF of
// pdf.RenderPreview. Nothing is numbered, signed or stored as issued: no CAE
// number is reserved and the uuid stays free. The answer carries a token
// (X-Preview-Token, with X-Preview-Expires and Content-Location) that
// serves the same PDF for previewTTL to callers of the same company. The
// query parameter formato picks the template as in representacionImpresa.
func (pr *Printer) HandlePreview(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeRejection(pr.log, w, r, bodyError(err))
		return
	}
	req, err := cfe.DecodeRequest(bytes.NewReader(raw))
	if err != nil {
		writeRejection(pr.log, w, r, err)
		return
	}
	companyID, err := auth.PrincipalOf(r).Company(idEmpresaOf(raw))
	if err != nil {
		web.WriteError(pr.log, w, r, err)
		return
	}
	company, err := companyOf(pr.db, companyID)
	if err != nil {
		web.WriteError(pr.log, w, r, err)
		return
	}
	// The uuid, then the document as the issuer checks and builds it now,
	// before its number (issuer.Issue).
	if req.UUID != "" {
		if fields := append(cfe.CheckUUID(req.UUID), reservedUUID(req.UUID)...); len(fields) > 0 {
			writeRejection(pr.log, w, r, cfe.Invalid("sandbox.previsualizar", fields...))
			return
		}
	}
	now := pr.now()
	tax := cfe.DefaultTaxConfig()
	doc, err := req.ToCFE(cfe.IssueParams{Emisor: company.Emisor(), Tax: tax, SignedAt: now.In(cfe.Montevideo).Truncate(time.Second)})
	if err == nil {
		err = cfe.Validate(doc, tax)
	}
	if err != nil {
		writeRejection(pr.log, w, r, err)
		return
	}
	body, err := pr.renderPreview(doc, company, strings.TrimSpace(r.URL.Query().Get("formato")))
	if err != nil {
		web.WriteError(pr.log, w, r, err)
		return
	}
	token, expires := pr.previews.put(companyID, body, now)
	w.Header().Set(headerPreviewToken, token)
	w.Header().Set(headerPreviewExpires, expires.UTC().Format(time.RFC3339))
	w.Header().Set("Content-Location", "/api/v1/comprobante/previsualizar/"+token)
	w.Header().Set("Cache-Control", "no-store")
	writePDF(w, "vista-previa.pdf", body)
}

// renderPreview renders doc with the template asked for, else the
// company's FormatoRepImpresa, and the company's footer data.
func (pr *Printer) renderPreview(doc *cfe.CFE, company *data.Company, formato string) ([]byte, error) {
	cat, err := Catalog(company.Templates)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	if formato == "" {
		formato = company.FormatoRepImpresa
	}
	tmpl, err := cat.Template(formato)
	if err != nil {
		return nil, web.Invalid(cfe.FieldError{Campo: "formato", Mensaje: cfe.ErrorMessage(err)})
	}
	out, err := pdf.RenderPreview(doc, pdf.Options{Template: tmpl, Production: pr.production,
		Adenda: doc.Adenda, Footer: footerOf(company)})
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	return out, nil
}

var errNoPreview = &cfe.Error{Code: cfe.ENOTFOUND, Message: "la vista previa no existe o ya venció; vuelva a previsualizar el comprobante"}

// HandlePreviewByToken is GET /api/v1/comprobante/previsualizar/{token}:
// the PDF of a preview made less than previewTTL ago, for a caller of the
// company that made it (403 otherwise); 404 for an unknown or expired token.
func (pr *Printer) HandlePreviewByToken(w http.ResponseWriter, r *http.Request) {
	p, ok := pr.previews.get(mux.Vars(r)["token"], pr.now())
	if !ok {
		web.WriteError(pr.log, w, r, errNoPreview)
		return
	}
	if !auth.PrincipalOf(r).CanSee(p.company) {
		web.WriteError(pr.log, w, r, &cfe.Error{Code: cfe.EFORBIDDEN, Message: "la vista previa es de otra empresa"})
		return
	}
	w.Header().Set(headerPreviewExpires, p.expires.UTC().Format(time.RFC3339))
	w.Header().Set("Cache-Control", "no-store")
	writePDF(w, "vista-previa.pdf", p.pdf)
}

// previewStore keeps the PDFs of recent previews in memory, by token: at
// most maxPreviews, each for previewTTL. Its zero value is ready.
type previewStore struct {
	mu sync.Mutex
	m  map[string]*preview
}

// preview is one kept preview.
type preview struct {
	company int64
	pdf     []byte
	expires time.Time
}

// put keeps body for company and returns its new token and expiry. Expired
// previews are dropped; when the company keeps maxCompanyPreviews, its own
// preview that expires first makes room, else when maxPreviews are kept in
// all, the one that expires first.
func (ps *previewStore) put(company int64, body []byte, now time.Time) (string, time.Time) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[string]*preview{}
	}
	// The one that expires first, overall and of this company.
	var first, own string
	kept := 0
	for t, p := range ps.m {
		switch {
		case !now.Before(p.expires):
			delete(ps.m, t)
			continue
		case first == "" || p.expires.Before(ps.m[first].expires):
			first = t
		}
		if p.company == company {
			kept++
			if own == "" || p.expires.Before(ps.m[own].expires) {
				own = t
			}
		}
	}
	switch {
	case kept >= maxCompanyPreviews:
		// A company makes room among its own: it cannot push out another's.
		delete(ps.m, own)
	case len(ps.m) >= maxPreviews:
		delete(ps.m, first)
	}
	tb := make([]byte, previewTokenBytes)
	_, _ = rand.Read(tb) // crypto/rand's Read never fails
	token := base64.RawURLEncoding.EncodeToString(tb)
	p := &preview{company: company, pdf: body, expires: now.Add(previewTTL)}
	ps.m[token] = p
	return token, p.expires
}

// get returns the unexpired preview of token.
func (ps *previewStore) get(token string, now time.Time) (*preview, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.m[token]
	if p == nil {
		return nil, false
	}
	if !now.Before(p.expires) {
		delete(ps.m, token)
		return nil, false
	}
	return p, true
}
