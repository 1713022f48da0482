package sandbox

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
	originSigned   = "emitido" // signed by the sandbox (emitir, firmarXml, anular)
	originReceived = "agente"  // signed by a local agent and delivered here
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

// Buckets of issued CFEs.
var (
	bucketCFEs     = []byte("cfes")     // id → CFERecord
	bucketCFEUUIDs = []byte("cfeuuids") // company/uuid → id
	bucketFolios   = []byte("folios")   // company/type/serie/nro → id
)

func uuidKey(company int64, uuid string) []byte {
	return []byte(strconv.FormatInt(company, 10) + "/" + uuid)
}

func folioKey(company int64, t cfe.Type, serie string, nro int64) []byte {
	return fmt.Appendf(nil, "%d/%d/%s/%d", company, int(t), serie, nro)
}

func getCFE(tx *bolt.Tx, id int64) (*CFERecord, error) {
	var c CFERecord
	return &c, getJSON(tx, bucketCFEs, idKey(id), "el CFE", &c)
}

// cfeByUUID returns the record of company's uuid, or nil.
func cfeByUUID(tx *bolt.Tx, company int64, uuid string) (*CFERecord, error) {
	raw := tx.Bucket(bucketCFEUUIDs).Get(uuidKey(company, uuid))
	if raw == nil {
		return nil, nil
	}
	return getCFE(tx, keyID(raw))
}

// cfeByFolio returns the record of company's (type, serie, nro), or nil.
func cfeByFolio(tx *bolt.Tx, company int64, t cfe.Type, serie string, nro int64) (*CFERecord, error) {
	raw := tx.Bucket(bucketFolios).Get(folioKey(company, t, serie, nro))
	if raw == nil {
		return nil, nil
	}
	return getCFE(tx, keyID(raw))
}

// addCFE stores a new record under a new id. ECONFLICT when its uuid or its
// number is taken.
func addCFE(tx *bolt.Tx, c *CFERecord) error {
	if prev, err := cfeByUUID(tx, c.Company, c.UUID); err != nil || prev != nil {
		return firstErr(err, errUUIDTaken(c.UUID))
	}
	if prev, err := cfeByFolio(tx, c.Company, c.Type, c.Serie, c.Nro); err != nil || prev != nil {
		return firstErr(err, &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespRechazoValidacion,
			Message: fmt.Sprintf("el número %s-%d del tipo %d ya fue usado por otro CFE (id %d)", c.Serie, c.Nro, int(c.Type), prev.ID)})
	}
	id, err := nextID(tx, bucketCFEs)
	if err != nil {
		return err
	}
	c.ID = id
	if err := tx.Bucket(bucketCFEUUIDs).Put(uuidKey(c.Company, c.UUID), idKey(id)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketFolios).Put(folioKey(c.Company, c.Type, c.Serie, c.Nro), idKey(id)); err != nil {
		return err
	}
	return putJSON(tx, bucketCFEs, idKey(id), c)
}

func errUUIDTaken(uuid string) error {
	return &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespConflictoUUID,
		Message: fmt.Sprintf("el uuid %s ya se usó para otro comprobante", uuid)}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// companyCFEs calls fn for each record of company, in id order.
func companyCFEs(tx *bolt.Tx, company int64, fn func(*CFERecord) error) error {
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
