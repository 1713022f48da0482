package data

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Origins of an issued CFE record.
const (
	OriginSigned   = "emitido" // signed by the sandbox (emitir, firmarXml, anular)
	OriginReceived = "agente"  // signed by a local agent and delivered here
)

// CFERecord is an issued CFE as the service keeps it, with its hosted id.
type CFERecord struct {
	ID           int64           `json:"id"`
	Company      int64           `json:"company"`
	UUID         string          `json:"uuid"`
	Type         cfe.Type        `json:"type"`
	Serie        string          `json:"serie"`
	Nro          int64           `json:"nro"`
	FchEmis      cfe.Date        `json:"fchEmis"`
	TmstFirma    time.Time       `json:"tmstFirma"`
	CAE          cfe.CAEData     `json:"cae"`
	XML          []byte          `json:"xml"` // the signed CFE, byte-exact
	Adenda       string          `json:"adenda,omitempty"`
	CodSeguridad string          `json:"codSeguridad"`
	DatosQR      string          `json:"datosQR"`
	Total        decimal.Decimal `json:"total"`
	Origin       string          `json:"origin"`
	RequestHash  string          `json:"requestHash"` // the content a uuid stands for
	Accepted     *time.Time      `json:"accepted,omitempty"`
	Cancels      int64           `json:"cancels,omitempty"`     // id of the CFE this one annuls
	CancelledBy  int64           `json:"cancelledBy,omitempty"` // id of the counter-receipt that annuls this one
}

func uuidKey(company int64, uuid string) []byte {
	return []byte(strconv.FormatInt(company, 10) + "/" + uuid)
}

func folioKey(company int64, t cfe.Type, serie string, nro int64) []byte {
	return fmt.Appendf(nil, "%d/%d/%s/%d", company, int(t), serie, nro)
}

// GetCFE reads issued CFE id.
func GetCFE(tx *bolt.Tx, id int64) (*CFERecord, error) {
	var c CFERecord
	return &c, GetJSON(tx, bucketCFEs, IDKey(id), "el CFE", &c)
}

// PutCFE stores a change of a record already added.
func PutCFE(tx *bolt.Tx, c *CFERecord) error { return PutJSON(tx, bucketCFEs, IDKey(c.ID), c) }

// CFEByUUID returns the record of company's uuid, or nil.
func CFEByUUID(tx *bolt.Tx, company int64, uuid string) (*CFERecord, error) {
	raw := tx.Bucket(bucketCFEUUIDs).Get(uuidKey(company, uuid))
	if raw == nil {
		return nil, nil
	}
	return GetCFE(tx, KeyID(raw))
}

// CFEByFolio returns the record of company's (type, serie, nro), or nil.
func CFEByFolio(tx *bolt.Tx, company int64, t cfe.Type, serie string, nro int64) (*CFERecord, error) {
	raw := tx.Bucket(bucketFolios).Get(folioKey(company, t, serie, nro))
	if raw == nil {
		return nil, nil
	}
	return GetCFE(tx, KeyID(raw))
}

// AddCFE stores a new record under a new id. ECONFLICT when its uuid or its
// number is taken.
func AddCFE(tx *bolt.Tx, c *CFERecord) error {
	if prev, err := CFEByUUID(tx, c.Company, c.UUID); err != nil || prev != nil {
		return FirstErr(err, ErrUUIDTaken(c.UUID))
	}
	if prev, err := CFEByFolio(tx, c.Company, c.Type, c.Serie, c.Nro); err != nil || prev != nil {
		return FirstErr(err, &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespRechazoValidacion,
			Message: fmt.Sprintf("el número %s-%d del tipo %d ya fue usado por otro CFE (id %d)", c.Serie, c.Nro, int(c.Type), prev.ID)})
	}
	if a, err := AnnulledAt(tx, c.Company, c.Type, c.Serie, c.Nro); err != nil || a != nil {
		return FirstErr(err, &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespRechazoValidacion,
			Message: fmt.Sprintf("el número %s-%d del tipo %d está anulado (números %d a %d, %s): no puede usarse", c.Serie, c.Nro, int(c.Type), a.From, a.To, a.Reason)})
	}
	id, err := nextID(tx, bucketCFEs)
	if err != nil {
		return err
	}
	c.ID = id
	if err := MarkReportDirty(tx, c.Company, c.SignatureDay()); err != nil {
		return err
	}
	if err := tx.Bucket(bucketCFEUUIDs).Put(uuidKey(c.Company, c.UUID), IDKey(id)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketFolios).Put(folioKey(c.Company, c.Type, c.Serie, c.Nro), IDKey(id)); err != nil {
		return err
	}
	return PutCFE(tx, c)
}

// ErrUUIDTaken is the conflict of a uuid already used for other content.
func ErrUUIDTaken(uuid string) error {
	return &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespConflictoUUID,
		Message: fmt.Sprintf("el uuid %s ya se usó para otro comprobante", uuid)}
}

// CompanyCFEs calls fn for each record of company, in id order.
func CompanyCFEs(tx *bolt.Tx, company int64, fn func(*CFERecord) error) error {
	return tx.Bucket(bucketCFEs).ForEach(func(_, raw []byte) error {
		var c CFERecord
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		if c.Company != company {
			return nil
		}
		return fn(&c)
	})
}
