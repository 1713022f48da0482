package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
)

func (s *Server) registerEmitRoutes(r *mux.Router) {
	auth := func(h http.HandlerFunc) http.HandlerFunc { return s.authenticated(authAny, s.writeError, h) }
	r.HandleFunc("/api/v1/comprobante/emitir", auth(s.handleEmit)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/comprobante/firmarXml", auth(s.handleSignXML)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/comprobante/anular", auth(s.handleAnnul)).Methods(http.MethodPost)
}

// handleEmit issues the receipt of an emitir body (cfe.DecodeRequest): the
// issuer validates it, numbers it from the company's ranges and signs it.
// idEmpresa, which the request shape ignores, names the company for a JWT.
// A repeated uuid with the same body answers the stored CFE.
func (s *Server) handleEmit(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeRejection(w, r, bodyError(err))
		return
	}
	req, err := cfe.DecodeRequest(bytes.NewReader(raw))
	if err == nil {
		err = clientUUID(req.UUID)
	}
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	company, err := principalOf(r).company(idEmpresaOf(raw))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, err := s.sign(r.Context(), company, 0, func(ci *companyIssuer) (*issuer.Result, error) {
		return ci.iss.Issue(r.Context(), req)
	})
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, comprobanteResponse(rec))
}

// bodyError is the error of a body that could not be read.
func bodyError(err error) error {
	return &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespRechazoValidacion, Message: "no se pudo leer el cuerpo de la solicitud", Err: err}
}

// idEmpresaOf returns the top-level idEmpresa of a JSON body, a number or a
// numeric string, as text ("" when absent or unreadable).
func idEmpresaOf(raw []byte) string {
	var top struct {
		IdEmpresa json.RawMessage `json:"idEmpresa"`
	}
	if json.Unmarshal(raw, &top) != nil || len(top.IdEmpresa) == 0 || string(top.IdEmpresa) == "null" {
		return ""
	}
	return strings.Trim(string(top.IdEmpresa), `"`)
}

// sign runs do with company's issuer and records the CFE it signed (or
// replayed) under a hosted id. cancels, when not 0, is the id of the CFE the
// new one annuls.
func (s *Server) sign(ctx context.Context, company, cancels int64, do func(*companyIssuer) (*issuer.Result, error)) (*CFERecord, error) {
	ci, err := s.issuerFor(ctx, company)
	if err != nil {
		return nil, err
	}
	res, err := do(ci)
	if err != nil {
		return nil, err
	}
	return s.record(company, cancels, res.Issued)
}

// record stores is as company's CFE, or returns the record already stored
// for its uuid (a replay).
func (s *Server) record(company, cancels int64, is *cfe.Issued) (*CFERecord, error) {
	doc, err := cfe.ParseXML(is.XML)
	if err != nil {
		return nil, fmt.Errorf("sandbox: parse the CFE just signed: %w", err)
	}
	rec := &CFERecord{Company: company, UUID: is.UUID, Type: is.Type, Serie: is.Serie, Nro: is.Nro,
		FchEmis: doc.IdDoc.FchEmis, TmstFirma: is.TmstFirma, CAE: is.CAE, XML: is.XML, Adenda: is.Adenda,
		CodSeguridad: is.CodSeguridad, DatosQR: is.DatosQR, Total: is.Total, Origin: originSigned,
		RequestHash: is.RequestHash, Cancels: cancels}
	err = s.db.update(func(tx *bolt.Tx) error {
		prev, err := cfeByUUID(tx, company, is.UUID)
		if err != nil || prev != nil {
			if err == nil && prev.RequestHash != rec.RequestHash {
				err = errUUIDTaken(is.UUID)
			}
			rec = prev
			return err
		}
		if err := addCFE(tx, rec); err != nil {
			return err
		}
		if cancels == 0 {
			return nil
		}
		orig, err := getCFE(tx, cancels)
		if err != nil {
			return err
		}
		orig.CancelledBy = rec.ID
		return putJSON(tx, bucketCFEs, idKey(orig.ID), orig)
	})
	return rec, err
}

// SignXMLRequest is the body of POST /api/v1/comprobante/firmarXml: an
// unsigned CFE the caller built. Its Serie, Nro and CAEData are replaced by
// the next number of the company's range; TmstFirma is the signing time.
type SignXMLRequest struct {
	UUID      string `json:"uuid"`
	XML       string `json:"xml"`
	Adenda    string `json:"adenda,omitempty"`
	IdEmpresa int64  `json:"idEmpresa,omitempty"`
}

// handleSignXML validates, numbers and signs a CFE given as XML.
func (s *Server) handleSignXML(w http.ResponseWriter, r *http.Request) {
	var req SignXMLRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeRejection(w, r, err)
		return
	}
	fields := required("uuid", req.UUID, "xml", req.XML)
	fields = append(fields, maxLen("uuid", req.UUID, maxUUIDLen)...)
	fields = append(fields, reservedUUID(req.UUID)...)
	if err := invalid(fields...); err != nil {
		s.writeRejection(w, r, err)
		return
	}
	company, err := principalOf(r).company(idString(req.IdEmpresa))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	doc, err := cfe.ParseXML([]byte(req.XML))
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	doc.Adenda = req.Adenda
	rec, err := s.sign(r.Context(), company, 0, func(ci *companyIssuer) (*issuer.Result, error) {
		if want := ci.emisor.RUCEmisor; doc.Emisor.RUCEmisor != want {
			return nil, invalid(cfe.FieldError{Campo: "Encabezado/Emisor/RUCEmisor", Mensaje: "debe ser el RUC de la empresa (" + want + ")"})
		}
		return ci.iss.IssueCFE(r.Context(), req.UUID, contentHash(req.XML, req.Adenda), doc)
	})
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, comprobanteResponse(rec))
}

// Messages of interface §7 rule 4, exactly.
const (
	msgBadReference = "Id de CFE referencia invalido"
	msgNoCFE        = "CFE no existe"
)

// handleAnnul is POST /api/v1/comprobante/anular (interface §4.4.1): a form
// with idCfeReferencia and fecha, or the same fields as JSON (annulFields).
// The counter-receipt comes from
// cfe.CounterReceipt and is signed by the issuer. Repeating the annulment of
// a CFE with the same fecha answers the same counter-receipt; a CFE already
// annulled with another fecha is a conflict.
func (s *Server) handleAnnul(w http.ResponseWriter, r *http.Request) {
	rawID, rawFecha, err := annulFields(r)
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	id, err := strconv.ParseInt(strings.TrimSpace(rawID), 10, 64)
	if err != nil || id <= 0 {
		s.writeRejection(w, r, &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespRechazoValidacion, Message: msgBadReference,
			Fields: []cfe.FieldError{{Campo: "idCfeReferencia", Mensaje: msgBadReference}}})
		return
	}
	fecha, err := cfe.ParseDate(strings.TrimSpace(rawFecha))
	if err != nil {
		s.writeRejection(w, r, invalid(cfe.FieldError{Campo: "fecha", Mensaje: "debe ser una fecha AAAA-MM-DD"}))
		return
	}
	orig, err := s.visibleCFE(principalOf(r), id)
	if cfe.ErrorCode(err) == cfe.ENOTFOUND {
		err = &cfe.Error{Code: cfe.ENOTFOUND, Respuesta: cfe.RespRechazoValidacion, Message: msgNoCFE}
	}
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	rec, err := s.annul(r.Context(), orig, fecha)
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, comprobanteResponse(rec))
}

func (s *Server) annul(ctx context.Context, orig *CFERecord, fecha cfe.Date) (*CFERecord, error) {
	today := cfe.DateOf(s.now().In(cfe.Montevideo))
	switch {
	case fecha.Before(orig.FchEmis):
		return nil, invalid(cfe.FieldError{Campo: "fecha", Mensaje: "no puede ser anterior a la fecha de emisión del CFE (" + orig.FchEmis.String() + ")"})
	case fecha.After(today):
		return nil, invalid(cfe.FieldError{Campo: "fecha", Mensaje: "no puede ser posterior a hoy (" + today.String() + ")"})
	}
	// One counter-receipt per CFE: its id is derived from the original's, so
	// a retry is answered from the store and another fecha is a conflict.
	id := annulUUID + strconv.FormatInt(orig.ID, 10)
	if orig.CancelledBy != 0 {
		var prev *CFERecord
		if err := s.db.view(func(tx *bolt.Tx) error {
			var err error
			prev, err = cfeByUUID(tx, orig.Company, id)
			return err
		}); err != nil {
			return nil, err
		}
		if prev == nil || prev.FchEmis != fecha {
			return nil, &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespRechazoValidacion,
				Message: fmt.Sprintf("el CFE ya fue anulado por el CFE id %d", orig.CancelledBy)}
		}
	}
	parsed, err := cfe.ParseXML(orig.XML)
	if err != nil {
		return nil, err
	}
	counter, err := cfe.CounterReceipt(parsed, fecha)
	if err != nil {
		return nil, err
	}
	return s.sign(ctx, orig.Company, orig.ID, func(ci *companyIssuer) (*issuer.Result, error) {
		return ci.iss.IssueCFE(ctx, id, contentHash(strconv.FormatInt(orig.ID, 10), fecha.String()), counter)
	})
}

// The uuids of the CFEs the sandbox issues on its own (anular's
// counter-receipts, reaplicarReferencia's collections) are derived from the
// original's id, so that a retry finds them. A client's uuid may not take
// these forms, or it could stand in for one of them.
const (
	annulUUID         = "anulacion-"
	reapplyUUIDPrefix = "reaplicacion-"
)

// reservedUUID names uuid when it has the form of the sandbox's own uuids.
func reservedUUID(uuid string) []cfe.FieldError {
	for _, prefix := range []string{annulUUID, reapplyUUIDPrefix} {
		if strings.HasPrefix(uuid, prefix) {
			return []cfe.FieldError{{Campo: "uuid", Mensaje: "no puede empezar con «" + prefix + "»: el servicio lo reserva para los CFE que emite por su cuenta (anulaciones, cobranzas reaplicadas)"}}
		}
	}
	return nil
}

// clientUUID is reservedUUID as an error of an emission body.
func clientUUID(uuid string) error {
	if fields := reservedUUID(uuid); fields != nil {
		return cfe.Invalid("sandbox.emitir", fields...)
	}
	return nil
}
