package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func (s *Server) registerReceiptRoutes(r *mux.Router) {
	auth := func(h http.HandlerFunc) http.HandlerFunc { return s.authenticated(authAny, s.writeError, h) }
	r.HandleFunc("/api/v1/comprobante/recibirFirmado", auth(s.handleReceive)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/comprobante/getByIdCfeEmitido", auth(s.handleGetComprobante)).Methods(http.MethodGet)
}

// ComprobanteResponse is the answer of emission, signing, annulment and
// getByIdCfeEmitido: the fields of interface §2.3. CodigoRespuesta repeats
// CodRespuesta, because §7 rule 6 names the emission code that way.
type ComprobanteResponse struct {
	ID               int64  `json:"_Id"`
	CodRespuesta     string `json:"CodRespuesta"`
	CodigoRespuesta  string `json:"CodigoRespuesta"`
	MensajeRespuesta string `json:"MensajeRespuesta"`
	IdComprobante    int64  `json:"IdComprobante"`
	TipoCfe          int    `json:"TipoCfe"`
	Serie            string `json:"Serie"`
	Nro              int64  `json:"Nro"`
	IdCAE            int64  `json:"IdCAE"`
	NroInicalCAE     int64  `json:"NroInicalCAE"`
	NroFinalCAE      int64  `json:"NroFinalCAE"`
	DatosQR          string `json:"DatosQR"`
	CodSeguridad     string `json:"CodSeguridad"`
	XmlFirmado       string `json:"XmlFirmado"`
}

// mensajeOK is MensajeRespuesta of a success.
const mensajeOK = "OK"

func comprobanteResponse(c *CFERecord) ComprobanteResponse {
	caeID, _ := strconv.ParseInt(c.CAE.CAEID, 10, 64)
	return ComprobanteResponse{
		ID: c.ID, CodRespuesta: cfe.RespOK, CodigoRespuesta: cfe.RespOK, MensajeRespuesta: mensajeOK,
		IdComprobante: c.ID, TipoCfe: int(c.Type), Serie: c.Serie, Nro: c.Nro,
		IdCAE: caeID, NroInicalCAE: c.CAE.DNro, NroFinalCAE: c.CAE.HNro,
		DatosQR: c.DatosQR, CodSeguridad: c.CodSeguridad, XmlFirmado: string(c.XML),
	}
}

// rejectionBody answers a failed emission, signing or annulment: the
// response code and message of §2.3 beside the common error fields.
type rejectionBody struct {
	CodRespuesta     string `json:"CodRespuesta"`
	CodigoRespuesta  string `json:"CodigoRespuesta"`
	MensajeRespuesta string `json:"MensajeRespuesta"`
	errorBody
}

// writeRejection answers err with its functional response code.
func (s *Server) writeRejection(w http.ResponseWriter, r *http.Request, err error) {
	code := cfe.ErrorCode(err)
	if code == cfe.EINTERNAL {
		s.log.Error("receipt request failed", "path", r.URL.Path, "request_id", requestID(r), "err", err)
	}
	resp, msg := cfe.RespuestaOf(err), cfe.ErrorMessage(err)
	if resp == cfe.RespErrorInterno && code == cfe.EINVALID {
		resp = cfe.RespRechazoValidacion // every invalid request is a validation rejection
	}
	details := cfe.ListedFields(err)
	writeJSON(w, statusOf[code], rejectionBody{CodRespuesta: resp, CodigoRespuesta: resp, MensajeRespuesta: msg,
		errorBody: errorBody{Error: msg, Code: code, Details: details, RequestID: requestID(r)}})
}

// contentHash identifies what a uuid stands for.
func contentHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}
