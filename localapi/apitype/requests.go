package apitype

import (
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// PlainError is the error body of every route except /sign-cfe:
// {"ok": false, "error": "..."} (the local module's documented error shape).
type PlainError struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// SignResponse is the body of every answer of POST /sign-cfe, success or not.
// CodigoRespuesta "00" means signed; any other code is a rejection, explained
// by MensajeRespuesta and Errores, and nothing was signed or consumed.
type SignResponse struct {
	CodigoRespuesta  string `json:"codigo_respuesta"`
	MensajeRespuesta string `json:"mensaje_respuesta"`
	UUID             string `json:"uuid,omitempty"`

	TipoCFE        cfe.Type `json:"tipo_cfe,omitzero"`
	Serie          string   `json:"serie,omitempty"`
	Numero         int64    `json:"numero,omitzero"`
	IDCAE          string   `json:"id_cae,omitempty"` // 11 digits, as DGI writes it
	NroInicialCAE  int64    `json:"nro_inicial_cae,omitzero"`
	NroFinalCAE    int64    `json:"nro_final_cae,omitzero"`
	VencimientoCAE string   `json:"vencimiento_cae,omitempty"` // YYYY-MM-DD
	TmstFirma      string   `json:"tmst_firma,omitempty"`      // RFC 3339 at -03:00
	CodSeguridad   string   `json:"cod_seguridad,omitempty"`
	DatosQR        string   `json:"datos_qr,omitempty"`
	XMLFirmado     string   `json:"xml_firmado,omitempty"`

	// Errores lists the fields a rejection is about; present (maybe empty)
	// on every rejection, absent on success.
	Errores []cfe.FieldError `json:"errores,omitzero"`
}

// PDFRequest is the body of POST /pdf: the CFE (uuid, or tipo_cfe + serie +
// numero), the template (variant), the printer (impresora) and the copies
// when the profile gives none for that printer (fallback_copies).
// cod_comercio and cod_terminal are accepted and ignored, as are fields the
// module does not know.
type PDFRequest struct {
	UUID           string   `json:"uuid,omitempty"`
	TipoCFE        cfe.Type `json:"tipo_cfe,omitzero"`
	Serie          string   `json:"serie,omitempty"`
	Numero         int64    `json:"numero,omitzero"`
	Variant        string   `json:"variant,omitempty"`
	Impresora      string   `json:"impresora"`
	FallbackCopies int      `json:"fallback_copies,omitzero"`
}

// BackupResult is the answer of POST /backup.
type BackupResult struct {
	OK          bool      `json:"ok"`
	Archivo     string    `json:"archivo"`     // the verified copy
	Bytes       int64     `json:"bytes"`       // its size
	TomadaEn    time.Time `json:"tomada_en"`   // the instant it copies
	Transaccion int       `json:"transaccion"` // the store's transaction it copies
	CFEs        int       `json:"cfes"`
	Pendientes  int       `json:"pendientes"` // outbox entries
	Rechazados  int       `json:"rechazados"`
	Rangos      int       `json:"rangos"`
}

// RecoverRequest is the body of POST /recuperar: the stored CFE to recover
// and where to look for an intact copy of it.
type RecoverRequest struct {
	UUID string `json:"uuid"`
	// Copias are backup files (paths on the agent's machine) to take it
	// from, in order; when empty, the backups the agent knows (its backups
	// folder and the profile's backup.folder), newest first.
	Copias []string `json:"copias,omitempty"`
	// SinServicio leaves out the hosted service's copy, otherwise asked
	// after the backups.
	SinServicio bool `json:"sin_servicio,omitempty"`
}

// RecoverResult is the answer of POST /recuperar: the CFE recovered and
// where from.
type RecoverResult struct {
	OK      bool     `json:"ok"`
	UUID    string   `json:"uuid"`
	TipoCFE cfe.Type `json:"tipo_cfe"`
	Nombre  string   `json:"nombre"`
	Serie   string   `json:"serie"`
	Numero  int64    `json:"numero"`
	// Origen is the copy it came from: a backup file, or "servicio".
	Origen string `json:"origen"`
	// EnCola is true when it went back to the outbox (it had been held out
	// of delivery): the agent sends it next.
	EnCola bool `json:"en_cola"`
	// Descartadas are the copies tried first that could not give it back,
	// each with the reason (Spanish).
	Descartadas []string `json:"descartadas"`
}
