package reports

import (
	"archive/zip"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// PDFZip serves the zip of the PDFs a filter selects.
type PDFZip struct {
	db      *data.DB
	cfes    CFEs
	printer Printer
	log     *slog.Logger
	max     int
}

// PDFZipRequest is the body of POST /api/v1/cfeemitido/descargarPdfsFiltrados:
// buscar's filter and the print template.
type PDFZipRequest struct {
	issuing.CFEFilter
	Formato string `json:"formato,omitempty"`
}

// Handle is POST /api/v1/cfeemitido/descargarPdfsFiltrados: it answers a zip with one PDF per CFE the filter selects, in id
// order. Every check runs before the first byte is sent: the filter, the
// template and the count, which may not exceed the server's bound (400). The
// zip is then written entry by entry as each PDF is rendered, never whole in
// memory; a CFE that fails to render past that point aborts the response, so
// the client gets a broken transfer rather than a zip that lacks a PDF.
func (z *PDFZip) Handle(w http.ResponseWriter, r *http.Request) {
	var req PDFZipRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(z.log, w, r, err)
		return
	}
	f, err := req.Resolve(auth.PrincipalOf(r))
	if err != nil {
		web.WriteError(z.log, w, r, err)
		return
	}
	company, err := companyOf(z.db, f.Company)
	if err != nil {
		web.WriteError(z.log, w, r, err)
		return
	}
	formato := strings.TrimSpace(req.Formato)
	if err := issuing.CheckFormato(company, formato); err != nil {
		web.WriteError(z.log, w, r, err)
		return
	}
	limit := z.max
	var ids []int64
	count := 0
	err = z.cfes.Select(f, func(c *data.CFERecord) error {
		if count++; count <= limit {
			ids = append(ids, c.ID)
		}
		return nil
	})
	if err != nil {
		web.WriteError(z.log, w, r, err)
		return
	}
	if count > limit {
		web.WriteError(z.log, w, r, &cfe.Error{Code: cfe.EINVALID, Message: fmt.Sprintf(
			"el filtro selecciona %d CFE y se descargan como máximo %d por vez: acote las fechas o el tipo", count, limit)})
		return
	}

	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="cfe-pdf.zip"`)
	w.Header().Set(headerCFECount, strconv.Itoa(len(ids)))
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	for _, id := range ids {
		if err := z.add(zw, id, company, formato); err != nil {
			// The status is sent: only an aborted transfer tells the client.
			z.log.Error("pdf zip aborted", "request_id", web.RequestID(r), "cfe", id, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	if err := zw.Close(); err != nil {
		z.log.Warn("pdf zip not finished", "request_id", web.RequestID(r), "err", err) // the client went away
	}
}

// add renders CFE id and writes it as the zip's next entry.
func (z *PDFZip) add(zw *zip.Writer, id int64, company *data.Company, formato string) error {
	var rec *data.CFERecord
	if err := z.db.View(func(tx *bolt.Tx) error {
		var err error
		rec, err = data.GetCFE(tx, id)
		return err
	}); err != nil {
		return err
	}
	body, err := z.printer.Render(rec, company, formato)
	if err != nil {
		return err
	}
	ew, err := zw.CreateHeader(&zip.FileHeader{Name: issuing.PDFName(rec), Method: zip.Deflate, Modified: rec.TmstFirma})
	if err != nil {
		return err
	}
	_, err = ew.Write(body)
	return err
}
