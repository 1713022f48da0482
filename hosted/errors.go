package hosted

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/httpcode"
)

// APIError is an answer of the service other than a success, as it came.
type APIError struct {
	Status    int    // HTTP status
	Code      string // the service's code: "invalid", "api_key_rate_limit_exceeded", ...
	Message   string // the service's Spanish message
	Details   []cfe.FieldError
	Respuesta string // CodRespuesta of a functional rejection ("01", "02", "05", ...)
	RequestID string // the service's X-Request-Id
	// RetryAfter is the wait a 429 (or 503) asked for; zero when none.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("hosted service: HTTP %d", e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// toError wraps e in the *cfe.Error of its status (httpcode.Code: a
// 429 or a 5xx other than 500 means "not now"), with the service's own
// message for the user.
func (e *APIError) toError(op string) *cfe.Error {
	return &cfe.Error{Code: httpcode.Code(e.Status), Op: op, Message: e.Message, Fields: e.Details, Respuesta: e.Respuesta, Err: e}
}

// errorBody covers every error shape of the service: {error, code, details,
// request_id}, the receipts' {CodRespuesta, MensajeRespuesta, ...} and the PDF
// endpoint's {ok: false, error}.
type errorBody struct {
	Error            string           `json:"error"`
	Code             string           `json:"code"`
	Details          []cfe.FieldError `json:"details"`
	RequestID        string           `json:"request_id"`
	CodRespuesta     string           `json:"CodRespuesta"`
	MensajeRespuesta string           `json:"MensajeRespuesta"`
}

// parseAPIError reads an error answer. A body that is not one of the
// service's shapes still gives an error naming the status.
func parseAPIError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{Status: status, RequestID: h.Get("X-Request-Id"), RetryAfter: retryAfter(h)}
	var b errorBody
	if json.Unmarshal(body, &b) == nil {
		e.Code, e.Details, e.Respuesta = b.Code, b.Details, b.CodRespuesta
		e.Message = b.Error
		if b.MensajeRespuesta != "" {
			e.Message = b.MensajeRespuesta
		}
		if b.RequestID != "" {
			e.RequestID = b.RequestID
		}
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("el servicio en la nube respondió HTTP %d", status)
	}
	return e
}

// RetryAfter returns how long the service asked to wait before the request
// that failed with err may be repeated (a 429's Retry-After), if it did.
func RetryAfter(err error) (time.Duration, bool) {
	var e *APIError
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}
