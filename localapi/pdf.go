package localapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printing"
)

// Printing renders and prints the printed representation of signed CFEs.
// Its two steps are separate so that the module tells a failed PDF (500)
// from a printer that refused or failed (502).
type Printing interface {
	// Render finds the CFE ref names and renders it with the named template
	// ("" means the profile's FormatoRepImpresa). It returns EINVALID for an
	// unknown template (naming the field variant) or an incomplete ref,
	// ENOTFOUND when no such CFE exists, EINTERNAL when the PDF cannot be
	// made, and EUNAVAILABLE when the CFEs cannot be read now.
	Render(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error)
	// Print sends doc to the printer called printer (a profile alias, or a
	// raw queue where the platform has them), with the profile's copies for
	// that printer and the document's type, else fallbackCopies, else 1. It
	// returns EINVALID for a job the printer cannot take as asked (no
	// printer name, copies out of range), ENOTFOUND for a printer that does
	// not exist, and EUNAVAILABLE when the printer cannot be reached or
	// refused or failed the job; the message then carries the printer's
	// reason, in Spanish.
	Print(ctx context.Context, doc *printing.Document, printer string, fallbackCopies int) (printing.PrintResult, error)
}

// Headers of a successful POST /pdf.
const (
	headerPrinter = "X-CFE-Impresora" // the printer as the request named it
	headerCopies  = "X-CFE-Copias"    // copies sent to the printer
	headerJob     = "X-CFE-Trabajo"   // the spooler's job id, when it has one
	headerJobSt   = "X-CFE-Estado"    // the job's state: completed, processing, pending
	headerFormat  = "X-CFE-Formato"   // what the printer was sent: pdf, or escpos for a thermal printer
)

// maxFallbackCopies is the most copies a request may ask for (the printer
// package's limit).
const maxFallbackCopies = 10

func (s *Server) registerPDFRoutes(r *mux.Router) {
	s.handle(r, http.MethodPost, "/pdf", s.handlePDF)
}

// handlePDF renders a stored CFE and prints it: on success the answer is the
// PDF itself, with headers naming the printer, the copies and the job.
func (s *Server) handlePDF(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Printing == nil {
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "la impresión no está disponible en este agente"))
		return
	}
	req, err := decodePDFRequest(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ref := printing.CFERef{UUID: req.UUID, Type: req.TipoCFE, Serie: req.Serie, Numero: req.Numero}
	asJSON := wantsPrintResult(r) // pdf_json.go
	doc, res, err := s.print(r.Context(), ref, req.Variant, req.Impresora, req.FallbackCopies, !asJSON)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if asJSON {
		writePrintResult(w, req, doc, res)
		return
	}
	h := w.Header()
	h.Set("Vary", "Accept") // application/json preferred: the print result alone (pdf_json.go)
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", fileName(doc)))
	h.Set("Content-Length", strconv.Itoa(len(doc.PDF)))
	h.Set(headerPrinter, req.Impresora)
	h.Set(headerCopies, strconv.Itoa(res.Copies))
	h.Set(headerJobSt, res.State)
	h.Set(headerFormat, cmp.Or(res.Format, printing.FormatPDF))
	if res.JobID != "" {
		h.Set(headerJob, res.JobID)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc.PDF) // the client may have gone; the job is printed anyway
}

// print renders ref with the template variant and prints it on printer;
// s.cfg.Printing is not nil. Without withPDF the PDF is rendered only if the
// printer needs it (a thermal printer does not), when Printing can load a
// CFE without it (documentLoader). An error of the print step goes through
// printFailed.
func (s *Server) print(ctx context.Context, ref printing.CFERef, variant, printer string, fallbackCopies int, withPDF bool) (*printing.Document, printing.PrintResult, error) {
	render := s.cfg.Printing.Render
	if l, ok := s.cfg.Printing.(documentLoader); ok && !withPDF {
		render = l.Load
	}
	doc, err := render(ctx, ref, variant)
	if err != nil {
		return nil, printing.PrintResult{}, err
	}
	res, err := s.cfg.Printing.Print(ctx, doc, printer, fallbackCopies)
	if err != nil {
		return nil, printing.PrintResult{}, printFailed(err)
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "cfe printed",
		slog.String("request_id", requestID(ctx)), slog.String("cfe", doc.Name()),
		slog.String("template", doc.Template), slog.String("printer", printer),
		slog.Int("copies", res.Copies), slog.String("job", res.JobID), slog.String("state", res.State),
		slog.String("format", cmp.Or(res.Format, printing.FormatPDF)))
	return doc, res, nil
}

// errPrinter marks an error of the print step: the printer refused, failed,
// or could not be found or reached. It is answered 502 with the printer's
// reason.
var errPrinter = errors.New("printer failed")

// printFailed classifies an error of the print step. A job the request
// made impossible stays 400 and an internal error stays 500; everything else
// is the printer's doing, 502.
func printFailed(err error) error {
	switch cfe.ErrorCode(err) {
	case cfe.EINVALID, cfe.EINTERNAL:
		return err
	}
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Message: cfe.ErrorMessage(err), Err: fmt.Errorf("%w: %w", errPrinter, err)}
}

// fileName is the PDF's file name in Content-Disposition, in plain ASCII.
func fileName(d *printing.Document) string {
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, strings.ReplaceAll(d.Name(), " ", "-"))
	return name + ".pdf"
}

// decodePDFRequest reads and checks the body of POST /pdf. Every failure is
// EINVALID naming each offending field; a body over the limit keeps its
// *http.MaxBytesError cause (413).
func decodePDFRequest(body io.Reader) (*apitype.PDFRequest, error) {
	b, err := readBody(body)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&fields); err != nil || fields == nil || dec.More() {
		return nil, &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo debe ser un objeto JSON",
			Fields: []cfe.FieldError{{Campo: "cuerpo",
				Mensaje: "se espera {uuid} o {tipo_cfe, serie, numero}, con impresora y, si se desea, variant y fallback_copies"}}}
	}
	var (
		req apitype.PDFRequest
		bad []cfe.FieldError
	)
	fail := func(field, msg string) { bad = append(bad, cfe.FieldError{Campo: field, Mensaje: msg}) }
	text := func(name string, dst *string) {
		if raw, ok := fields[name]; ok && !isNull(raw) {
			if json.Unmarshal(raw, dst) != nil {
				fail(name, "se espera un texto")
			}
			*dst = strings.TrimSpace(*dst)
		}
	}
	integer := func(name string) (int64, bool) {
		raw, ok := fields[name]
		if !ok || isNull(raw) {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.Trim(string(raw), `"`), 10, 64)
		if err != nil {
			fail(name, "se espera un número entero")
			return 0, false
		}
		return n, true
	}
	text("uuid", &req.UUID)
	text("serie", &req.Serie)
	text("variant", &req.Variant)
	text("impresora", &req.Impresora)
	tipo, hasTipo := integer("tipo_cfe")
	if req.TipoCFE = cfe.Type(tipo); hasTipo && !req.TipoCFE.Valid() {
		fail("tipo_cfe", fmt.Sprintf("%d no es un tipo de CFE", tipo))
	}
	numero, hasNumero := integer("numero")
	if req.Numero = numero; hasNumero && numero < 1 {
		fail("numero", "debe ser mayor que cero")
	}
	if n, ok := integer("fallback_copies"); ok {
		if n < 1 || n > maxFallbackCopies {
			fail("fallback_copies", fmt.Sprintf("debe estar entre 1 y %d", maxFallbackCopies))
		}
		req.FallbackCopies = int(n)
	}
	switch {
	case req.UUID != "":
	case !hasTipo && req.Serie == "" && !hasNumero:
		fail("uuid", "indique el comprobante: uuid, o tipo_cfe, serie y numero")
	default:
		for _, f := range []struct {
			name    string
			missing bool
		}{{"tipo_cfe", !hasTipo}, {"serie", req.Serie == ""}, {"numero", !hasNumero}} {
			if f.missing {
				fail(f.name, "es obligatorio cuando no se envía uuid")
			}
		}
	}
	if req.Impresora == "" {
		fail("impresora", "es obligatoria: el alias de una impresora del perfil o el nombre de una cola de impresión")
	}
	if len(bad) > 0 {
		msgs := make([]string, len(bad))
		for i, f := range bad {
			msgs[i] = f.Campo + ": " + f.Mensaje
		}
		return nil, &cfe.Error{Code: cfe.EINVALID, Message: strings.Join(msgs, "; "), Fields: bad}
	}
	return &req, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
