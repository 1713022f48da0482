package localapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

func postSign(t *testing.T, ts *testServer, body string) (response, map[string]any) {
	t.Helper()
	resp, b := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(body)})
	return resp, decodeObject(t, b)
}

// The outcomes of signing are tested on the real parts (realparts_test.go);
// these tests cover what happens around the issuer.
func TestServer_SignCFE(t *testing.T) {
	t.Run("a panic is a 500 with 99, logged", func(t *testing.T) {
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.Issuer = funcIssuer(func(context.Context, *cfe.Request) (*issuer.Result, error) {
				panic("index out of range in the signer")
			})
		})
		resp, m := postSign(t, ts, `{"uuid":"venta-0006","cfe":{}}`)
		if resp.StatusCode != http.StatusInternalServerError || m["codigo_respuesta"] != "99" ||
			strings.Contains(m["mensaje_respuesta"].(string), "signer") {
			t.Fatalf("status %d answer %v, want 500 with 99 and no detail", resp.StatusCode, m)
		}
		if !strings.Contains(ts.logs.String(), "index out of range in the signer") {
			t.Fatal("the panic was not logged")
		}
		if _, err := ts.client.Health(context.Background()); err != nil {
			t.Fatalf("the server does not answer after a panic: %v", err)
		}
	})

	t.Run("malformed JSON is 400 in the same shape", func(t *testing.T) {
		called := false
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.Issuer = funcIssuer(func(context.Context, *cfe.Request) (*issuer.Result, error) {
				called = true
				return nil, nil
			})
		})
		tests := []struct {
			body  string
			campo string // a field the answer must name; "" when the body is not JSON
		}{
			{`{"uuid": `, ""},
			{`not json`, ""},
			{``, ""},
			{`{"uuid":"venta-0007"}`, "cfe"},
			{`{"uuid":"venta-0007","cfe":{"idDoc":{"tipoCfe":"e-Ticket"}}}`, "cfe.idDoc.tipoCfe"},
			{`{"uuid":"venta-0007","cfe":{},"campoDesconocido":1}`, "campoDesconocido"},
		}
		for _, tc := range tests {
			resp, m := postSign(t, ts, tc.body)
			errs, isList := m["errores"].([]any)
			if resp.StatusCode != http.StatusBadRequest || m["codigo_respuesta"] != "01" || m["mensaje_respuesta"] == "" || !isList {
				t.Fatalf("body %q: status %d answer %v, want 400 with 01, a message and errores", tc.body, resp.StatusCode, m)
			}
			if tc.campo != "" && !strings.Contains(fmt.Sprint(errs), "campo:"+tc.campo+" ") {
				t.Fatalf("body %q: errores %v do not name %s", tc.body, errs, tc.campo)
			}
		}
		if called {
			t.Fatal("the issuer was called for a malformed request")
		}
	})
}

func TestClient_SignCFE(t *testing.T) {
	a := startAgent(t, now.AddDate(0, -1, 0))
	ctx := context.Background()

	resp, err := a.client.SignCFE(ctx, []byte(ticket("venta-0005")))
	if err != nil || resp.CodigoRespuesta != cfe.RespOK || resp.Numero != 1 || resp.UUID != "venta-0005" {
		t.Fatalf("SignCFE = %+v, %v", resp, err)
	}

	resp, err = a.client.SignCFE(ctx, []byte(`{"uuid":`))
	var se *localclient.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest || se.RequestID == "" ||
		resp == nil || resp.CodigoRespuesta != cfe.RespRechazoValidacion || se.Message != resp.MensajeRespuesta {
		t.Fatalf("malformed request: resp %+v, err %v; want the answer and a *StatusError 400", resp, err)
	}
}
