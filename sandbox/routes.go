package sandbox

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/account"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// routes is the emulator's one route table (docs/sandbox.md, "Endpoint
// index"): each path, its methods, the credentials it takes (auth's Guard:
// JWT only, Any = JWT or company key, PDF = Any plus "ApiKey <key>" with the
// PDF endpoint's error shape) and the room that answers it.
func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	r.Use(web.WithRequestID, web.WithBodyLimit)
	g, get, post := s.auth.Guard, []string{http.MethodGet}, []string{http.MethodPost}
	route := func(path string, methods []string, h http.HandlerFunc) { r.HandleFunc(path, h).Methods(methods...) }

	// Authentication and keys (auth).
	sess, keys := s.auth.Sessions, s.auth.Keys
	route("/api/auth/login", post, sess.HandleLogin)
	route("/api/auth/refresh", post, sess.HandleRefresh)
	route("/auth/refresh", post, sess.HandleRefresh)
	route("/api/auth/revoke", post, g.JWT(sess.HandleRevoke))
	route("/api/auth/recuperarClave", post, sess.HandleRecover)
	route("/api/v1/usuario/{idUsuario}/apikey", post, g.JWT(sess.HandleUserKey))
	route("/api/v1/usuario/empresas", get, g.Any(sess.HandleCompanies))
	route("/api/v1/apikeys", get, g.JWT(keys.HandleList))
	route("/api/v1/apikeys", post, g.JWT(keys.HandleCreate))
	route("/api/v1/apikeys/{id}/revocar", post, g.JWT(keys.HandleRevoke))
	route("/api/v1/apikeys/{id}/rate-limit", post, g.JWT(keys.HandleLimits))

	// Issuing core (issuing).
	rc, is, pr := s.issuing.Receipts, s.issuing.Issued, s.issuing.Printer
	route("/api/v1/comprobante/recibirFirmado", post, g.Any(rc.HandleReceive))
	route("/api/v1/comprobante/getByIdCfeEmitido", get, g.Any(rc.HandleGetComprobante))
	route("/api/v1/comprobante/emitir", post, g.Any(rc.HandleEmit))
	route("/api/v1/comprobante/firmarXml", post, g.Any(rc.HandleSignXML))
	route("/api/v1/comprobante/anular", post, g.Any(rc.HandleAnnul))
	route("/api/v1/cfeemitido/buscar", get, g.Any(is.HandleSearch))
	route("/api/v1/cfeemitido/{id:[0-9]+}", get, g.Any(is.HandleGet))
	route("/api/v1/cfeemitido/{id:[0-9]+}/marcar-aceptado", post, g.Any(is.HandleMarkAccepted))
	route("/api/v1/puntoemision/editar", post, g.Any(s.issuing.Points.HandleEdit))
	route("/api/v1/cfeemitido/pdf", post, g.PDF(pr.HandlePDF))

	// DGI's envelopes (dgi).
	route("/api/v1/cfeemitido/generarSobreAutoridad", post, g.Any(s.envelopes.HandleAuthority))
	route("/api/v1/cfeemitido/generarSobreReceptor", post, g.Any(s.envelopes.HandleReceiver))

	// The provider's daily report (dgi): annulled numbers in, the reports'
	// states and signed XML out.
	rr := s.dailyRep
	route("/api/v1/numerosanulados", post, g.Any(rr.HandleRegister))
	route("/api/v1/numerosanulados", get, g.Any(rr.HandleList))
	route("/api/v1/reportediario", get, g.Any(rr.HandleStates))
	route("/api/v1/reportediario/xml", get, g.Any(rr.HandleXML))

	// Documents: printed representations, the zip of PDFs, re-applied
	// collections, previews (issuing, reports).
	route("/api/v1/cfeemitido/representacionImpresa", get, g.Any(pr.HandleRepresentation))
	route("/api/v1/cfeemitido/descargarPdfsFiltrados", post, g.Any(s.reports.PDFZip.Handle))
	route("/api/v1/comprobante/reaplicarReferencia", post, g.Any(rc.HandleReapply))
	route("/api/v1/comprobante/previsualizar", post, g.Any(pr.HandlePreview))
	route("/api/v1/comprobante/previsualizar/{token}", get, g.Any(pr.HandlePreviewByToken))

	// Counters (auth's), no credentials.
	route("/sandbox/metrics", get, s.handleMetrics)

	// Data out of the service: exports (reports), mail (mail).
	ex := s.reports.Exports
	route("/api/v1/cfeemitido/getConfiguracionExportacionCfe", get, g.Any(ex.HandleGetConfig))
	route("/api/v1/cfeemitido/guardarConfiguracionExportacionCfe", post, g.Any(ex.HandleSaveConfig))
	route("/api/v1/cfeemitido/exportarExcel", post, g.Any(ex.HandleExcel))
	route("/api/v1/ExportacionContable/exportarSistemaContable", post, g.Any(ex.HandleAccounting))
	route("/api/v1/cfeemitido/enviarPdfPorCorreo", post, g.Any(s.cfeMail.HandleSend))
	route("/api/v1/cfeemitido/emailenvios", get, g.Any(s.cfeMail.HandleHistory))

	// The account area and the chart data its page draws (account, reports).
	route("/api/v1/cfeemitido/graficaDiaria", get, g.Any(s.reports.Charts.HandleDaily))
	route("/api/v1/cfeemitido/graficaFacturacionMensual", get, g.Any(s.reports.Charts.HandleMonthly))
	r.Handle("/cuenta", http.RedirectHandler(account.Prefix, http.StatusMovedPermanently)).Methods(http.MethodGet, http.MethodHead)
	r.PathPrefix(account.Prefix).Handler(s.pages).Methods(http.MethodGet, http.MethodHead)

	r.NotFoundHandler = web.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		web.WriteError(s.log, w, req, errNoRoute)
	}))
	r.MethodNotAllowedHandler = web.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		web.WriteError(s.log, w, req, web.ErrMethod)
	}))
	return r
}

var errNoRoute = &cfe.Error{Code: cfe.ENOTFOUND, Message: "la ruta no existe"}

// handleMetrics exposes the counters. They carry no secret and no
// identifier, so the endpoint needs no credentials.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	web.WriteJSON(w, http.StatusOK, s.auth.Counters.Snapshot())
}
