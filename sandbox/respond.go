package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/throttle"
)

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	cfe.EINVALID:      http.StatusBadRequest,
	cfe.ENOTFOUND:     http.StatusNotFound,
	cfe.ECONFLICT:     http.StatusConflict,
	cfe.EUNAUTHORIZED: http.StatusUnauthorized,
	cfe.EFORBIDDEN:    http.StatusForbidden,
	cfe.EUNAVAILABLE:  http.StatusServiceUnavailable,
	cfe.EINTERNAL:     http.StatusInternalServerError,
}

// Codes of the error body that are not cfe codes.
const (
	codeKeyRateLimit   = "api_key_rate_limit_exceeded" // interface §7 rule 2
	codeLoginRateLimit = "login_rate_limited"
)

// errorBody is the error shape outside the PDF endpoint (ENGINEERING-NOTES:
// {error, code, details, request_id}).
type errorBody struct {
	Error     string           `json:"error"`
	Code      string           `json:"code"`
	Details   []cfe.FieldError `json:"details"`
	RequestID string           `json:"request_id"`
}

// pdfErrorBody is the PDF endpoint's error shape (interface §7 rule 1).
type pdfErrorBody struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a failure means the client went away
}

// writeError answers err in the common error shape. Internal errors are
// logged and shown as a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := cfe.ErrorCode(err)
	if code == cfe.EINTERNAL {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r), "err", err)
	}
	details := cfe.ListedFields(err)
	writeJSON(w, statusOf[code], errorBody{Error: cfe.ErrorMessage(err), Code: code, Details: details, RequestID: requestID(r)})
}

// writePDFError answers err in the PDF endpoint's shape.
func (s *Server) writePDFError(w http.ResponseWriter, r *http.Request, err error) {
	code := cfe.ErrorCode(err)
	if code == cfe.EINTERNAL {
		s.log.Error("pdf request failed", "request_id", requestID(r), "err", err)
	}
	writeJSON(w, statusOf[code], pdfErrorBody{Error: cfe.ErrorMessage(err)})
}

// writeTooMany answers 429 with Retry-After in whole seconds (at least 1).
func writeTooMany(w http.ResponseWriter, r *http.Request, code, msg string, retry time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(retry)))
	writeJSON(w, http.StatusTooManyRequests, errorBody{Error: msg, Code: code, Details: []cfe.FieldError{}, RequestID: requestID(r)})
}

func retrySeconds(d time.Duration) int { return throttle.RetryAfter(d) }

// decodeJSON reads a JSON body into v, refusing unknown shapes with EINVALID.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var maxErr *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			return cfe.Errorf(cfe.EINVALID, "el cuerpo de la solicitud está vacío")
		case errors.As(err, &maxErr):
			return cfe.Errorf(cfe.EINVALID, "el cuerpo de la solicitud supera %d bytes", maxErr.Limit)
		default:
			return &cfe.Error{Code: cfe.EINVALID, Message: "el cuerpo de la solicitud no es JSON válido", Err: err}
		}
	}
	if dec.More() {
		return cfe.Errorf(cfe.EINVALID, "el cuerpo de la solicitud tiene datos después del JSON")
	}
	return nil
}

// required returns a field error for each empty value, in the order given
// (name, value, name, value...).
func required(pairs ...string) []cfe.FieldError {
	var out []cfe.FieldError
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			out = append(out, cfe.FieldError{Campo: pairs[i], Mensaje: "es obligatorio"})
		}
	}
	return out
}

// invalid wraps field errors as an EINVALID error.
func invalid(fields ...cfe.FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	msg := "la solicitud no es válida"
	if len(fields) == 1 {
		msg = fmt.Sprintf("%s: %s", fields[0].Campo, fields[0].Mensaje)
	}
	return &cfe.Error{Code: cfe.EINVALID, Message: msg, Fields: fields}
}

var errMethod = &cfe.Error{Code: cfe.EINVALID, Message: "método no permitido para esta ruta"}

// notFound returns the ENOTFOUND error of a missing thing ("la API key").
func notFound(what string) error {
	return &cfe.Error{Code: cfe.ENOTFOUND, Message: what + " no existe"}
}
