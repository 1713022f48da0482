package issuing

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Points serves the issuing points (interface §4.5).
type Points struct {
	db  *data.DB
	log *slog.Logger
}

// HandleEdit is POST /api/v1/puntoemision/editar: it updates the fields sent of an existing issuing point.
// idPde, Empresa and CodigoTerminal are required; Empresa acts as idEmpresa.
// Every sent field is checked before anything changes.
func (pt *Points) HandleEdit(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if err := web.DecodeJSON(r, &body); err != nil {
		web.WriteError(pt.log, w, r, err)
		return
	}
	var id, empresa int64
	var fields []cfe.FieldError
	for _, f := range []struct {
		name string
		to   *int64
	}{{"idPde", &id}, {"Empresa", &empresa}} {
		if json.Unmarshal(body[f.name], f.to) != nil || *f.to <= 0 {
			fields = append(fields, cfe.FieldError{Campo: f.name, Mensaje: "es obligatorio y debe ser un entero mayor que cero"})
		}
	}
	if _, ok := body["CodigoTerminal"]; !ok {
		fields = append(fields, cfe.FieldError{Campo: "CodigoTerminal", Mensaje: "es obligatorio"})
	}
	if err := web.Invalid(fields...); err != nil {
		web.WriteError(pt.log, w, r, err)
		return
	}
	company, err := auth.PrincipalOf(r).Company(strconv.FormatInt(empresa, 10))
	if err != nil {
		web.WriteError(pt.log, w, r, err)
		return
	}
	var out map[string]any
	err = pt.db.Update(func(tx *bolt.Tx) error {
		p, err := data.GetPoint(tx, id)
		if err != nil {
			return err
		}
		if p.Empresa != company {
			return &cfe.Error{Code: cfe.EFORBIDDEN, Message: "el punto de emisión no es de la empresa indicada"}
		}
		if err := web.Invalid(p.Apply(body)...); err != nil {
			return err
		}
		out = p.Wire()
		return data.PutPoint(tx, p)
	})
	if err != nil {
		web.WriteError(pt.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, out)
}
