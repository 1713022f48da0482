package localapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/throttle"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printing"
)

// The shop's own screens: GET /caja (the page), GET /comprobantes (find any
// receipt), GET /cierre (the day's close) and what the page does from a
// result (GET /caja/xml, GET /caja/pdf; reprinting is POST /pdf) or from
// its forms (POST /caja/venta: a manual sale or a credit note).
//
// The page goes through the module's whole security chain, like the status
// page, with one exception: in LAN mode its HTML (GET /caja, which holds no
// data) is served without the terminal's token, so that a browser on
// another machine can open it; the page then asks for the token and sends
// it with every request it makes (X-CFE-Token), which the chain checks as
// for any other caller.
//
// Issuing from the page has the protections of /sign-cfe from a browser
// (the chain's Host, Origin and Sec-Fetch-Site rules) and more: POST
// /caja/venta needs an Origin that is the module itself, Sec-Fetch-Site
// same-origin when the browser sends it, and the page's token
// (X-CFE-Pagina: an HMAC of the time the page was served, under a key
// drawn when the module starts, valid 12 hours), so that only a page this
// module served can sell. A credit note also needs the supervisor's PIN:
// wrong PINs are throttled (5 at once, then one a minute, over every
// caller together), and without a PIN configured credit notes are refused
// with a Spanish explanation.

// Caja is the application side of the shop's screens; the application
// implements it (app.Facade).
type Caja interface {
	// Comprobantes finds receipts. Errors: EINVALID for a query the store
	// refuses, EUNAVAILABLE.
	Comprobantes(ctx context.Context, q apitype.ComprobantesQuery) (*apitype.Comprobantes, error)
	// Cierre adds up a day. Errors: EINVALID, EUNAVAILABLE.
	Cierre(ctx context.Context, day cfe.Date) (*apitype.Cierre, error)
	// CajaInfo is what the page shows of the agent.
	CajaInfo(ctx context.Context) apitype.CajaInfo
	// SupervisorPIN reports whether a supervisor PIN is configured and
	// whether pin is it.
	SupervisorPIN(pin string) (configured, ok bool)
	// Comprobante returns a stored receipt with its signed XML. Errors:
	// ENOTFOUND, EINVALID, EUNAVAILABLE.
	Comprobante(ctx context.Context, uuid string) (*cfe.Issued, error)
	// Venta issues a manual sale or credit note (whose PIN the module
	// checked) and prints it. Errors: EINVALID and ENOTFOUND for a sale
	// that cannot be made, before any number is taken; the issuer's
	// functional rejections (Respuesta set) as from Issuer.Issue.
	Venta(ctx context.Context, v *apitype.VentaCaja) (*issuer.Result, apitype.VentaCajaResultado, error)
}

// headerPageToken carries the /caja page's token on its sales.
const headerPageToken = "X-CFE-Pagina"

// pageTokenTTL is how long a page's token sells.
const pageTokenTTL = 12 * time.Hour

// PIN throttle: 5 wrong PINs at once, then one a minute, every caller
// together (one key: a PIN is the shop's, not a terminal's).
const (
	pinFailures = 5
	pinWindow   = 5 * time.Minute
)

var (
	cajaPage = assets.NewCajaPage()
	pinKey   = netip.IPv4Unspecified()
)

// cajaRoutes holds what the routes share: the key of the page tokens and
// the throttle of wrong PINs.
type cajaRoutes struct {
	s    *Server
	key  [32]byte
	pins *throttle.Throttle
}

func (s *Server) registerCajaRoutes(r *mux.Router) {
	c := &cajaRoutes{s: s, pins: throttle.New(throttle.Limits{Failures: pinFailures, Window: pinWindow})}
	_, _ = rand.Read(c.key[:]) // crypto/rand.Read never fails
	s.handle(r, http.MethodGet, "/comprobantes", c.handleComprobantes)
	s.handle(r, http.MethodGet, "/cierre", c.handleCierre)
	s.handle(r, http.MethodGet, "/caja", c.handlePage)
	s.handle(r, http.MethodGet, "/caja/info", c.handleInfo)
	s.handle(r, http.MethodGet, "/caja/xml", c.handleXML)
	s.handle(r, http.MethodGet, "/caja/pdf", c.handlePDF)
	s.handle(r, http.MethodPost, "/caja/venta", c.handleVenta)
	c.registerCierreDocs(r)
}

// cajaPagePath is the page a LAN caller may load without a token.
const cajaPagePath = "/caja"

// openPage reports whether r is the /caja page's HTML, which checkCaller
// serves without a LAN token.
func openPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == cajaPagePath
}

// caja returns the application's side, or answers 503 without one.
func (c *cajaRoutes) caja(w http.ResponseWriter, r *http.Request) Caja {
	if c.s.cfg.Caja == nil {
		c.s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "la búsqueda de comprobantes no está disponible en este agente"))
	}
	return c.s.cfg.Caja
}

func (c *cajaRoutes) handleComprobantes(w http.ResponseWriter, r *http.Request) {
	cj := c.caja(w, r)
	if cj == nil {
		return
	}
	q, err := parseComprobantesQuery(r.URL.Query())
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	out, err := cj.Comprobantes(r.Context(), q)
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// parseComprobantesQuery reads GET /comprobantes' query. Every failure is
// EINVALID naming each field.
func parseComprobantesQuery(v url.Values) (apitype.ComprobantesQuery, error) {
	var q apitype.ComprobantesQuery
	var fs []cfe.FieldError
	date := func(name string) cfe.Date {
		s := strings.TrimSpace(v.Get(name))
		if s == "" {
			return cfe.Date{}
		}
		d, err := cfe.ParseDate(s)
		if err != nil {
			fs = append(fs, cfe.FieldError{Campo: name, Mensaje: "se espera una fecha AAAA-MM-DD"})
		}
		return d
	}
	num := func(name string, max int64) int64 {
		s := strings.TrimSpace(v.Get(name))
		if s == "" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > max {
			fs = append(fs, cfe.FieldError{Campo: name, Mensaje: fmt.Sprintf("se espera un número de 1 a %d", max)})
			return 0
		}
		return n
	}
	q.Desde, q.Hasta = date("desde"), date("hasta")
	q.Tipo = cfe.Type(num("tipo", 999))
	q.Numero = num("numero", 9_999_999)
	q.Pagina = int(num("pagina", 1_000_000_000))
	q.PorPagina = int(num("por_pagina", 100))
	q.Serie = strings.ToUpper(strings.TrimSpace(v.Get("serie")))
	if len(q.Serie) > 2 {
		fs = append(fs, cfe.FieldError{Campo: "serie", Mensaje: "tiene 1 o 2 letras"})
	}
	q.Texto = strings.TrimSpace(v.Get("texto"))
	if len(q.Texto) > 200 {
		fs = append(fs, cfe.FieldError{Campo: "texto", Mensaje: "máximo 200 caracteres"})
	}
	if len(fs) > 0 {
		return q, &cfe.Error{Code: cfe.EINVALID, Message: "la búsqueda tiene datos inválidos", Fields: fs}
	}
	return q, nil
}

func (c *cajaRoutes) handleCierre(w http.ResponseWriter, r *http.Request) {
	cj := c.caja(w, r)
	if cj == nil {
		return
	}
	day, err := cfe.ParseDate(strings.TrimSpace(r.URL.Query().Get("fecha")))
	if err != nil {
		c.s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Message: "falta la fecha del cierre o no es válida",
			Fields: []cfe.FieldError{{Campo: "fecha", Mensaje: "se espera una fecha AAAA-MM-DD"}}})
		return
	}
	out, err := cj.Cierre(r.Context(), day)
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handlePage serves the page, with its token and the status page's headers.
func (c *cajaRoutes) handlePage(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := cajaPage.Template.Execute(&buf, cajaPage.Data(c.pageToken(c.s.now()))); err != nil {
		http.Error(w, "no se pudo mostrar la página de caja", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Security-Policy", cajaPage.CSP)
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	w.Write(buf.Bytes()) //nolint:errcheck // the client went away
}

func (c *cajaRoutes) handleInfo(w http.ResponseWriter, r *http.Request) {
	if cj := c.caja(w, r); cj != nil {
		writeJSON(w, http.StatusOK, cj.CajaInfo(r.Context()))
	}
}

// handleXML answers the signed XML of a receipt as a download.
func (c *cajaRoutes) handleXML(w http.ResponseWriter, r *http.Request) {
	cj := c.caja(w, r)
	if cj == nil {
		return
	}
	is, err := cj.Comprobante(r.Context(), r.URL.Query().Get("uuid"))
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("CFE_%d_%s_%d.xml", int(is.Type), is.Serie, is.Nro)))
	h.Set("Content-Length", strconv.Itoa(len(is.XML)))
	_, _ = w.Write(is.XML)
}

// handlePDF answers the printed representation of a receipt as a download,
// without printing it.
func (c *cajaRoutes) handlePDF(w http.ResponseWriter, r *http.Request) {
	if c.s.cfg.Printing == nil {
		c.s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "la impresión no está disponible en este agente"))
		return
	}
	uuid := strings.TrimSpace(r.URL.Query().Get("uuid"))
	if uuid == "" {
		c.s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Message: "falta el uuid del comprobante",
			Fields: []cfe.FieldError{{Campo: "uuid", Mensaje: "es obligatorio"}}})
		return
	}
	doc, err := c.s.cfg.Printing.Render(r.Context(), printing.CFERef{UUID: uuid}, "")
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fileName(doc)))
	h.Set("Content-Length", strconv.Itoa(len(doc.PDF)))
	_, _ = w.Write(doc.PDF)
}

// pageToken is the token of a page served at now: "<unix>.<HMAC>".
func (c *cajaRoutes) pageToken(now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	return ts + "." + c.mac(ts)
}

func (c *cajaRoutes) mac(ts string) string {
	m := hmac.New(sha256.New, c.key[:])
	m.Write([]byte("caja:" + ts))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validPageToken reports whether tok is a token this module gave a page in
// the last pageTokenTTL.
func (c *cajaRoutes) validPageToken(tok string, now time.Time) bool {
	ts, sum, ok := strings.Cut(strings.TrimSpace(tok), ".")
	if !ok {
		return false
	}
	at, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	age := now.Sub(time.Unix(at, 0))
	if age < -time.Minute || age > pageTokenTTL {
		return false
	}
	return hmac.Equal([]byte(sum), []byte(c.mac(ts)))
}

// fromPage checks that r comes from a /caja page this module served: its
// Origin is the module, Sec-Fetch-Site (when sent) same-origin, and its
// page token valid.
func (c *cajaRoutes) fromPage(r *http.Request) *cfe.Error {
	origins := r.Header.Values("Origin")
	site := r.Header.Values("Sec-Fetch-Site")
	switch {
	case len(origins) != 1 || !sameOrigin(origins[0], r.Host):
		return &cfe.Error{Code: cfe.EFORBIDDEN, Message: "solo la página de caja del agente puede emitir desde el navegador",
			Fields: []cfe.FieldError{{Campo: "Origin", Mensaje: "se espera el origen del módulo local"}}}
	case len(site) > 1 || len(site) == 1 && !strings.EqualFold(strings.TrimSpace(site[0]), "same-origin"):
		return &cfe.Error{Code: cfe.EFORBIDDEN, Message: "solo la página de caja del agente puede emitir desde el navegador",
			Fields: []cfe.FieldError{{Campo: "Sec-Fetch-Site", Mensaje: "se espera same-origin"}}}
	case !c.validPageToken(r.Header.Get(headerPageToken), c.s.now()):
		return &cfe.Error{Code: cfe.EFORBIDDEN, Message: "la página de caja venció o no es de este agente: recárguela",
			Fields: []cfe.FieldError{{Campo: headerPageToken, Mensaje: "recargue la página /caja"}}}
	}
	return nil
}

// handleVenta issues a manual sale or credit note from the page. Protocol
// refusals (not from the page, a wrong or missing PIN, a sale that cannot
// be made) are 4xx with {error}; an issued or functionally rejected sale is
// 200 with the signing answer in firma, as /sign-cfe answers it.
func (c *cajaRoutes) handleVenta(w http.ResponseWriter, r *http.Request) {
	cj := c.caja(w, r)
	if cj == nil {
		return
	}
	if err := c.fromPage(r); err != nil {
		c.s.refuse(w, r, "sale not from the caja page", err)
		return
	}
	b, err := readBody(r.Body)
	if err != nil {
		c.s.writeError(w, r, err)
		return
	}
	var v apitype.VentaCaja
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		c.s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo no es una venta válida: " + err.Error()})
		return
	}
	if v.Tipo == cfe.ETicketNC || v.Tipo == cfe.EFacturaNC || v.IsKeyed() {
		what := "las notas de crédito"
		if v.IsKeyed() {
			what = "los formularios de contingencia"
		}
		if !c.checkPIN(w, r, cj, v.PIN, what) {
			return
		}
	}
	res, printed, err := cj.Venta(r.Context(), &v)
	switch {
	case err == nil:
	case isProtocol(err):
		c.s.writeError(w, r, err)
		return
	default:
		if cfe.RespuestaOf(err) == cfe.RespErrorInterno {
			c.s.logInternal(r, err)
		}
		writeJSON(w, http.StatusOK, apitype.VentaCajaResultado{Firma: rejection(r, v.UUID, cfe.RespuestaOf(err), err)})
		return
	}
	is := res.Issued
	c.s.log.LogAttrs(r.Context(), slog.LevelInfo, "cfe signed from the caja page",
		slog.String("request_id", requestID(r.Context())), slog.String("uuid", is.UUID),
		slog.Int("tipo_cfe", int(is.Type)), slog.String("serie", is.Serie), slog.Int64("numero", is.Nro),
		slog.Bool("replayed", res.Replayed), slog.Bool("printed", printed.Impreso))
	printed.Firma = signed(is)
	writeJSON(w, http.StatusOK, printed)
}

// isProtocol reports whether err refused the sale before the issuer (its
// fields, its reference; app.Facade.Venta names them with Op
// apitype.OpVentaRefused): answered 4xx, not as a signing rejection.
func isProtocol(err error) bool {
	var ce *cfe.Error
	return errors.As(err, &ce) && ce.Op == apitype.OpVentaRefused
}

// checkPIN checks the PIN of a credit note or a keyed-in form (what, in
// Spanish): refused without one configured
// (403), while wrong PINs wait (429), or when wrong (403).
func (c *cajaRoutes) checkPIN(w http.ResponseWriter, r *http.Request, cj Caja, pin, what string) bool {
	now := c.s.now()
	if wait, blocked := c.pins.Blocked(pinKey, now); blocked {
		c.tooManyPINs(w, r, wait)
		return false
	}
	configured, ok := cj.SupervisorPIN(pin)
	switch {
	case !configured:
		c.s.writeError(w, r, &cfe.Error{Code: cfe.EFORBIDDEN,
			Message: what + " desde la página de caja no están disponibles: no hay un PIN de supervisor configurado (el técnico lo configura con «cfe-agent caja pin»)"})
		return false
	case !ok:
		if wait, blocked := c.pins.Fail(pinKey, now); blocked {
			c.tooManyPINs(w, r, wait)
			return false
		}
		c.s.log.LogAttrs(r.Context(), slog.LevelWarn, "wrong supervisor PIN on the caja page",
			slog.String("request_id", requestID(r.Context())), slog.String("remote", remoteIP(r.RemoteAddr)))
		c.s.writeError(w, r, &cfe.Error{Code: cfe.EFORBIDDEN, Message: "el PIN de supervisor no es correcto",
			Fields: []cfe.FieldError{{Campo: "pin", Mensaje: "no es correcto"}}})
		return false
	}
	return true
}

func (c *cajaRoutes) tooManyPINs(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(throttle.RetryAfter(wait)))
	c.s.writeError(w, r, &cfe.Error{Code: cfe.EFORBIDDEN, Err: errThrottled,
		Message: fmt.Sprintf("demasiados PIN incorrectos: espere %d segundos antes de volver a intentar", throttle.RetryAfter(wait))})
}
