package localapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/httpcode"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Causes that HTTP names with a status of its own; they refine EINVALID.
var (
	errMediaType = errors.New("unsupported media type") // 415
	errMethod    = errors.New("method not allowed")     // 405
)

// statusOf returns the HTTP status of an error answered as a protocol
// error: its code's (httpcode.Status, the one table from code to status),
// refined for the invalid requests that HTTP names with a status of their
// own (405, 413, 415) and for a printer that failed a job of POST /pdf (502).
// Functional outcomes of /sign-cfe do not come here: they are answered with
// 200 and their codigo_respuesta.
func statusOf(err error) int {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errMediaType):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, errMethod):
		return http.StatusMethodNotAllowed
	case errors.Is(err, errPrinter):
		return http.StatusBadGateway
	case errors.Is(err, errThrottled):
		return http.StatusTooManyRequests
	}
	return httpcode.Status(cfe.ErrorCode(err))
}

// errorWriter writes err, with HTTP status status, in one response shape.
type errorWriter func(w http.ResponseWriter, r *http.Request, status int, err error)

// writeError answers a request that failed before producing its normal
// response, in the error shape of the route the request was for. Internal
// errors are logged with their cause; the client sees only a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status >= http.StatusInternalServerError {
		s.logInternal(r, err)
	}
	shape, ok := s.shapes[r.URL.Path]
	if !ok {
		shape = writePlainError
	}
	shape(w, r, status, err)
}

// logInternal logs an error whose cause the client must not see.
func (s *Server) logInternal(r *http.Request, err error) {
	s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
		slog.String("request_id", requestID(r.Context())),
		slog.String("path", r.URL.Path),
		slog.String("err", err.Error()))
}

func writePlainError(w http.ResponseWriter, r *http.Request, status int, err error) {
	writeJSON(w, status, apitype.PlainError{Error: userMessage(r, err)})
}

// userMessage is the Spanish text a client may see for err: the *cfe.Error's
// message, or, for internal errors, a generic text with the request id that
// the log line carries.
func userMessage(r *http.Request, err error) string {
	if cfe.ErrorCode(err) == cfe.EINTERNAL {
		return "error interno del agente; informe a soporte el identificador de solicitud " + requestID(r.Context())
	}
	return cfe.ErrorMessage(err)
}

// writeJSON writes v as the JSON body of a response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may have gone; there is no one left to tell
}

func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, cfe.Errorf(cfe.ENOTFOUND, "no existe la ruta %s en el módulo local", r.URL.Path))
}

func (s *Server) handleMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", strings.Join(s.methods[r.URL.Path], ", "))
	s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Err: errMethod,
		Message: fmt.Sprintf("el método %s no se admite en %s", r.Method, r.URL.Path)})
}
