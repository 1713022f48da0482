package hosted

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Comprobante is the service's answer to emission, signing, annulment,
// getByIdCfeEmitido and delivery of a locally signed CFE (interface §2.3).
type Comprobante struct {
	ID               int64  `json:"_Id"`
	CodRespuesta     string `json:"CodRespuesta"`
	MensajeRespuesta string `json:"MensajeRespuesta"`
	IdComprobante    int64  `json:"IdComprobante"`
	TipoCfe          int    `json:"TipoCfe"`
	Serie            string `json:"Serie"`
	Nro              int64  `json:"Nro"`
	IdCAE            int64  `json:"IdCAE"`
	NroInicalCAE     int64  `json:"NroInicalCAE"` // sic: the interface's spelling
	NroFinalCAE      int64  `json:"NroFinalCAE"`
	DatosQR          string `json:"DatosQR"`
	CodSeguridad     string `json:"CodSeguridad"`
	XmlFirmado       string `json:"XmlFirmado"`
}

// SignedCFE is a CFE the agent signed, as recibirFirmado takes it.
type SignedCFE struct {
	UUID       string `json:"uuid"`
	XmlFirmado string `json:"xmlFirmado"` // byte-exact
	Adenda     string `json:"adenda,omitempty"`
}

// Deliver sends a CFE the agent signed offline to
// POST /api/v1/comprobante/recibirFirmado. The service deduplicates on the
// uuid, so the request is repeated on failures that may be transient.
//
// Errors: EINVALID when the service refuses the document (CodRespuesta 01,
// fields named); ECONFLICT when the uuid or the number is already recorded
// with other content (02); EUNAUTHORIZED / EFORBIDDEN for the credential;
// EUNAVAILABLE when the service is down or limiting (see RetryAfter).
func (c *Client) Deliver(ctx context.Context, doc SignedCFE) (*Comprobante, error) {
	req, err := jsonRequest("hosted.Deliver", http.MethodPost, "/api/v1/comprobante/recibirFirmado", doc, true)
	if err != nil {
		return nil, err
	}
	var out Comprobante
	return &out, c.do(ctx, req, &out)
}

// Emitir asks the service to issue and sign a CFE
// (POST /api/v1/comprobante/emitir); req is the emitir request as JSON
// (uuid, adenda, cfe{...}, idEmpresa...). The service deduplicates on the
// uuid, so a request that carries one is repeated on failures that may be
// transient; one without a uuid is sent once, since repeating it could issue
// two CFEs.
//
// Errors: EINVALID when the request breaks a rule (CodRespuesta 01, fields
// named by request path); ECONFLICT when the uuid was used for other content
// (02); EFORBIDDEN; EUNAUTHORIZED; EUNAVAILABLE (no usable CAE range 05,
// service down or limiting).
func (c *Client) Emitir(ctx context.Context, req json.RawMessage) (*Comprobante, error) {
	var id struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(req, &id); err != nil {
		return nil, cfe.Invalid("hosted.Emitir", cfe.FieldError{Campo: "cuerpo", Mensaje: "no es JSON válido"})
	}
	var out Comprobante
	err := c.do(ctx, &request{op: "hosted.Emitir", method: http.MethodPost, path: "/api/v1/comprobante/emitir",
		body: req, contentType: "application/json", retry: id.UUID != ""}, &out)
	return &out, err
}

// Comprobante returns the §2.3 answer of the issued CFE id
// (GET /api/v1/comprobante/getByIdCfeEmitido).
//
// Errors: ENOTFOUND for an unknown id; EFORBIDDEN for a CFE of another
// company; EUNAUTHORIZED; EUNAVAILABLE.
func (c *Client) Comprobante(ctx context.Context, id int64) (*Comprobante, error) {
	var out Comprobante
	err := c.do(ctx, &request{op: "hosted.Comprobante", method: http.MethodGet, path: "/api/v1/comprobante/getByIdCfeEmitido",
		query: url.Values{"idCfeEmitido": {strconv.FormatInt(id, 10)}}, retry: true}, &out)
	return &out, err
}

// Anular makes the counter-receipt of the issued CFE id dated fecha
// (POST /api/v1/comprobante/anular). The service answers a repeated request
// with the same counter-receipt, so it is retried like a read.
//
// Errors: EINVALID (id or fecha refused); ENOTFOUND ("CFE no existe");
// ECONFLICT (already annulled on another date); EFORBIDDEN; EUNAUTHORIZED;
// EUNAVAILABLE.
func (c *Client) Anular(ctx context.Context, id int64, fecha cfe.Date) (*Comprobante, error) {
	form := url.Values{"idCfeReferencia": {strconv.FormatInt(id, 10)}, "fecha": {fecha.String()}}
	var out Comprobante
	err := c.do(ctx, &request{op: "hosted.Anular", method: http.MethodPost, path: "/api/v1/comprobante/anular",
		body: []byte(form.Encode()), contentType: "application/x-www-form-urlencoded", retry: true}, &out)
	return &out, err
}

// Empresa is a company the caller may act for.
type Empresa struct {
	IdEmpresa     int64   `json:"idEmpresa"`
	RUC           string  `json:"ruc"`
	RazonSocial   string  `json:"razonSocial"`
	PuntosEmision []int64 `json:"puntosEmision"`
}

// Empresas lists the caller's companies (GET /api/v1/usuario/empresas): a
// check that the credential works.
//
// Errors: EUNAUTHORIZED when the credential is refused or missing;
// EUNAVAILABLE.
func (c *Client) Empresas(ctx context.Context) ([]Empresa, error) {
	if c.Auth() == AuthNone {
		return nil, errNoCredentials
	}
	var out []Empresa
	err := c.do(ctx, &request{op: "hosted.Empresas", method: http.MethodGet, path: "/api/v1/usuario/empresas", retry: true}, &out)
	return out, err
}
