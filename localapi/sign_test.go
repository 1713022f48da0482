package localapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
)

// issued is a signed e-Ticket as the store would keep it.
func issued(uuid string) *cfe.Issued {
	return &cfe.Issued{
		UUID: uuid, Type: cfe.ETicket, Serie: "A", Nro: 51, RangeID: "101-A-1",
		CAE: cfe.CAEData{CAEID: "90260000123", DNro: 1, HNro: 1000,
			FecVenc: cfe.Date{Year: 2027, Month: time.March, Day: 31}},
		TmstFirma:    time.Date(2026, 5, 14, 18, 4, 5, 0, time.UTC),
		XML:          []byte(`<CFE xmlns="http://cfe.dgi.gub.uy" version="1.0"><eTck/></CFE>`),
		CodSeguridad: "Kq3Xz1",
		DatosQR:      "https://www.efactura.dgi.gub.uy/consultaQR/cfe?215555550018,101,A,51,122.00,14/05/2026,Kq3Xz1%2F",
		Total:        decimal.RequireFromString("122.00"),
	}
}

func postSign(t *testing.T, ts *testServer, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, b := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(body)})
	return resp, decodeObject(t, b)
}

func TestServer_SignCFE(t *testing.T) {
	t.Run("signed", func(t *testing.T) {
		var got *cfe.Request
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.Issuer = funcIssuer(func(_ context.Context, req *cfe.Request) (*issuer.Result, error) {
				got = req
				return &issuer.Result{Issued: issued(req.UUID)}, nil
			})
		})
		resp, m := postSign(t, ts, `{"uuid":"venta-0001","adenda":"Mesa 4","codComercio":"C1","codTerminal":"T1","cfe":{}}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %v", resp.StatusCode, m)
		}
		if got == nil || got.UUID != "venta-0001" || got.Adenda != "Mesa 4" {
			t.Fatalf("the issuer got %+v, want the decoded uuid and adenda", got)
		}
		want := map[string]any{
			"codigo_respuesta":  "00",
			"mensaje_respuesta": "e-Ticket A-51 firmado",
			"uuid":              "venta-0001",
			"tipo_cfe":          float64(101),
			"serie":             "A",
			"numero":            float64(51),
			"id_cae":            "90260000123",
			"nro_inicial_cae":   float64(1),
			"nro_final_cae":     float64(1000),
			"vencimiento_cae":   "2027-03-31",
			"tmst_firma":        "2026-05-14T15:04:05-03:00", // 18:04:05Z in Montevideo
			"cod_seguridad":     "Kq3Xz1",
			"datos_qr":          issued("").DatosQR,
			"xml_firmado":       string(issued("").XML),
		}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("answer\n got %v\nwant %v", m, want)
		}
	})

	t.Run("replayed uuid gets the identical answer", func(t *testing.T) {
		calls := 0
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.Issuer = funcIssuer(func(_ context.Context, req *cfe.Request) (*issuer.Result, error) {
				calls++
				return &issuer.Result{Issued: issued(req.UUID), Replayed: calls > 1}, nil
			})
		})
		body := `{"uuid":"venta-0002","cfe":{}}`
		_, first := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
			headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(body)})
		_, second := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
			headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(body)})
		if calls != 2 || string(first) != string(second) {
			t.Fatalf("calls %d\nfirst  %s\nsecond %s", calls, first, second)
		}
	})

	t.Run("functional rejections are 200 with their code", func(t *testing.T) {
		tests := []struct {
			name    string
			err     error
			code    string
			msg     string
			errores []any
		}{
			{"validation", cfe.Invalid("cfe.Request.ToCFE",
				cfe.FieldError{Campo: "cfe.detalles[0].cantidad", Mensaje: "debe ser mayor que cero"}),
				"01", "cfe.detalles[0].cantidad: debe ser mayor que cero",
				[]any{map[string]any{"campo": "cfe.detalles[0].cantidad", "mensaje": "debe ser mayor que cero"}}},
			{"uuid conflict", &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespConflictoUUID,
				Message: "el uuid venta-0003 ya se usó para otro comprobante"},
				"02", "el uuid venta-0003 ya se usó para otro comprobante", []any{}},
			{"no CAE range", &cfe.Error{Code: cfe.EUNAVAILABLE, Respuesta: cfe.RespSinRangoCAE,
				Message: "no hay rango CAE vigente para e-Ticket"}, "05", "no hay rango CAE vigente para e-Ticket", []any{}},
			{"certificate", &cfe.Error{Code: cfe.EUNAVAILABLE, Respuesta: cfe.RespCertificado,
				Message: "el certificado de firma venció el 2026-05-01"}, "06", "el certificado de firma venció el 2026-05-01", []any{}},
			{"time zone", &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespZonaHoraria,
				Message: "La zona horaria del equipo es UTC"}, "96", "La zona horaria del equipo es UTC", []any{}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ts := startServer(t, func(c *localapi.ServerConfig) {
					c.Issuer = funcIssuer(func(context.Context, *cfe.Request) (*issuer.Result, error) { return nil, tc.err })
				})
				resp, m := postSign(t, ts, `{"uuid":"venta-0003","cfe":{}}`)
				want := map[string]any{"codigo_respuesta": tc.code, "mensaje_respuesta": tc.msg, "uuid": "venta-0003",
					"errores": tc.errores}
				if resp.StatusCode != http.StatusOK || !reflect.DeepEqual(m, want) {
					t.Fatalf("status %d answer\n got %v\nwant %v", resp.StatusCode, m, want)
				}
			})
		}
	})

	t.Run("internal error is 99, logged, never shown", func(t *testing.T) {
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.Issuer = funcIssuer(func(context.Context, *cfe.Request) (*issuer.Result, error) {
				return nil, errors.New("bolt: write /var/lib/cfe-agent/agent.db: no space left on device")
			})
		})
		resp, m := postSign(t, ts, `{"uuid":"venta-0004","cfe":{}}`)
		id := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != http.StatusOK || m["codigo_respuesta"] != "99" || m["uuid"] != "venta-0004" {
			t.Fatalf("status %d answer %v, want 200 with 99", resp.StatusCode, m)
		}
		msg := m["mensaje_respuesta"].(string)
		if strings.Contains(msg, "bolt") || strings.Contains(msg, "agent.db") || !strings.Contains(msg, id) {
			t.Fatalf("message %q shows the cause or lacks the request id %s", msg, id)
		}
		logs := ts.logs.String()
		if !strings.Contains(logs, "no space left on device") || !strings.Contains(logs, id) {
			t.Fatalf("the cause was not logged with the request id:\n%s", logs)
		}
	})

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
	ts := startServer(t, func(c *localapi.ServerConfig) {
		c.Issuer = funcIssuer(func(_ context.Context, req *cfe.Request) (*issuer.Result, error) {
			return &issuer.Result{Issued: issued(req.UUID)}, nil
		})
	})
	ctx := context.Background()

	resp, err := ts.client.SignCFE(ctx, []byte(`{"uuid":"venta-0005","cfe":{}}`))
	if err != nil || resp.CodigoRespuesta != cfe.RespOK || resp.Numero != 51 || resp.UUID != "venta-0005" {
		t.Fatalf("SignCFE = %+v, %v", resp, err)
	}

	resp, err = ts.client.SignCFE(ctx, []byte(`{"uuid":`))
	var se *localapi.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest || se.RequestID == "" ||
		resp == nil || resp.CodigoRespuesta != cfe.RespRechazoValidacion || se.Message != resp.MensajeRespuesta {
		t.Fatalf("malformed request: resp %+v, err %v; want the answer and a *StatusError 400", resp, err)
	}
}
