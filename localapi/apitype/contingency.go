package apitype

import "github.com/cfe-agent/cfe-agent/cfe"

// KeyInResult is the answer of POST /contingencia and the report of
// "cfe-agent contingencia ingresar": paper contingency receipts keyed in
// all or nothing (docs/contingencia.md). OK is true when every line was
// stored (or had been, with the same uuid and content); otherwise nothing
// was stored and the lines say why.
type KeyInResult struct {
	OK         bool        `json:"ok"`
	Ingresados int         `json:"ingresados"` // stored now
	Mensaje    string      `json:"mensaje"`
	Lineas     []KeyInLine `json:"lineas"`
}

// The states of a line of KeyInResult.
const (
	KeyInStored   = "ingresado"    // signed and stored now
	KeyInReplayed = "ya ingresado" // its uuid was stored with the same content
	KeyInRefused  = "rechazado"    // why in Mensaje and Errores
	KeyInHeld     = "sin ingresar" // sound, but another line was refused
)

// KeyInLine is one receipt of a batch, numbered from 1 in the file's order.
type KeyInLine struct {
	Linea   int              `json:"linea"`
	UUID    string           `json:"uuid,omitempty"`
	TipoCFE cfe.Type         `json:"tipo_cfe,omitzero"`
	Serie   string           `json:"serie,omitempty"`
	Numero  int64            `json:"numero,omitzero"`
	Estado  string           `json:"estado"`
	Mensaje string           `json:"mensaje,omitempty"`
	Errores []cfe.FieldError `json:"errores,omitzero"`
}
