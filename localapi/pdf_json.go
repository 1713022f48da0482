package localapi

import (
	"cmp"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printing"
)

// POST /pdf answers the PDF (the default, as ever) or, when the caller
// prefers JSON, the print result alone (apitype.PrintResult): a point of
// sale that only prints spares the PDF's transfer and, on a thermal printer,
// its rendering.

// documentLoader is a Printing that can find a CFE without rendering its
// PDF; Print then renders it only for a printer that needs it.
type documentLoader interface {
	Load(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error)
}

// wantsPrintResult reports whether the request's Accept header prefers
// application/json to application/pdf: a JSON media type with a greater
// quality than any range that admits the PDF (application/pdf,
// application/*, */*). A tie keeps the PDF, so that a client sending a
// library's default ("application/json, text/plain, */*") gets today's
// answer; "Accept: application/json" alone gets JSON.
func wantsPrintResult(r *http.Request) bool {
	jsonQ, pdfQ := -1.0, -1.0
	for _, h := range r.Header.Values("Accept") {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
			switch mt {
			case "application/json":
				jsonQ = max(jsonQ, q)
			case "application/pdf", "application/*", "*/*":
				pdfQ = max(pdfQ, q)
			}
		}
	}
	return jsonQ > 0 && jsonQ > pdfQ
}

// writePrintResult answers POST /pdf with what the printer did, in JSON,
// with the same X-CFE-* headers as the PDF's answer.
func writePrintResult(w http.ResponseWriter, req *apitype.PDFRequest, doc *printing.Document, res printing.PrintResult) {
	out := apitype.PrintResult{OK: true, Comprobante: doc.Name(), TipoCFE: doc.Type, Serie: doc.Serie, Numero: doc.Numero,
		Plantilla: doc.Template, Impresora: req.Impresora, Copias: res.Copies, Estado: res.State, Trabajo: res.JobID,
		Formato: cmp.Or(res.Format, printing.FormatPDF)}
	b, err := json.Marshal(out)
	if err != nil { // a struct of strings and numbers
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Vary", "Accept")
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set(headerPrinter, req.Impresora)
	h.Set(headerCopies, strconv.Itoa(res.Copies))
	h.Set(headerJobSt, res.State)
	h.Set(headerFormat, out.Formato)
	if res.JobID != "" {
		h.Set(headerJob, res.JobID)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b) // the client may have gone; the job is printed anyway
}
