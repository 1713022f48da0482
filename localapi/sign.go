package localapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func (s *Server) registerSignRoutes(r *mux.Router) {
	s.handle(r, http.MethodPost, "/sign-cfe", s.handleSignCFE)
	s.shapes["/sign-cfe"] = writeSignError
}

// handleSignCFE signs the CFE in the body. A body that cannot be read as a
// signing request is a protocol error (4xx); every outcome of signing itself,
// rejections included, is answered with 200 and its codigo_respuesta.
func (s *Server) handleSignCFE(w http.ResponseWriter, r *http.Request) {
	req, err := decodeSignRequest(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.cfg.Issuer.Issue(r.Context(), req)
	if err != nil {
		if cfe.RespuestaOf(err) == cfe.RespErrorInterno {
			s.logInternal(r, err)
		}
		writeJSON(w, http.StatusOK, rejection(r, req.UUID, cfe.RespuestaOf(err), err))
		return
	}
	is := res.Issued
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "cfe signed",
		slog.String("request_id", requestID(r.Context())), slog.String("uuid", is.UUID),
		slog.Int("tipo_cfe", int(is.Type)), slog.String("serie", is.Serie), slog.Int64("numero", is.Nro),
		slog.Bool("replayed", res.Replayed))
	writeJSON(w, http.StatusOK, signed(is))
}

// decodeSignRequest reads the whole body (bounded by the body limit) and
// decodes it. Every failure is an EINVALID *cfe.Error: a body over the limit
// keeps its *http.MaxBytesError cause (413); anything else is 400.
func decodeSignRequest(body io.Reader) (*cfe.Request, error) {
	b, err := readBody(body)
	if err != nil {
		return nil, err
	}
	req, err := cfe.DecodeRequest(bytes.NewReader(b))
	if err == nil {
		return req, nil
	}
	var ce *cfe.Error
	if errors.As(err, &ce) && ce.Code == cfe.EINVALID {
		return nil, err
	}
	return nil, &cfe.Error{Code: cfe.EINVALID, Err: err,
		Message: "el cuerpo no es una solicitud de firma válida",
		Fields:  []cfe.FieldError{{Campo: "cuerpo", Mensaje: "se espera un objeto JSON {uuid, adenda, cfe}"}}}
}

// readBody reads a whole request body, bounded by the body limit. A body
// over the limit is EINVALID with its *http.MaxBytesError cause (413); any
// other read failure is EINVALID (400).
func readBody(body io.Reader) ([]byte, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, tooLarge(tooBig.Limit, err)
		}
		return nil, &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "no se pudo leer el cuerpo de la solicitud"}
	}
	return b, nil
}

// signed is the answer for a signed CFE. It depends only on what was stored,
// so a replayed uuid gets the identical answer.
func signed(is *cfe.Issued) apitype.SignResponse {
	return apitype.SignResponse{
		CodigoRespuesta:  cfe.RespOK,
		MensajeRespuesta: fmt.Sprintf("%s %s-%d %s", is.Type.Name(), is.Serie, is.Nro, is.Type.Agree("firmado")),
		UUID:             is.UUID,
		TipoCFE:          is.Type,
		Serie:            is.Serie,
		Numero:           is.Nro,
		IDCAE:            is.CAE.CAEID,
		NroInicialCAE:    is.CAE.DNro,
		NroFinalCAE:      is.CAE.HNro,
		VencimientoCAE:   is.CAE.FecVenc.String(),
		TmstFirma:        is.TmstFirma.In(cfe.Montevideo).Format(time.RFC3339),
		CodSeguridad:     is.CodSeguridad,
		DatosQR:          is.DatosQR,
		XMLFirmado:       string(is.XML),
	}
}

// rejection is the answer, with codigo_respuesta code, for a request that was
// not signed because of err.
func rejection(r *http.Request, uuid, code string, err error) apitype.SignResponse {
	fields := cfe.ListedFields(err)
	msg := userMessage(r, err) // a cfe.UserFacingFault's own message
	if code == cfe.RespErrorInterno && !cfe.UserFacingFault(err) {
		msg = "error interno del agente: no se firmó el comprobante. Reintente con el mismo uuid; " +
			"si persiste, informe a soporte el identificador de solicitud " + requestID(r.Context())
	}
	return apitype.SignResponse{CodigoRespuesta: code, MensajeRespuesta: msg, UUID: uuid, Errores: fields}
}

// writeSignError writes a protocol error of /sign-cfe in the shape of its
// answers: a request refused as such (4xx) is a rejection, 01; a failure of
// the module (5xx) is internal, 99.
func writeSignError(w http.ResponseWriter, r *http.Request, status int, err error) {
	code := cfe.RespRechazoValidacion
	if status >= http.StatusInternalServerError {
		code = cfe.RespErrorInterno
	}
	writeJSON(w, status, rejection(r, "", code, err))
}
