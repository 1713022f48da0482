package localclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// TestClient_errors: a failed answer is a *cfe.Error whose code follows the
// HTTP status as hosted maps the hosted service's, with the module's Spanish
// message, wrapping a *StatusError with the status and the request id.
func TestClient_errors(t *testing.T) {
	tests := []struct {
		status   int
		body     string
		wantCode string
		wantMsg  string
	}{
		{http.StatusBadRequest, `{"ok":false,"error":"falta impresora"}`, cfe.EINVALID, "falta impresora"},
		{http.StatusUnauthorized, `{"ok":false,"error":"falta el token"}`, cfe.EUNAUTHORIZED, "falta el token"},
		{http.StatusForbidden, `{"ok":false,"error":"solo desde este equipo"}`, cfe.EFORBIDDEN, "solo desde este equipo"},
		{http.StatusNotFound, `{"ok":false,"error":"no existe"}`, cfe.ENOTFOUND, "no existe"},
		{http.StatusConflict, `{"ok":false,"error":"en uso"}`, cfe.ECONFLICT, "en uso"},
		{http.StatusRequestEntityTooLarge, `{"ok":false,"error":"demasiado grande"}`, cfe.EINVALID, "demasiado grande"},
		{http.StatusUnsupportedMediaType, `{"ok":false,"error":"se espera JSON"}`, cfe.EINVALID, "se espera JSON"},
		{http.StatusTooManyRequests, `{"ok":false,"error":"espere"}`, cfe.EUNAVAILABLE, "espere"},
		{http.StatusInternalServerError, `{"ok":false,"error":"error interno"}`, cfe.EINTERNAL, "error interno"},
		{http.StatusBadGateway, `{"ok":false,"error":"la impresora no responde"}`, cfe.EUNAVAILABLE, "la impresora no responde"},
		{http.StatusServiceUnavailable, `{"ok":false,"error":"no disponible"}`, cfe.EUNAVAILABLE, "no disponible"},
		{http.StatusBadRequest, `{"codigo_respuesta":"01","mensaje_respuesta":"cuerpo inválido"}`, cfe.EINVALID, "cuerpo inválido"},
		{http.StatusServiceUnavailable, `no es JSON`, cfe.EUNAVAILABLE, "el módulo local respondió HTTP 503"},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status)+" "+tc.wantMsg, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("X-Request-Id", "req-1")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := localclient.New(srv.URL, localclient.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.State(context.Background())
			if got := cfe.ErrorCode(err); got != tc.wantCode {
				t.Errorf("code %s, want %s (%v)", got, tc.wantCode, err)
			}
			if got := cfe.ErrorMessage(err); got != tc.wantMsg {
				t.Errorf("message %q, want %q", got, tc.wantMsg)
			}
			var se *localclient.StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status || se.RequestID != "req-1" {
				t.Errorf("error %v does not wrap a *StatusError %d with the request id", err, tc.status)
			}
		})
	}
}

// TestClient_unreachable: a module that does not listen is EUNAVAILABLE, and
// the connection's failure stays in the chain.
func TestClient_unreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := localclient.New("http://"+addr, localclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Health(context.Background())
	var oe *net.OpError
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !errors.As(err, &oe) {
		t.Fatalf("Health on a closed port: %v (code %s), want EUNAVAILABLE wrapping the *net.OpError", err, cfe.ErrorCode(err))
	}
	var se *localclient.StatusError
	if errors.As(err, &se) {
		t.Errorf("an unreachable module is no HTTP answer, but the error holds %v", se)
	}
}

// TestNew: only http and https base URLs.
func TestNew(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:18787", "ftp://127.0.0.1", "http://"} {
		if _, err := localclient.New(u, localclient.Options{}); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	if _, err := localclient.New("http://127.0.0.1:18787/", localclient.Options{}); err != nil {
		t.Errorf("New with a trailing slash: %v", err)
	}
}
