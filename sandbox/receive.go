package sandbox

import (
	"fmt"
	"net/http"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

// ReceiveRequest is the body of POST /api/v1/comprobante/recibirFirmado: a
// CFE a local agent signed, delivered by its outbox.
type ReceiveRequest struct {
	UUID       string `json:"uuid"`
	XmlFirmado string `json:"xmlFirmado"`
	Adenda     string `json:"adenda,omitempty"`
	IdEmpresa  int64  `json:"idEmpresa,omitempty"`
}

const maxUUIDLen = 64

// handleReceive records a CFE signed elsewhere, after checking its signature,
// its structure against the XSD's rules (cfe.ParseXML), that it is the
// company's, that its number lies in its CAE range and that no other CFE of
// the company has that uuid or number. Repeating a delivery (same uuid, same
// XML) answers the stored record again.
func (s *Server) handleReceive(w http.ResponseWriter, r *http.Request) {
	var req ReceiveRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeRejection(w, r, err)
		return
	}
	fields := required("uuid", req.UUID, "xmlFirmado", req.XmlFirmado)
	fields = append(fields, maxLen("uuid", req.UUID, maxUUIDLen)...)
	fields = append(fields, reservedUUID(req.UUID)...)
	if err := invalid(fields...); err != nil {
		s.writeRejection(w, r, err)
		return
	}
	companyID, err := principalOf(r).company(idString(req.IdEmpresa))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, err := s.receive(companyID, &req)
	if err != nil {
		s.writeRejection(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, comprobanteResponse(rec))
}

func (s *Server) receive(companyID int64, req *ReceiveRequest) (*CFERecord, error) {
	xml := []byte(req.XmlFirmado)
	verified, err := signer.Verify(xml, signer.VerifyOptions{})
	if err != nil {
		return nil, invalid(cfe.FieldError{Campo: "xmlFirmado", Mensaje: "la firma no es válida: " + cfe.ErrorMessage(err)})
	}
	doc, err := cfe.ParseXML(xml)
	if err != nil {
		return nil, err
	}
	hash := contentHash(req.XmlFirmado, req.Adenda)
	var rec *CFERecord
	err = s.db.update(func(tx *bolt.Tx) error {
		company, err := getCompany(tx, companyID)
		if err != nil {
			return err
		}
		if prev, err := cfeByUUID(tx, companyID, req.UUID); err != nil || prev != nil {
			if err == nil && prev.RequestHash != hash {
				err = errUUIDTaken(req.UUID)
			}
			rec = prev
			return err
		}
		if err := checkReceived(doc, verified, company); err != nil {
			return err
		}
		rec = &CFERecord{
			Company: companyID, UUID: req.UUID, Type: doc.Type(), Serie: doc.IdDoc.Serie, Nro: doc.IdDoc.Nro,
			FchEmis: doc.IdDoc.FchEmis, TmstFirma: doc.TmstFirma, CAE: doc.CAEData, XML: xml, Adenda: req.Adenda,
			CodSeguridad: cfe.SecurityCode(verified.DigestValue), DatosQR: cfe.QRData(doc, verified.DigestValue),
			Total: cfe.QRAmount(doc), Origin: originReceived, RequestHash: hash,
		}
		return addCFE(tx, rec)
	})
	return rec, err
}

// checkReceived applies the rules a signed CFE must meet to be recorded.
func checkReceived(doc *cfe.CFE, v *signer.Verified, company *Company) error {
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
	return invalid(fields...)
}
