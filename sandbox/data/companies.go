package data

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Company is an emitter. PerMinute and PerHour, when positive, are the
// default rate limits of its API keys. FechaEmisor or Resolucion, WebURL and
// OmitIVAConstancia are its printed footer's data (pdf.Footer); companies
// stored before they existed read them as zero: no Fecha emisor nor
// resolution, e-Tickets verified at www.dgi.gub.uy, and the constancia.
type Company struct {
	ID                int64            `json:"id"`
	RUC               string           `json:"ruc"`
	RazonSocial       string           `json:"razonSocial"`
	FormatoRepImpresa string           `json:"formatoRepImpresa"`
	DomFiscal         string           `json:"domFiscal"`
	Ciudad            string           `json:"ciudad"`
	Departamento      string           `json:"departamento"`
	Templates         []TemplateConfig `json:"templates,omitempty"`
	PerMinute         int              `json:"perMinute,omitempty"`
	PerHour           int              `json:"perHour,omitempty"`
	FechaEmisor       cfe.Date         `json:"fechaEmisor,omitzero"`
	Resolucion        string           `json:"resolucion,omitempty"`
	WebURL            string           `json:"webUrl,omitempty"`
	OmitIVAConstancia bool             `json:"omitIvaConstancia,omitempty"`
}

// TemplateConfig is a company's custom print template (pdf.TemplateConfig
// without a logo), named by variant or FormatoRepImpresa.
type TemplateConfig struct {
	Nombre       string   `json:"nombre"`
	Base         string   `json:"base"` // Estandar, Rollo or Rollo58
	Leyendas     []string `json:"leyendas,omitempty"`
	TamanoFuente float64  `json:"tamanoFuente,omitempty"`
	WebURL       string   `json:"webURL,omitempty"`
}

// Emisor is the company as the CFEs it signs name it.
func (c *Company) Emisor() cfe.Emisor {
	return cfe.Emisor{RUCEmisor: c.RUC, RznSoc: c.RazonSocial, CdgDGISucur: Sucursal,
		DomFiscal: c.DomFiscal, Ciudad: c.Ciudad, Departamento: c.Departamento}
}

// GetCompany reads company id.
func GetCompany(tx *bolt.Tx, id int64) (*Company, error) {
	var c Company
	return &c, GetJSON(tx, bucketCompanies, IDKey(id), "la empresa", &c)
}

// CompanyByRUC returns the id of the company of ruc.
func CompanyByRUC(tx *bolt.Tx, ruc string) (int64, bool) { return lookup(tx, bucketRUCs, ruc) }

// CompanyIDs calls fn with each company's id, in id order.
func CompanyIDs(tx *bolt.Tx, fn func(id int64) error) error {
	c := tx.Bucket(bucketCompanies).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if err := fn(KeyID(k)); err != nil {
			return err
		}
	}
	return nil
}

// PutCompany stores c, giving it an id when it has none. ECONFLICT when
// another company has the same RUC.
func PutCompany(tx *bolt.Tx, c *Company) error {
	if id, ok := lookup(tx, bucketRUCs, c.RUC); ok && id != c.ID {
		return &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf("ya existe una empresa con RUC %s", c.RUC)}
	}
	if c.ID == 0 {
		id, err := nextID(tx, bucketCompanies)
		if err != nil {
			return err
		}
		c.ID = id
	}
	if err := tx.Bucket(bucketRUCs).Put([]byte(c.RUC), IDKey(c.ID)); err != nil {
		return err
	}
	return PutJSON(tx, bucketCompanies, IDKey(c.ID), c)
}
