package issuing

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

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

func comprobanteResponse(c *data.CFERecord) ComprobanteResponse {
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
	web.ErrorBody
}

// writeRejection answers err with its functional response code.
func writeRejection(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	code := cfe.ErrorCode(err)
	if code == cfe.EINTERNAL {
		log.Error("receipt request failed", "path", r.URL.Path, "request_id", web.RequestID(r), "err", err)
	}
	resp, msg := cfe.RespuestaOf(err), cfe.ErrorMessage(err)
	if resp == cfe.RespErrorInterno && code == cfe.EINVALID {
		resp = cfe.RespRechazoValidacion // every invalid request is a validation rejection
	}
	details := cfe.ListedFields(err)
	web.WriteJSON(w, web.Status(code), rejectionBody{CodRespuesta: resp, CodigoRespuesta: resp, MensajeRespuesta: msg,
		ErrorBody: web.ErrorBody{Error: msg, Code: code, Details: details, RequestID: web.RequestID(r)}})
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

// bodyError is the error of a body that could not be read.
func bodyError(err error) error {
	return &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespRechazoValidacion, Message: "no se pudo leer el cuerpo de la solicitud", Err: err}
}
