package issuing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
	"github.com/cfe-agent/cfe-agent/signer"
)

// Receipts serves what signs or receives a CFE (interface §4.4): emitir,
// firmarXml, anular, recibirFirmado and reaplicarReferencia (reapply.go),
// and getByIdCfeEmitido. Each CFE is recorded under a hosted id.
type Receipts struct {
	db      *data.DB
	now     func() time.Time
	log     *slog.Logger
	issuers *issuers
}

// HandleEmit is POST /api/v1/comprobante/emitir: it issues the receipt of an emitir body (cfe.DecodeRequest): the
// issuer validates it, numbers it from the company's ranges and signs it.
// idEmpresa, which the request shape ignores, names the company for a JWT.
// A repeated uuid with the same body answers the stored CFE.
func (rc *Receipts) HandleEmit(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeRejection(rc.log, w, r, bodyError(err))
		return
	}
	req, err := cfe.DecodeRequest(bytes.NewReader(raw))
	if err == nil {
		err = clientUUID(req.UUID)
	}
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	company, err := auth.PrincipalOf(r).Company(idEmpresaOf(raw))
	if err != nil {
		web.WriteError(rc.log, w, r, err)
		return
	}
	rec, err := rc.sign(r.Context(), company, 0, func(ci *companyIssuer) (*issuer.Result, error) {
		return ci.iss.Issue(r.Context(), req)
	})
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, comprobanteResponse(rec))
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
func (rc *Receipts) sign(ctx context.Context, company, cancels int64, do func(*companyIssuer) (*issuer.Result, error)) (*data.CFERecord, error) {
	ci, err := rc.issuers.get(ctx, company)
	if err != nil {
		return nil, err
	}
	res, err := do(ci)
	if err != nil {
		return nil, err
	}
	return rc.record(company, cancels, res.Issued)
}

// record stores is as company's CFE, or returns the record already stored
// for its uuid (a replay).
func (rc *Receipts) record(company, cancels int64, is *cfe.Issued) (*data.CFERecord, error) {
	doc, err := cfe.ParseXML(is.XML)
	if err != nil {
		return nil, fmt.Errorf("sandbox: parse the CFE just signed: %w", err)
	}
	rec := &data.CFERecord{Company: company, UUID: is.UUID, Type: is.Type, Serie: is.Serie, Nro: is.Nro,
		FchEmis: doc.IdDoc.FchEmis, TmstFirma: is.TmstFirma, CAE: is.CAE, XML: is.XML, Adenda: is.Adenda,
		CodSeguridad: is.CodSeguridad, DatosQR: is.DatosQR, Total: is.Total, Origin: data.OriginSigned,
		RequestHash: is.RequestHash, Cancels: cancels}
	err = rc.db.Update(func(tx *bolt.Tx) error {
		prev, err := data.CFEByUUID(tx, company, is.UUID)
		if err != nil || prev != nil {
			if err == nil && prev.RequestHash != rec.RequestHash {
				err = data.ErrUUIDTaken(is.UUID)
			}
			rec = prev
			return err
		}
		if err := data.AddCFE(tx, rec); err != nil {
			return err
		}
		if cancels == 0 {
			return nil
		}
		orig, err := data.GetCFE(tx, cancels)
		if err != nil {
			return err
		}
		orig.CancelledBy = rec.ID
		return data.PutCFE(tx, orig)
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

// HandleSignXML is POST /api/v1/comprobante/firmarXml: it validates, numbers and signs a CFE given as XML.
func (rc *Receipts) HandleSignXML(w http.ResponseWriter, r *http.Request) {
	var req SignXMLRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	fields := web.Required("uuid", req.UUID, "xml", req.XML)
	fields = append(fields, web.MaxLen("uuid", req.UUID, maxUUIDLen)...)
	fields = append(fields, reservedUUID(req.UUID)...)
	if err := web.Invalid(fields...); err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	company, err := auth.PrincipalOf(r).Company(web.IDString(req.IdEmpresa))
	if err != nil {
		web.WriteError(rc.log, w, r, err)
		return
	}
	doc, err := cfe.ParseXML([]byte(req.XML))
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	doc.Adenda = req.Adenda
	rec, err := rc.sign(r.Context(), company, 0, func(ci *companyIssuer) (*issuer.Result, error) {
		if want := ci.emisor.RUCEmisor; doc.Emisor.RUCEmisor != want {
			return nil, web.Invalid(cfe.FieldError{Campo: "Encabezado/Emisor/RUCEmisor", Mensaje: "debe ser el RUC de la empresa (" + want + ")"})
		}
		return ci.iss.IssueCFE(r.Context(), req.UUID, contentHash(req.XML, req.Adenda), doc)
	})
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, comprobanteResponse(rec))
}

// Messages of interface §7 rule 4, exactly.
const (
	msgBadReference = "Id de CFE referencia invalido"
	msgNoCFE        = "CFE no existe"
)

// HandleAnnul is POST /api/v1/comprobante/anular (interface §4.4.1): a form
// with idCfeReferencia and fecha, or the same fields as JSON (annulFields).
// The counter-receipt comes from
// cfe.CounterReceipt and is signed by the issuer. Repeating the annulment of
// a CFE with the same fecha answers the same counter-receipt; a CFE already
// annulled with another fecha is a conflict.
func (rc *Receipts) HandleAnnul(w http.ResponseWriter, r *http.Request) {
	rawID, rawFecha, err := annulFields(r)
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	id, err := strconv.ParseInt(strings.TrimSpace(rawID), 10, 64)
	if err != nil || id <= 0 {
		writeRejection(rc.log, w, r, &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespRechazoValidacion, Message: msgBadReference,
			Fields: []cfe.FieldError{{Campo: "idCfeReferencia", Mensaje: msgBadReference}}})
		return
	}
	fecha, err := cfe.ParseDate(strings.TrimSpace(rawFecha))
	if err != nil {
		writeRejection(rc.log, w, r, web.Invalid(cfe.FieldError{Campo: "fecha", Mensaje: "debe ser una fecha AAAA-MM-DD"}))
		return
	}
	orig, err := visibleCFE(rc.db, auth.PrincipalOf(r), id)
	if cfe.ErrorCode(err) == cfe.ENOTFOUND {
		err = &cfe.Error{Code: cfe.ENOTFOUND, Respuesta: cfe.RespRechazoValidacion, Message: msgNoCFE}
	}
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	rec, err := rc.annul(r.Context(), orig, fecha)
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, comprobanteResponse(rec))
}

func (rc *Receipts) annul(ctx context.Context, orig *data.CFERecord, fecha cfe.Date) (*data.CFERecord, error) {
	today := cfe.DateOf(rc.now().In(cfe.Montevideo))
	switch {
	case fecha.Before(orig.FchEmis):
		return nil, web.Invalid(cfe.FieldError{Campo: "fecha", Mensaje: "no puede ser anterior a la fecha de emisión del CFE (" + orig.FchEmis.String() + ")"})
	case fecha.After(today):
		return nil, web.Invalid(cfe.FieldError{Campo: "fecha", Mensaje: "no puede ser posterior a hoy (" + today.String() + ")"})
	}
	// One counter-receipt per CFE: its id is derived from the original's, so
	// a retry is answered from the store and another fecha is a conflict.
	id := annulUUID + strconv.FormatInt(orig.ID, 10)
	if orig.CancelledBy != 0 {
		var prev *data.CFERecord
		if err := rc.db.View(func(tx *bolt.Tx) error {
			var err error
			prev, err = data.CFEByUUID(tx, orig.Company, id)
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
	return rc.sign(ctx, orig.Company, orig.ID, func(ci *companyIssuer) (*issuer.Result, error) {
		return ci.iss.IssueCFE(ctx, id, contentHash(strconv.FormatInt(orig.ID, 10), fecha.String()), counter)
	})
}

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

// ReceiveRequest is the body of POST /api/v1/comprobante/recibirFirmado: a
// CFE a local agent signed, delivered by its outbox.
type ReceiveRequest struct {
	UUID       string `json:"uuid"`
	XmlFirmado string `json:"xmlFirmado"`
	Adenda     string `json:"adenda,omitempty"`
	IdEmpresa  int64  `json:"idEmpresa,omitempty"`
}

// HandleReceive is POST /api/v1/comprobante/recibirFirmado: it records a CFE signed elsewhere, after checking its signature,
// its structure against the XSD's rules (cfe.ParseXML), that it is the
// company's, that its number lies in its CAE range and that no other CFE of
// the company has that uuid or number. Repeating a delivery (same uuid, same
// XML) answers the stored record again.
func (rc *Receipts) HandleReceive(w http.ResponseWriter, r *http.Request) {
	var req ReceiveRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	fields := web.Required("uuid", req.UUID, "xmlFirmado", req.XmlFirmado)
	fields = append(fields, web.MaxLen("uuid", req.UUID, maxUUIDLen)...)
	fields = append(fields, reservedUUID(req.UUID)...)
	if err := web.Invalid(fields...); err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	companyID, err := auth.PrincipalOf(r).Company(web.IDString(req.IdEmpresa))
	if err != nil {
		web.WriteError(rc.log, w, r, err)
		return
	}
	rec, err := rc.receive(companyID, &req)
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, comprobanteResponse(rec))
}

func (rc *Receipts) receive(companyID int64, req *ReceiveRequest) (*data.CFERecord, error) {
	xml := []byte(req.XmlFirmado)
	verified, err := signer.Verify(xml, signer.VerifyOptions{})
	if err != nil {
		return nil, web.Invalid(cfe.FieldError{Campo: "xmlFirmado", Mensaje: "la firma no es válida: " + cfe.ErrorMessage(err)})
	}
	doc, err := cfe.ParseXML(xml)
	if err != nil {
		return nil, err
	}
	hash := contentHash(req.XmlFirmado, req.Adenda)
	var rec *data.CFERecord
	err = rc.db.Update(func(tx *bolt.Tx) error {
		company, err := data.GetCompany(tx, companyID)
		if err != nil {
			return err
		}
		if prev, err := data.CFEByUUID(tx, companyID, req.UUID); err != nil || prev != nil {
			if err == nil && prev.RequestHash != hash {
				err = data.ErrUUIDTaken(req.UUID)
			}
			rec = prev
			return err
		}
		if err := checkReceived(doc, verified, company); err != nil {
			return err
		}
		rec = &data.CFERecord{
			Company: companyID, UUID: req.UUID, Type: doc.Type(), Serie: doc.IdDoc.Serie, Nro: doc.IdDoc.Nro,
			FchEmis: doc.IdDoc.FchEmis, TmstFirma: doc.TmstFirma, CAE: doc.CAEData, XML: xml, Adenda: req.Adenda,
			CodSeguridad: cfe.SecurityCode(verified.DigestValue), DatosQR: cfe.QRData(doc, verified.DigestValue),
			Total: cfe.QRAmount(doc), Origin: data.OriginReceived, RequestHash: hash,
		}
		return data.AddCFE(tx, rec)
	})
	return rec, err
}

// checkReceived applies the rules a signed CFE must meet to be recorded.
func checkReceived(doc *cfe.CFE, v *signer.Verified, company *data.Company) error {
	var fields []cfe.FieldError
	fail := func(campo, msg string) { fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: msg}) }
	if doc.Emisor.RUCEmisor != company.RUC {
		fail("Encabezado/Emisor/RUCEmisor", fmt.Sprintf("debe ser el RUC de la empresa (%s)", company.RUC))
	}
	if doc.IdDoc.Serie == "" || doc.IdDoc.Nro <= 0 {
		fail("Encabezado/IdDoc/Nro", "el CFE no está numerado (falta Serie o Nro)")
	}
	if doc.TmstFirma.IsZero() {
		fail("TmstFirma", "es obligatorio")
	}
	g := doc.CAEData
	switch {
	case g.CAEID == "":
		fail("CAEData/CAE_ID", "es obligatorio")
	case doc.IdDoc.Nro < g.DNro || doc.IdDoc.Nro > g.HNro:
		fail("Encabezado/IdDoc/Nro", fmt.Sprintf("debe estar en el rango del CAE (%d a %d)", g.DNro, g.HNro))
	}
	if !g.FecVenc.IsZero() && doc.IdDoc.FchEmis.After(g.FecVenc) {
		fail("Encabezado/IdDoc/FchEmis", "es posterior al vencimiento del CAE ("+g.FecVenc.String()+")")
	}
	if at := doc.TmstFirma; !at.IsZero() && (at.Before(v.Certificate.NotBefore) || at.After(v.Certificate.NotAfter)) {
		fail("Signature", "el certificado no era válido a la hora de firma ("+at.Format(time.RFC3339)+")")
	}
	return web.Invalid(fields...)
}

// HandleGetComprobante is GET /api/v1/comprobante/getByIdCfeEmitido: the
// §2.3 answer of an issued CFE.
func (rc *Receipts) HandleGetComprobante(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("idCfeEmitido"), 10, 64)
	if err != nil || id <= 0 {
		web.WriteError(rc.log, w, r, web.Invalid(cfe.FieldError{Campo: "idCfeEmitido", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	rec, err := visibleCFE(rc.db, auth.PrincipalOf(r), id)
	if err != nil {
		web.WriteError(rc.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, comprobanteResponse(rec))
}
