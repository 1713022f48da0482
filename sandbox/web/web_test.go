package web_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Every error is answered with its code's status, in the common shape, with
// the request's id; an internal error's cause is logged, never shown.
func TestWriteError(t *testing.T) {
	t.Parallel()
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	for _, c := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{web.Invalid(cfe.FieldError{Campo: "ids", Mensaje: "indique al menos un CFE"}), 400, cfe.EINVALID, "ids: indique al menos un CFE"},
		{web.Invalid(cfe.FieldError{Campo: "a", Mensaje: "x"}, cfe.FieldError{Campo: "b", Mensaje: "y"}), 400, cfe.EINVALID, "la solicitud no es válida"},
		{&cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "API key inválida"}, 401, cfe.EUNAUTHORIZED, "API key inválida"},
		{&cfe.Error{Code: cfe.EFORBIDDEN, Message: "no"}, 403, cfe.EFORBIDDEN, "no"},
		{&cfe.Error{Code: cfe.ENOTFOUND, Message: "el CFE no existe"}, 404, cfe.ENOTFOUND, "el CFE no existe"},
		{&cfe.Error{Code: cfe.ECONFLICT, Message: "c"}, 409, cfe.ECONFLICT, "c"},
		{&cfe.Error{Code: cfe.EUNAVAILABLE, Message: "u"}, 503, cfe.EUNAVAILABLE, "u"},
		{errors.New("disk on fire: secret-cause"), 500, cfe.EINTERNAL, ""},
	} {
		rec := httptest.NewRecorder()
		h := web.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { web.WriteError(log, w, r, c.err) }))
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
		var b web.ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatal(err)
		}
		id := rec.Header().Get(web.HeaderRequestID)
		if rec.Code != c.status || b.Code != c.code || (c.msg != "" && b.Error != c.msg) || b.RequestID != id ||
			!regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(id) || b.Details == nil {
			t.Errorf("%v: %d %s (id %q)", c.err, rec.Code, rec.Body, id)
		}
		if strings.Contains(rec.Body.String(), "secret-cause") {
			t.Errorf("an internal cause reached the body: %s", rec.Body)
		}
	}
	if !strings.Contains(logged.String(), "secret-cause") {
		t.Errorf("the internal error was not logged: %q", logged.String())
	}
}

// DecodeJSON names what is wrong with a body, in Spanish, as EINVALID.
func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		``:           "está vacío",
		`{`:          "no es JSON válido",
		`{"a":1} {}`: "datos después del JSON",
		strings.Repeat(" ", web.MaxBodyBytes+1) + "{}": "supera",
	} {
		r := httptest.NewRequest("POST", "/x", strings.NewReader(body))
		var out map[string]any
		web.WithBodyLimit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			err := web.DecodeJSON(r, &out)
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), want) {
				t.Errorf("body of %d bytes: %v, want EINVALID saying %q", len(body), err, want)
			}
			_, _ = io.Copy(io.Discard, r.Body)
		})).ServeHTTP(httptest.NewRecorder(), r)
	}
}
