package sandbox_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

func TestReceive(t *testing.T) {
	t.Parallel()
	e := start(t)
	agent := agentSigner(t)
	signedAt := t0.Add(-time.Hour).In(cfe.Montevideo).Truncate(time.Second)
	doc := ticket(7, signedAt)
	signed := sign(t, agent, doc)
	req := issuing.ReceiveRequest{UUID: "9b1f0b8e-0000-4000-8000-000000000007", XmlFirmado: string(signed.XML), Adenda: "Gracias"}

	var got issuing.ComprobanteResponse
	e.do("POST", "/api/v1/comprobante/recibirFirmado", req, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &got)
	wantQR := "https://www.efactura.dgi.gub.uy/consultaQR/cfe?" + rucAlfa + ",101,A,7,122.00," +
		signedAt.Format("02/01/2006") + "," + strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(signed.DigestValue)
	switch {
	case got.CodRespuesta != "00" || got.CodigoRespuesta != "00":
		t.Errorf("codes %q/%q", got.CodRespuesta, got.CodigoRespuesta)
	case got.ID <= 0 || got.IdComprobante != got.ID:
		t.Errorf("ids %d/%d", got.ID, got.IdComprobante)
	case got.TipoCfe != 101 || got.Serie != "A" || got.Nro != 7:
		t.Errorf("folio %d %s-%d", got.TipoCfe, got.Serie, got.Nro)
	case got.IdCAE != 90269990000 || got.NroInicalCAE != 1 || got.NroFinalCAE != 1000:
		t.Errorf("CAE %d %d-%d", got.IdCAE, got.NroInicalCAE, got.NroFinalCAE)
	case got.CodSeguridad != signed.DigestValue[:6]:
		t.Errorf("CodSeguridad %q, want the first 6 characters of %q", got.CodSeguridad, signed.DigestValue)
	case got.DatosQR != wantQR:
		t.Errorf("DatosQR\n %s\nwant\n %s", got.DatosQR, wantQR)
	case got.XmlFirmado != string(signed.XML):
		t.Error("XmlFirmado is not the delivered bytes")
	}
	t.Run("the stored XML still verifies with xmlsec1", func(t *testing.T) {
		if out, ok := testtool.XMLSecVerify(t, []byte(got.XmlFirmado), ""); !ok {
			t.Errorf("xmlsec1 rejects the stored CFE: %s", out)
		}
	})
	t.Run("a repeated delivery answers the same record", func(t *testing.T) {
		var again issuing.ComprobanteResponse
		e.do("POST", "/api/v1/comprobante/recibirFirmado", req, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &again)
		if again != got {
			t.Errorf("replay %+v differs from %+v", again, got)
		}
	})
	t.Run("the uuid with other content is a conflict", func(t *testing.T) {
		other := req
		other.Adenda = "otra"
		b := e.do("POST", "/api/v1/comprobante/recibirFirmado", other, "X-API-Key", keyAlfa).expect(t, http.StatusConflict)
		var rej struct{ CodRespuesta, Code string }
		b.decode(t, &rej)
		if rej.CodRespuesta != "02" || rej.Code != "conflict" {
			t.Errorf("rejection %s", b.body)
		}
	})
	t.Run("the same number under another uuid is a conflict", func(t *testing.T) {
		again := sign(t, agent, ticket(7, signedAt))
		r := e.do("POST", "/api/v1/comprobante/recibirFirmado", issuing.ReceiveRequest{UUID: "otro", XmlFirmado: string(again.XML)}, "X-API-Key", keyAlfa).expect(t, http.StatusConflict)
		if !strings.Contains(string(r.body), "A-7") {
			t.Errorf("message should name the number: %s", r.body)
		}
	})
	t.Run("the same number is free in another company", func(t *testing.T) {
		// Beta's key delivering Alfa's RUC is refused for the RUC, not the number.
		b := e.do("POST", "/api/v1/comprobante/recibirFirmado", issuing.ReceiveRequest{UUID: "x", XmlFirmado: string(signed.XML)}, "X-API-Key", keyBeta).
			expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 1 || b.Details[0].Campo != "Encabezado/Emisor/RUCEmisor" {
			t.Errorf("details %+v", b.Details)
		}
	})
	t.Run("an idEmpresa other than the key's is 403", func(t *testing.T) {
		r := req
		r.IdEmpresa = 99
		e.do("POST", "/api/v1/comprobante/recibirFirmado", r, "X-API-Key", keyAlfa).expect(t, http.StatusForbidden)
	})
}

func TestReceive_Rejections(t *testing.T) {
	t.Parallel()
	e := start(t)
	agent := agentSigner(t)
	signedAt := t0.Add(-time.Hour).In(cfe.Montevideo).Truncate(time.Second)
	post := func(xml []byte) errBody {
		t.Helper()
		var rej struct {
			CodRespuesta string
			errBody
		}
		r := e.do("POST", "/api/v1/comprobante/recibirFirmado", issuing.ReceiveRequest{UUID: "u-" + strconv.Itoa(len(xml)), XmlFirmado: string(xml)}, "X-API-Key", keyAlfa).
			expect(t, http.StatusBadRequest)
		r.decode(t, &rej)
		if rej.CodRespuesta != "01" {
			t.Errorf("CodRespuesta %q, want 01", rej.CodRespuesta)
		}
		return rej.errBody
	}
	field := func(t *testing.T, b errBody, want string) {
		t.Helper()
		for _, d := range b.Details {
			if d.Campo == want {
				return
			}
		}
		t.Errorf("no error on %s: %+v", want, b)
	}

	t.Run("a changed signed document", func(t *testing.T) {
		xml := sign(t, agent, ticket(8, signedAt)).XML
		field(t, post(bytes.Replace(xml, []byte("Yerba"), []byte("Yerbo"), 1)), "xmlFirmado")
	})
	t.Run("an unsigned document", func(t *testing.T) {
		raw, _ := cfe.MarshalXML(ticket(8, signedAt))
		field(t, post(raw), "xmlFirmado")
	})
	t.Run("a number outside the CAE range", func(t *testing.T) {
		field(t, post(sign(t, agent, ticket(1001, signedAt)).XML), "Encabezado/IdDoc/Nro")
	})
	t.Run("an emission after the CAE expired", func(t *testing.T) {
		c := ticket(9, signedAt)
		c.CAEData.FecVenc = cfe.Date{Year: 2026, Month: time.January, Day: 1}
		field(t, post(sign(t, agent, c).XML), "Encabezado/IdDoc/FchEmis")
	})
	t.Run("a signature time outside the certificate", func(t *testing.T) {
		c := ticket(10, t0.Add(-72*time.Hour).In(cfe.Montevideo).Truncate(time.Second))
		field(t, post(sign(t, agent, c).XML), "Signature")
	})
	t.Run("missing fields", func(t *testing.T) {
		b := e.do("POST", "/api/v1/comprobante/recibirFirmado", map[string]string{}, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 2 || b.Details[0].Campo != "uuid" || b.Details[1].Campo != "xmlFirmado" {
			t.Errorf("details %+v", b.Details)
		}
	})
	t.Run("nothing was recorded", func(t *testing.T) {
		var list []sandbox.IssuedSummary
		e.do("GET", "/api/v1/cfeemitido/buscar", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &list)
		e.do("GET", "/api/v1/cfeemitido/buscar", nil, bearer(e.login("ana", anaPassword).Token)...).expect(t, http.StatusOK).decode(t, &list)
		if len(list) != 0 {
			t.Errorf("recorded %+v", list)
		}
	})
}
