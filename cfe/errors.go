package cfe

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes shared by every adapter. internal/httpcode maps each to one
// HTTP status and back, at the HTTP edge.
const (
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	EUNAVAILABLE  = "unavailable"
	EINTERNAL     = "internal"
)

// Error is the application error. Message is safe to show to a user (Spanish);
// Err is the underlying cause, for logs only.
type Error struct {
	Code    string
	Op      string
	Message string
	Fields  []FieldError // validation failures, when Code is EINVALID
	// Respuesta is the functional response code (codigo_respuesta) when the
	// error is a functional rejection of a signing request: see the Resp* constants.
	Respuesta string
	Err       error
}

// FieldError names a field of the request (or model) and the rule it breaks.
type FieldError struct {
	Campo   string `json:"campo"`
	Mensaje string `json:"mensaje"`
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		b.WriteString(e.Code)
	}
	if len(e.Fields) > 1 { // a single field is the message itself (see Invalid)
		for _, f := range e.Fields {
			fmt.Fprintf(&b, "; %s: %s", f.Campo, f.Mensaje)
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted user message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != "" {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user message of the first *Error in err's chain, and
// a generic Spanish message for any other error (internal details stay in logs).
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "error interno"
}

// ErrorFields returns the field errors of the first *Error in err's chain.
func ErrorFields(err error) []FieldError {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}

// Invalid builds an EINVALID error from a list of field errors.
func Invalid(op string, fields ...FieldError) *Error {
	msg := "el comprobante no cumple las reglas de DGI"
	if len(fields) == 1 {
		msg = fields[0].Campo + ": " + fields[0].Mensaje
	}
	return &Error{Code: EINVALID, Op: op, Message: msg, Fields: fields, Respuesta: RespRechazoValidacion}
}

// Functional response codes (codigo_respuesta) of a signing request. "00" and
// "96" are the interface's; the others are ours and documented in README.md.
const (
	RespOK                = "00" // signed
	RespRechazoValidacion = "01" // the request breaks a DGI rule; see errores
	RespConflictoUUID     = "02" // the uuid was already used for a different receipt
	RespSinRangoCAE       = "05" // no usable CAE range for the type (none, used up or expired)
	RespCertificado       = "06" // the signing certificate is missing, expired or unusable
	RespZonaHoraria       = "96" // the machine is not on America/Montevideo at -03:00
	RespErrorInterno      = "99" // an internal error; nothing was signed or consumed
)

// RespuestaOf returns the functional response code of err: RespOK for nil, the
// code carried by a *Error, and RespErrorInterno otherwise.
func RespuestaOf(err error) string {
	if err == nil {
		return RespOK
	}
	var e *Error
	if errors.As(err, &e) && e.Respuesta != "" {
		return e.Respuesta
	}
	return RespErrorInterno
}

// UserFacingFault reports whether err is a failure of the agent whose message
// the cashier should read instead of a generic one: a *Error that sets
// RespErrorInterno itself and is not internal (the store's failed commit says
// that the disk is full and that nothing was consumed; a damaged store file
// says what the technician must do).
func UserFacingFault(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Respuesta == RespErrorInterno && e.Code != EINTERNAL && e.Message != ""
}

// MaxListedFields is how many field errors an error body lists at most;
// ListedFields adds one entry saying how many more there were.
const MaxListedFields = 20

// ListedFields returns the field errors of err as an error body lists them:
// never nil, at most MaxListedFields of them in their order, followed, when
// there were more, by one entry "y N más". Every adapter that writes field
// errors to a client goes through it, so that a request with thousands of
// faults gets a small answer.
func ListedFields(err error) []FieldError {
	fields := ErrorFields(err)
	if len(fields) <= MaxListedFields {
		if fields == nil {
			return []FieldError{}
		}
		return fields
	}
	out := make([]FieldError, MaxListedFields, MaxListedFields+1)
	copy(out, fields)
	return append(out, FieldError{Campo: "errores", Mensaje: fmt.Sprintf("y %d más", len(fields)-MaxListedFields)})
}
