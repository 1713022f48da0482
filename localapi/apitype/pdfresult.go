package apitype

import "github.com/cfe-agent/cfe-agent/cfe"

// PrintResult is POST /pdf's answer when the caller asks for JSON (Accept:
// application/json preferred to application/pdf): what the printer did, without
// the PDF, which is not even rendered when the printer is a thermal one
// (ESC/POS).
type PrintResult struct {
	OK          bool     `json:"ok"`
	Comprobante string   `json:"comprobante"` // "e-Ticket A-12"
	TipoCFE     cfe.Type `json:"tipo_cfe"`
	Serie       string   `json:"serie"`
	Numero      int64    `json:"numero"`
	Plantilla   string   `json:"plantilla"` // the template it was printed with
	Impresora   string   `json:"impresora"` // the printer as the request named it
	Copias      int      `json:"copias"`    // copies the printer accepted
	// Estado is the job's state: completed, processing or pending.
	Estado  string `json:"estado"`
	Trabajo string `json:"trabajo,omitempty"` // the spooler's job id, when it has one
	// Formato is what the printer was sent: pdf, or escpos for a thermal
	// printer.
	Formato string `json:"formato"`
}
