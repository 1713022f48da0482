package reports

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Exports serves what takes the issued CFEs out as files: the export
// configuration, the Excel file and the accounting CSV.
type Exports struct {
	db      *data.DB
	cfes    CFEs
	now     func() time.Time
	log     *slog.Logger
	maxRows int
}

// bucketExportConfigs holds each user's export configuration: user id →
// ExportConfig. Like the other rooms' own buckets it is
// created by the first write, so a read finds it missing on a new file.
var bucketExportConfigs = []byte("exportconfigs")

// ExportConfig is a user's export configuration: the columns of the Excel
// export, in order, and the filter applied when a request names none.
type ExportConfig struct {
	UserID      int64             `json:"userId"`
	Columnas    []string          `json:"columnas"`
	Filtros     issuing.CFEFilter `json:"filtros"`
	Actualizada *time.Time        `json:"actualizada,omitempty"`
	Predefinida bool              `json:"predefinida"` // nothing saved yet: the default
	Disponibles []ColumnInfo      `json:"columnasDisponibles"`
}

// ColumnInfo describes one column the Excel export can hold.
type ColumnInfo struct {
	Nombre string `json:"nombre"`
	Titulo string `json:"titulo"`
	Tipo   string `json:"tipo"` // texto, entero, fecha, fechaHora, importe
}

// SaveExportConfigRequest is the body of
// POST /api/v1/cfeemitido/guardarConfiguracionExportacionCfe.
type SaveExportConfigRequest struct {
	UserID   int64             `json:"userId,omitempty"`
	Columnas []string          `json:"columnas"`
	Filtros  issuing.CFEFilter `json:"filtros"`
}

// storedExportConfig is what the bucket keeps.
type storedExportConfig struct {
	Columnas []string          `json:"columnas"`
	Filtros  issuing.CFEFilter `json:"filtros"`
	Updated  time.Time         `json:"updated"`
}

var errOtherUserConfig = &cfe.Error{Code: cfe.EFORBIDDEN, Message: "no tiene acceso a la configuración de ese usuario"}

// configUser decides whose configuration a request reads or writes. A user
// (JWT) reaches only their own: userId may be omitted, and another user's id
// is 403. An API key acts for its company: userId is required and must name
// a user of that company (anyone else, or a user that does not exist, is
// 403, so that a key cannot probe for users).
func (x *Exports) configUser(p *auth.Principal, userID int64, sent bool) (int64, error) {
	if p.Key == nil {
		if sent && userID != p.User.ID {
			return 0, errOtherUserConfig
		}
		return p.User.ID, nil
	}
	if !sent {
		return 0, web.Invalid(cfe.FieldError{Campo: "userId", Mensaje: "es obligatorio con una API key"})
	}
	err := x.db.View(func(tx *bolt.Tx) error {
		u, err := data.GetUser(tx, userID)
		if err != nil || !u.BelongsTo(p.Key.Company) {
			return errOtherUserConfig
		}
		return nil
	})
	return userID, err
}

// loadConfig returns user's configuration, or the default when the
// user saved none.
func (x *Exports) loadConfig(user int64) (ExportConfig, error) {
	cfg := ExportConfig{UserID: user, Columnas: append([]string(nil), defaultExportColumns...), Predefinida: true, Disponibles: columnCatalog()}
	err := x.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExportConfigs)
		if b == nil || b.Get(data.IDKey(user)) == nil {
			return nil
		}
		var st storedExportConfig
		if err := data.GetJSON(tx, bucketExportConfigs, data.IDKey(user), "la configuración", &st); err != nil {
			return err
		}
		updated := st.Updated
		cfg.Columnas, cfg.Filtros, cfg.Actualizada, cfg.Predefinida = st.Columnas, st.Filtros, &updated, false
		return nil
	})
	return cfg, err
}

// parseUserID reads the optional userId query parameter.
func parseUserID(v string) (int64, bool, error) {
	if v == "" {
		return 0, false, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, false, web.Invalid(cfe.FieldError{Campo: "userId", Mensaje: "debe ser un número mayor que cero"})
	}
	return id, true, nil
}

// HandleGetConfig is GET /api/v1/cfeemitido/getConfiguracionExportacionCfe?userId.
func (x *Exports) HandleGetConfig(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalOf(r)
	id, sent, err := parseUserID(r.URL.Query().Get("userId"))
	if err == nil {
		id, err = x.configUser(p, id, sent)
	}
	var cfg ExportConfig
	if err == nil {
		cfg, err = x.loadConfig(id)
	}
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, cfg)
}

// HandleSaveConfig is POST
// /api/v1/cfeemitido/guardarConfiguracionExportacionCfe: it replaces the
// user's configuration and answers it as getConfiguracionExportacionCfe does.
func (x *Exports) HandleSaveConfig(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalOf(r)
	var req SaveExportConfigRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	if req.UserID < 0 {
		web.WriteError(x.log, w, r, web.Invalid(cfe.FieldError{Campo: "userId", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	user, err := x.configUser(p, req.UserID, req.UserID != 0)
	if err == nil {
		err = web.Invalid(checkColumns("columnas", req.Columnas, true)...)
	}
	if err == nil {
		err = checkSavedFilter(req.Filtros, p)
	}
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	st := storedExportConfig{Columnas: req.Columnas, Filtros: req.Filtros, Updated: x.now().UTC()}
	err = x.db.Update(func(tx *bolt.Tx) error {
		return data.PutJSON(tx, bucketExportConfigs, data.IDKey(user), st)
	})
	var cfg ExportConfig
	if err == nil {
		cfg, err = x.loadConfig(user)
	}
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, cfg)
}

// checkSavedFilter validates a filter to be saved: its fields as buscar checks them and,
// when it names a company, the caller's right to it.
func checkSavedFilter(f issuing.CFEFilter, p *auth.Principal) error {
	g := f
	if g.IdEmpresa == 0 {
		switch {
		case p.Key != nil:
			g.IdEmpresa = p.Key.Company
		case len(p.User.Companies) > 0:
			g.IdEmpresa = p.User.Companies[0]
		}
	}
	_, err := g.Resolve(p)
	return prefixFields("filtros.", err)
}

// prefixFields renames the fields of an EINVALID error as members of
// prefix (filtros.tipoFiltro).
func prefixFields(prefix string, err error) error {
	fields := cfe.ListedFields(err)
	if cfe.ErrorCode(err) != cfe.EINVALID || len(fields) == 0 {
		return err
	}
	out := make([]cfe.FieldError, len(fields))
	for i, f := range fields {
		out[i] = cfe.FieldError{Campo: prefix + f.Campo, Mensaje: f.Mensaje}
	}
	return web.Invalid(out...)
}

// checkColumns returns the errors of a list of column names: each known, no
// repetitions, and at least one when needed.
func checkColumns(field string, cols []string, needed bool) []cfe.FieldError {
	if len(cols) == 0 {
		if needed {
			return []cfe.FieldError{{Campo: field, Mensaje: "indique al menos una columna"}}
		}
		return nil
	}
	if len(cols) > len(exportColumns) {
		return []cfe.FieldError{{Campo: field, Mensaje: "tiene más columnas que las disponibles"}}
	}
	var out []cfe.FieldError
	seen := map[string]bool{}
	for i, c := range cols {
		name := field + "[" + strconv.Itoa(i) + "]"
		switch {
		case columnByName(c) == nil:
			out = append(out, cfe.FieldError{Campo: name, Mensaje: "columna desconocida: " + strconv.Quote(c)})
		case seen[c]:
			out = append(out, cfe.FieldError{Campo: name, Mensaje: "columna repetida: " + strconv.Quote(c)})
		}
		seen[c] = true
	}
	return out
}
