package data

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// IssuingPoint is a punto de emisión (interface §2.4). Its fields other than
// the identifiers are kept by their JSON names, so the record and the wire
// share one table of fields.
type IssuingPoint struct {
	IdPde    int64             `json:"idPde"`
	Empresa  int64             `json:"empresa"`
	Sucursal int64             `json:"sucursal"`
	Flags    map[string]int    `json:"flags"`
	Texts    map[string]string `json:"texts"`
	Rangos   map[string]int64  `json:"rangos"`
}

// The fields of §2.4 by kind.
var (
	pointFlagFields = []string{"Deshabilitada", "PuedeSolicitarCertificado", "PuedeSolicitarClaveCert",
		"PuedeSolicitarRango", "PuedeEnviarCfe", "PuedeSolicitarFirma", "PuedeAnularCfe", "ActualizacionHabilitada"}
	pointTextFields = []string{"CodigoTerminal", "TipoActualizacionCliente", "codigoTerminalTransAct", "posIdPosLink"}
	pointRangeTypes = []int{101, 102, 103, 111, 112, 113, 181, 182, 121, 122, 123, 124, 131, 132, 133, 141, 142, 143, 151, 152, 153}
)

// NewIssuingPoint returns a point of company with every §2.4 field present:
// enabled, with every permission, no ranges assigned.
func NewIssuingPoint(company int64, terminal string) *IssuingPoint {
	p := &IssuingPoint{Empresa: company, Sucursal: 1, Flags: map[string]int{}, Texts: map[string]string{}, Rangos: map[string]int64{}}
	for _, f := range pointFlagFields {
		p.Flags[f] = 1
	}
	p.Flags["Deshabilitada"] = 0
	for _, f := range pointTextFields {
		p.Texts[f] = ""
	}
	p.Texts["CodigoTerminal"] = terminal
	for _, t := range pointRangeTypes {
		p.Rangos[rangoField(t)] = 0
	}
	return p
}

func rangoField(t int) string { return "RangoCae" + strconv.Itoa(t) }

// Wire is the point as the service shows it: every §2.4 field at the top
// level.
func (p *IssuingPoint) Wire() map[string]any {
	m := map[string]any{"idPde": p.IdPde, "Empresa": p.Empresa, "Sucursal": p.Sucursal}
	for k, v := range p.Flags {
		m[k] = v
	}
	for k, v := range p.Texts {
		m[k] = v
	}
	for k, v := range p.Rangos {
		m[k] = v
	}
	return m
}

// Apply sets the fields of body other than the identifiers, checking each,
// and returns the error of each field refused.
func (p *IssuingPoint) Apply(body map[string]json.RawMessage) []cfe.FieldError {
	var fields []cfe.FieldError
	fail := func(campo, msg string) { fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: msg}) }
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := body[k]
		_, isFlag := p.Flags[k]
		_, isText := p.Texts[k]
		_, isRange := p.Rangos[k]
		switch {
		case k == "idPde" || k == "Empresa":
		case k == "Sucursal":
			var n int64
			if json.Unmarshal(raw, &n) != nil || n < 0 {
				fail(k, "debe ser un entero mayor o igual a cero")
				continue
			}
			p.Sucursal = n
		case isFlag:
			var n int
			if json.Unmarshal(raw, &n) != nil || (n != 0 && n != 1) {
				fail(k, "debe ser 0 o 1")
				continue
			}
			p.Flags[k] = n
		case isText:
			var s string
			if json.Unmarshal(raw, &s) != nil || len([]rune(s)) > maxPointText {
				fail(k, fmt.Sprintf("debe ser un texto de hasta %d caracteres", maxPointText))
				continue
			}
			p.Texts[k] = s
		case isRange:
			var n int64
			if json.Unmarshal(raw, &n) != nil || n < 0 {
				fail(k, "debe ser un entero mayor o igual a cero")
				continue
			}
			p.Rangos[k] = n
		default:
			fail(k, "no es un campo del punto de emisión")
		}
	}
	if p.Texts["CodigoTerminal"] == "" {
		fail("CodigoTerminal", "es obligatorio")
	}
	return fields
}

// GetPoint reads issuing point id.
func GetPoint(tx *bolt.Tx, id int64) (*IssuingPoint, error) {
	var p IssuingPoint
	return &p, GetJSON(tx, bucketPoints, IDKey(id), "el punto de emisión", &p)
}

// PutPoint stores p, giving it an id when it has none.
func PutPoint(tx *bolt.Tx, p *IssuingPoint) error {
	if p.IdPde == 0 {
		id, err := nextID(tx, bucketPoints)
		if err != nil {
			return err
		}
		p.IdPde = id
	}
	return PutJSON(tx, bucketPoints, IDKey(p.IdPde), p)
}

// CompanyPoints returns the ids of company's issuing points.
func CompanyPoints(tx *bolt.Tx, company int64) ([]int64, error) {
	ids := []int64{}
	err := tx.Bucket(bucketPoints).ForEach(func(k, raw []byte) error {
		var p IssuingPoint
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		if p.Empresa == company {
			ids = append(ids, p.IdPde)
		}
		return nil
	})
	return ids, err
}
