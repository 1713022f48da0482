package localapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/printing"
)

// The day's close as a document: GET /cierre/pdf (the close as a PDF, A4
// or an 80 mm roll) and POST /cierre/imprimir (printed: ESC/POS text on a
// thermal printer, the PDF on any other). GET /cierre/pdf is a read, like
// GET /cierre; POST /cierre/imprimir acts, so it has POST /caja/venta's
// protections: only a /caja page this module served may print (its
// Origin, Sec-Fetch-Site and page token).

// CierreDocs is the application side of the close as a document; the
// application implements it (app.Facade) beside Caja.
type CierreDocs interface {
	// CierrePDF returns the close of day as a PDF on paper ("a4", "" for
	// a4, or "rollo"). Errors: EINVALID, EUNAVAILABLE, EINTERNAL.
	CierrePDF(ctx context.Context, day cfe.Date, paper string) ([]byte, error)
	// ImprimirCierre prints the close of day on the printer called
	// printer ("" the default). Errors: EINVALID, ENOTFOUND, EUNAVAILABLE.
	ImprimirCierre(ctx context.Context, day cfe.Date, printer string) (printing.PrintResult, error)
}

// CierreImpreso is the answer of POST /cierre/imprimir.
type CierreImpreso struct {
	Impreso   bool   `json:"impreso"`
	Impresora string `json:"impresora"` // the printer's queue, folder or name
	Formato   string `json:"formato"`   // "escpos" or "pdf"
	Trabajo   string `json:"trabajo,omitempty"`
}

// cierreImprimir is the body of POST /cierre/imprimir.
type cierreImprimir struct {
	Fecha     string `json:"fecha"`
	Impresora string `json:"impresora"`
}

func (c *cajaRoutes) registerCierreDocs(r *mux.Router) {
	c.s.handle(r, http.MethodGet, "/cierre/pdf", c.handleCierrePDF)
	c.s.handle(r, http.MethodPost, "/cierre/imprimir", c.handleCierreImprimir)
}

// cierreDocs returns the application's side, or answers 503 without one.
func (c *cajaRoutes) cierreDocs(w http.ResponseWriter, r *http.Request) CierreDocs {
	if d, ok := c.s.cfg.Caja.(CierreDocs); ok {
		return d
	}
	c.s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "el cierre imprimible no está disponible en este agente"))
	return nil
}

// cierreDate reads the close's date, or answers 400 naming fecha.
func (c *cajaRoutes) cierreDate(w http.ResponseWriter, r *http.Request, s string) (cfe.Date, bool) {
	day, err := cfe.ParseDate(strings.TrimSpace(s))
	if err != nil {
		c.s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Message: "falta la fecha del cierre o no es válida",
			Fields: []cfe.FieldError{{Campo: "fecha", Mensaje: "se espera una fecha AAAA-MM-DD"}}})
		return cfe.Date{}, false
	}
	return day, true
}

func (c *cajaRoutes) handleCierrePDF(w http.ResponseWriter, r *http.Request) {
	d := c.cierreDocs(w, r)
	if d == nil {
		return
	}
	day, ok := c.cierreDate(w, r, r.URL.Query().Get("fecha"))
	if !ok {
		return
	}
	b, err := d.CierrePDF(r.Context(), day, r.URL.Query().Get("formato"))
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", "Cierre_"+day.String()+".pdf"))
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

func (c *cajaRoutes) handleCierreImprimir(w http.ResponseWriter, r *http.Request) {
	d := c.cierreDocs(w, r)
	if d == nil {
		return
	}
	if err := c.fromPage(r); err != nil {
		c.s.refuse(w, r, "close print not from the caja page", err)
		return
	}
	var in cierreImprimir
	if err := decodeObject(r, &in, "se espera {fecha, impresora}"); err != nil {
		c.s.writeError(w, r, err)
		return
	}
	day, ok := c.cierreDate(w, r, in.Fecha)
	if !ok {
		return
	}
	res, err := d.ImprimirCierre(r.Context(), day, in.Impresora)
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	c.s.log.LogAttrs(r.Context(), slog.LevelInfo, "day's close printed",
		slog.String("request_id", requestID(r.Context())), slog.String("fecha", day.String()),
		slog.String("printer", res.Printer), slog.String("format", res.Format))
	writeJSON(w, http.StatusOK, CierreImpreso{Impreso: true, Impresora: res.Printer, Formato: res.Format, Trabajo: res.JobID})
}
