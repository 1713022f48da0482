package issuing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// AnnulRequest is the JSON form of POST /api/v1/comprobante/anular: the
// fields of its form body (interface §4.4.1), for clients that send only JSON
// (the vendor's PHP SDK). idCfeReferencia may be a number or a numeric text;
// either is read as the form's text is.
type AnnulRequest struct {
	IdCfeReferencia json.RawMessage `json:"idCfeReferencia"`
	Fecha           string          `json:"fecha"`
}

// annulFields returns idCfeReferencia and fecha of an anular request: from
// its JSON body when its Content-Type is application/json (no other field is
// accepted), else from its form body.
func annulFields(r *http.Request) (id, fecha string, err error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		if err := r.ParseForm(); err != nil {
			return "", "", bodyError(err)
		}
		return r.PostForm.Get("idCfeReferencia"), r.PostForm.Get("fecha"), nil
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return "", "", bodyError(err)
	}
	var req AnnulRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return "", "", web.Invalid(cfe.FieldError{Campo: strings.Trim(name, `"`),
				Mensaje: "campo desconocido: anular recibe idCfeReferencia y fecha"})
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return "", "", web.Invalid(cfe.FieldError{Campo: typeErr.Field, Mensaje: "tipo de dato incorrecto"})
		}
		return "", "", &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespRechazoValidacion,
			Message: "el cuerpo de la solicitud no es JSON válido", Err: err}
	}
	if dec.More() {
		return "", "", &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespRechazoValidacion,
			Message: "el cuerpo de la solicitud tiene datos después del JSON"}
	}
	id = string(req.IdCfeReferencia)
	var text string
	if json.Unmarshal(req.IdCfeReferencia, &text) == nil {
		id = text
	}
	return id, req.Fecha, nil
}
