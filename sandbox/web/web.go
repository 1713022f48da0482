package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/httpcode"
)

// HeaderRequestID carries the request id of every response.
const HeaderRequestID = "X-Request-Id"

// MaxBodyBytes bounds request bodies: larger ones are refused.
const MaxBodyBytes = 1 << 20

// Status is the HTTP status of an error code: internal/httpcode's table, the
// one the local module answers with too.
func Status(code string) int { return httpcode.Status(code) }

// ErrorBody is the error shape outside the PDF endpoint (ENGINEERING-NOTES:
// {error, code, details, request_id}).
type ErrorBody struct {
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

// requestIDKey carries the request id in the request context.
type requestIDKey struct{}

// WithRequestID gives each request an id (16 hex digits), sent back in
// X-Request-Id and in error bodies.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 8)
		_, _ = rand.Read(b) // crypto/rand's Read never fails
		id := hex.EncodeToString(b)
		w.Header().Set(HeaderRequestID, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// RequestID returns the request's id.
func RequestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

// WithBodyLimit refuses bodies over MaxBodyBytes.
func WithBodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// WriteJSON answers v with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a failure means the client went away
}

// WriteError answers err in the common error shape. Internal errors are
// logged on log and shown as a generic message.
func WriteError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	code := cfe.ErrorCode(err)
	if code == cfe.EINTERNAL {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", RequestID(r), "err", err)
	}
	details := cfe.ListedFields(err)
	WriteJSON(w, httpcode.Status(code), ErrorBody{Error: cfe.ErrorMessage(err), Code: code, Details: details, RequestID: RequestID(r)})
}

// WritePDFError answers err in the PDF endpoint's shape.
func WritePDFError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	code := cfe.ErrorCode(err)
	if code == cfe.EINTERNAL {
		log.Error("pdf request failed", "request_id", RequestID(r), "err", err)
	}
	WriteJSON(w, httpcode.Status(code), pdfErrorBody{Error: cfe.ErrorMessage(err)})
}

// DecodeJSON reads a JSON body into v, refusing unknown shapes with EINVALID.
func DecodeJSON(r *http.Request, v any) error {
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

// Required returns a field error for each empty value, in the order given
// (name, value, name, value...).
func Required(pairs ...string) []cfe.FieldError {
	var out []cfe.FieldError
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			out = append(out, cfe.FieldError{Campo: pairs[i], Mensaje: "es obligatorio"})
		}
	}
	return out
}

// MaxLen returns the field error of a text longer than n characters.
func MaxLen(field, v string, n int) []cfe.FieldError {
	if utf8.RuneCountInString(v) > n {
		return []cfe.FieldError{{Campo: field, Mensaje: "admite hasta " + strconv.Itoa(n) + " caracteres"}}
	}
	return nil
}

// Invalid wraps field errors as an EINVALID error (nil without any).
func Invalid(fields ...cfe.FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	msg := "la solicitud no es válida"
	if len(fields) == 1 {
		msg = fmt.Sprintf("%s: %s", fields[0].Campo, fields[0].Mensaje)
	}
	return &cfe.Error{Code: cfe.EINVALID, Message: msg, Fields: fields}
}

// ErrMethod answers a method a route does not take.
var ErrMethod = &cfe.Error{Code: cfe.EINVALID, Message: "método no permitido para esta ruta"}

// IDString turns an optional numeric id of a JSON body into the form of a
// query parameter ("" when absent).
func IDString(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}
