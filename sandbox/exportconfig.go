package sandbox

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// registerDataRoutes registers the endpoints that take the issued CFEs out
// of the service: the export configuration and the Excel file
// (exportconfig.go, excel.go), the accounting export (accounting.go) and the
// e-mail sends with their history (cfemail.go).
func (s *Server) registerDataRoutes(r *mux.Router) {
	auth := func(h http.HandlerFunc) http.HandlerFunc { return s.authenticated(authAny, s.writeError, h) }
	r.HandleFunc("/api/v1/cfeemitido/getConfiguracionExportacionCfe", auth(s.handleGetExportConfig)).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/cfeemitido/guardarConfiguracionExportacionCfe", auth(s.handleSaveExportConfig)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/cfeemitido/exportarExcel", auth(s.handleExportExcel)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/ExportacionContable/exportarSistemaContable", auth(s.handleAccountingExport)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/cfeemitido/enviarPdfPorCorreo", auth(s.handleMailCFE)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/cfeemitido/emailenvios", auth(s.handleMailHistory)).Methods(http.MethodGet)
}

// bucketExportConfigs holds each user's export configuration: user id →
// ExportConfig. Like the other buckets of this part (cfemail.go) it is
// created by the first write, so a read finds it missing on a new file.
var bucketExportConfigs = []byte("exportconfigs")

// writeBucket returns bucket name of an update transaction, creating it.
func writeBucket(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	return tx.CreateBucketIfNotExists(name)
}

// ExportConfig is a user's export configuration: the columns of the Excel
// export, in order, and the filter applied when a request names none.
type ExportConfig struct {
	UserID      int64        `json:"userId"`
	Columnas    []string     `json:"columnas"`
	Filtros     CFEFilter    `json:"filtros"`
	Actualizada *time.Time   `json:"actualizada,omitempty"`
	Predefinida bool         `json:"predefinida"` // nothing saved yet: the default
	Disponibles []ColumnInfo `json:"columnasDisponibles"`
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
	UserID   int64     `json:"userId,omitempty"`
	Columnas []string  `json:"columnas"`
	Filtros  CFEFilter `json:"filtros"`
}

// storedExportConfig is what the bucket keeps.
type storedExportConfig struct {
	Columnas []string  `json:"columnas"`
	Filtros  CFEFilter `json:"filtros"`
	Updated  time.Time `json:"updated"`
}

var errOtherUserConfig = &cfe.Error{Code: cfe.EFORBIDDEN, Message: "no tiene acceso a la configuración de ese usuario"}

// configUser decides whose configuration a request reads or writes. A user
// (JWT) reaches only their own: userId may be omitted, and another user's id
// is 403. An API key acts for its company: userId is required and must name
// a user of that company (anyone else, or a user that does not exist, is
// 403, so that a key cannot probe for users).
func (s *Server) configUser(p *principal, userID int64, sent bool) (int64, error) {
	if p.key == nil {
		if sent && userID != p.user.ID {
			return 0, errOtherUserConfig
		}
		return p.user.ID, nil
	}
	if !sent {
		return 0, invalid(cfe.FieldError{Campo: "userId", Mensaje: "es obligatorio con una API key"})
	}
	err := s.db.view(func(tx *bolt.Tx) error {
		u, err := getUser(tx, userID)
		if err != nil || !u.belongsTo(p.key.Company) {
			return errOtherUserConfig
		}
		return nil
	})
	return userID, err
}

// loadExportConfig returns user's configuration, or the default when the
// user saved none.
func (s *Server) loadExportConfig(user int64) (ExportConfig, error) {
	cfg := ExportConfig{UserID: user, Columnas: append([]string(nil), defaultExportColumns...), Predefinida: true, Disponibles: columnCatalog()}
	err := s.db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExportConfigs)
		if b == nil || b.Get(idKey(user)) == nil {
			return nil
		}
		var st storedExportConfig
		if err := getJSON(tx, bucketExportConfigs, idKey(user), "la configuración", &st); err != nil {
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
		return 0, false, invalid(cfe.FieldError{Campo: "userId", Mensaje: "debe ser un número mayor que cero"})
	}
	return id, true, nil
}

// handleGetExportConfig is GET /api/v1/cfeemitido/getConfiguracionExportacionCfe?userId.
func (s *Server) handleGetExportConfig(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	id, sent, err := parseUserID(r.URL.Query().Get("userId"))
	if err == nil {
		id, err = s.configUser(p, id, sent)
	}
	var cfg ExportConfig
	if err == nil {
		cfg, err = s.loadExportConfig(id)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, cfg)
}

// handleSaveExportConfig is POST
// /api/v1/cfeemitido/guardarConfiguracionExportacionCfe: it replaces the
// user's configuration and answers it as getConfiguracionExportacionCfe does.
func (s *Server) handleSaveExportConfig(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	var req SaveExportConfigRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.UserID < 0 {
		s.writeError(w, r, invalid(cfe.FieldError{Campo: "userId", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	user, err := s.configUser(p, req.UserID, req.UserID != 0)
	if err == nil {
		err = invalid(checkColumns("columnas", req.Columnas, true)...)
	}
	if err == nil {
		err = req.Filtros.check(p)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st := storedExportConfig{Columnas: req.Columnas, Filtros: req.Filtros, Updated: s.now().UTC()}
	err = s.db.update(func(tx *bolt.Tx) error {
		if _, err := writeBucket(tx, bucketExportConfigs); err != nil {
			return err
		}
		return putJSON(tx, bucketExportConfigs, idKey(user), st)
	})
	var cfg ExportConfig
	if err == nil {
		cfg, err = s.loadExportConfig(user)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, cfg)
}

// check validates a filter to be saved: its fields as buscar checks them and,
// when it names a company, the caller's right to it.
func (f CFEFilter) check(p *principal) error {
	g := f
	if g.IdEmpresa == 0 {
		switch {
		case p.key != nil:
			g.IdEmpresa = p.key.Company
		case len(p.user.Companies) > 0:
			g.IdEmpresa = p.user.Companies[0]
		}
	}
	_, err := g.resolve(p)
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
	return invalid(out...)
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
