package sandbox

import (
	"archive/zip"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// registerDocumentRoutes adds the printed representation by id, the zip of
// a filter's PDFs (this file), the re-application of a collection
// (reapply.go) and the previews (preview.go).
func (s *Server) registerDocumentRoutes(r *mux.Router) {
	auth := func(h http.HandlerFunc) http.HandlerFunc { return s.authenticated(authAny, s.writeError, h) }
	r.HandleFunc("/api/v1/cfeemitido/representacionImpresa", auth(s.handleRepresentation)).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/cfeemitido/descargarPdfsFiltrados", auth(s.handlePDFZip)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/comprobante/reaplicarReferencia", auth(s.handleReapply)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/comprobante/previsualizar", auth(s.handlePreview)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/comprobante/previsualizar/{token}", auth(s.handlePreviewByToken)).Methods(http.MethodGet)
}

// companyOf reads a company.
func (s *Server) companyOf(id int64) (*Company, error) {
	var c *Company
	err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		c, err = getCompany(tx, id)
		return err
	})
	return c, err
}

// checkFormato refuses a print template the company does not have, naming
// the request field formato; "" is the company's FormatoRepImpresa.
func checkFormato(company *Company, formato string) error {
	if formato == "" {
		return nil
	}
	cat, err := catalog(company.Templates)
	if err != nil {
		return &cfe.Error{Code: cfe.EINTERNAL, Message: errPDFRender.Message, Err: err}
	}
	if _, err := cat.Template(formato); err != nil {
		return invalid(cfe.FieldError{Campo: "formato", Mensaje: cfe.ErrorMessage(err)})
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

// handleRepresentation is GET /api/v1/cfeemitido/representacionImpresa
// ?idCfe=N&formato=T: the PDF of POST /api/v1/cfeemitido/pdf for the CFE of
// hosted id N, with template T (default the company's FormatoRepImpresa).
// Errors in the common shape: 400 idCfe not a positive number or formato
// unknown, 403 a CFE of a company the caller cannot act for, 404 no such CFE.
func (s *Server) handleRepresentation(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, err := strconv.ParseInt(strings.TrimSpace(q.Get("idCfe")), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, invalid(cfe.FieldError{Campo: "idCfe", Mensaje: "debe ser el id (número mayor que cero) de un CFE emitido"}))
		return
	}
	rec, err := s.visibleCFE(principalOf(r), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	company, err := s.companyOf(rec.Company)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	formato := strings.TrimSpace(q.Get("formato"))
	if err := checkFormato(company, formato); err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := s.render(rec, company, formato)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writePDF(w, pdfEntryName(rec), body)
}

// pdfEntryName is how a CFE's PDF is named in a zip or a download:
// type-serie-number, the number zero-padded to DGI's seven digits so that
// names sort in issuing order ("101-H-0000042.pdf").
func pdfEntryName(c *CFERecord) string {
	return fmt.Sprintf("%d-%s-%07d.pdf", int(c.Type), c.Serie, c.Nro)
}

// PDFZipRequest is the body of POST /api/v1/cfeemitido/descargarPdfsFiltrados:
// buscar's filter and the print template.
type PDFZipRequest struct {
	CFEFilter
	Formato string `json:"formato,omitempty"`
}

// handlePDFZip answers a zip with one PDF per CFE the filter selects, in id
// order. Every check runs before the first byte is sent: the filter, the
// template and the count, which may not exceed the server's bound (400). The
// zip is then written entry by entry as each PDF is rendered, never whole in
// memory; a CFE that fails to render past that point aborts the response, so
// the client gets a broken transfer rather than a zip that lacks a PDF.
func (s *Server) handlePDFZip(w http.ResponseWriter, r *http.Request) {
	var req PDFZipRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := req.resolve(principalOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	company, err := s.companyOf(f.company)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	formato := strings.TrimSpace(req.Formato)
	if err := checkFormato(company, formato); err != nil {
		s.writeError(w, r, err)
		return
	}
	limit := s.maxZipPDFs()
	var ids []int64
	count := 0
	err = s.selectCFEs(f, func(c *CFERecord) error {
		if count++; count <= limit {
			ids = append(ids, c.ID)
		}
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if count > limit {
		s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Message: fmt.Sprintf(
			"el filtro selecciona %d CFE y se descargan como máximo %d por vez: acote las fechas o el tipo", count, limit)})
		return
	}

	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="cfe-pdf.zip"`)
	w.Header().Set(headerCFECount, strconv.Itoa(len(ids)))
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	for _, id := range ids {
		if err := s.zipPDF(zw, id, company, formato); err != nil {
			// The status is sent: only an aborted transfer tells the client.
			s.log.Error("pdf zip aborted", "request_id", requestID(r), "cfe", id, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	if err := zw.Close(); err != nil {
		s.log.Warn("pdf zip not finished", "request_id", requestID(r), "err", err) // the client went away
	}
}

// zipPDF renders CFE id and writes it as the zip's next entry.
func (s *Server) zipPDF(zw *zip.Writer, id int64, company *Company, formato string) error {
	var rec *CFERecord
	if err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		rec, err = getCFE(tx, id)
		return err
	}); err != nil {
		return err
	}
	body, err := s.render(rec, company, formato)
	if err != nil {
		return err
	}
	ew, err := zw.CreateHeader(&zip.FileHeader{Name: pdfEntryName(rec), Method: zip.Deflate, Modified: rec.TmstFirma})
	if err != nil {
		return err
	}
	_, err = ew.Write(body)
	return err
}

// maxZipPDFs is the bound of descargarPdfsFiltrados.
func (s *Server) maxZipPDFs() int {
	if s.cfg.MaxZipPDFs > 0 {
		return s.cfg.MaxZipPDFs
	}
	return maxZipPDFs
}
