package sandbox

import (
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func (s *Server) registerKeyRoutes(r *mux.Router) {
	jwtOnly := func(h http.HandlerFunc) http.HandlerFunc { return s.authenticated(authJWT, s.writeError, h) }
	r.HandleFunc("/api/v1/apikeys", jwtOnly(s.handleListKeys)).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/apikeys", jwtOnly(s.handleCreateKey)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/apikeys/{id}/revocar", jwtOnly(s.handleRevokeKey)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/apikeys/{id}/rate-limit", jwtOnly(s.handleKeyLimits)).Methods(http.MethodPost)
}

// Key states as the listing shows them.
const (
	keyActive  = "activa"
	keyRevoked = "revocada"
)

// KeyResponse is a company API key as the service shows it: never the key.
type KeyResponse struct {
	ID              int64      `json:"id"`
	IdEmpresa       int64      `json:"idEmpresa"`
	Nombre          string     `json:"nombre"`
	Descripcion     string     `json:"descripcion"`
	Prefijo         string     `json:"prefijo"`
	Estado          string     `json:"estado"`
	Creada          time.Time  `json:"creada"`
	Revocada        *time.Time `json:"revocada,omitempty"`
	LimitePorMinuto int        `json:"limitePorMinuto"`
	LimitePorHora   int        `json:"limitePorHora"`
}

// CreatedKeyResponse answers POST /api/v1/apikeys: the record plus the
// complete key, shown this once.
type CreatedKeyResponse struct {
	KeyResponse
	ApiKey string `json:"ApiKey"`
}

// CreateKeyRequest is the body of POST /api/v1/apikeys. IdEmpresa is needed
// only by users of several companies.
type CreateKeyRequest struct {
	Nombre      string `json:"nombre"`
	Descripcion string `json:"descripcion"`
	IdEmpresa   int64  `json:"idEmpresa,omitempty"`
}

// KeyLimitsRequest is the body of POST /api/v1/apikeys/{id}/rate-limit.
type KeyLimitsRequest struct {
	LimitePorMinuto int `json:"limitePorMinuto"`
	LimitePorHora   int `json:"limitePorHora"`
}

func (s *Server) keyResponse(tx *bolt.Tx, k *APIKey) KeyResponse {
	c, _ := getCompany(tx, k.Company)
	perMinute, perHour := k.limits(c)
	state := keyActive
	if k.Revoked != nil {
		state = keyRevoked
	}
	return KeyResponse{ID: k.ID, IdEmpresa: k.Company, Nombre: k.Nombre, Descripcion: k.Descripcion,
		Prefijo: k.Hint, Estado: state, Creada: k.Created, Revocada: k.Revoked,
		LimitePorMinuto: perMinute, LimitePorHora: perHour}
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request) {
	company, err := principalOf(r).company(r.URL.Query().Get("idEmpresa"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var out []KeyResponse
	err = s.db.view(func(tx *bolt.Tx) error {
		keys, err := companyKeys(tx, company)
		out = make([]KeyResponse, 0, len(keys))
		for _, k := range keys {
			out = append(out, s.keyResponse(tx, k))
		}
		return err
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request) {
	var req CreateKeyRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	fields := required("nombre", req.Nombre)
	fields = append(fields, maxLen("nombre", req.Nombre, 100)...)
	fields = append(fields, maxLen("descripcion", req.Descripcion, 500)...)
	if err := invalid(fields...); err != nil {
		s.writeError(w, r, err)
		return
	}
	company, err := principalOf(r).company(idString(req.IdEmpresa))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	secret := newSecret(s.prefix)
	k := &APIKey{Company: company, Nombre: req.Nombre, Descripcion: req.Descripcion,
		Hint: keyHint(secret, s.prefix), Hash: hashSecret(secret), Created: s.now().UTC()}
	var resp CreatedKeyResponse
	err = s.db.update(func(tx *bolt.Tx) error {
		if err := putKey(tx, k); err != nil {
			return err
		}
		resp = CreatedKeyResponse{KeyResponse: s.keyResponse(tx, k), ApiKey: secret}
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, resp)
}

// handleRevokeKey revokes a key; revoking a revoked key changes nothing.
func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request) {
	s.updateKey(w, r, func(k *APIKey) error {
		if k.Revoked == nil {
			now := s.now().UTC()
			k.Revoked = &now
		}
		return nil
	})
}

func (s *Server) handleKeyLimits(w http.ResponseWriter, r *http.Request) {
	var req KeyLimitsRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := invalid(checkLimits(req)...); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.updateKey(w, r, func(k *APIKey) error {
		k.PerMinute, k.PerHour = req.LimitePorMinuto, req.LimitePorHora
		return nil
	})
}

func checkLimits(req KeyLimitsRequest) []cfe.FieldError {
	var fields []cfe.FieldError
	rule := "debe ser un entero entre 1 y " + strconv.Itoa(maxKeyLimit)
	if req.LimitePorMinuto < 1 || req.LimitePorMinuto > maxKeyLimit {
		fields = append(fields, cfe.FieldError{Campo: "limitePorMinuto", Mensaje: rule})
	}
	if req.LimitePorHora < 1 || req.LimitePorHora > maxKeyLimit {
		fields = append(fields, cfe.FieldError{Campo: "limitePorHora", Mensaje: rule})
	}
	if len(fields) == 0 && req.LimitePorHora < req.LimitePorMinuto {
		fields = append(fields, cfe.FieldError{Campo: "limitePorHora", Mensaje: "no puede ser menor que limitePorMinuto"})
	}
	return fields
}

// updateKey applies change to the key named by the path, when it belongs to
// one of the caller's companies, and answers the updated record.
func (s *Server) updateKey(w http.ResponseWriter, r *http.Request, change func(*APIKey) error) {
	p := principalOf(r)
	id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, invalid(cfe.FieldError{Campo: "id", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	var resp KeyResponse
	err = s.db.update(func(tx *bolt.Tx) error {
		k, err := getKey(tx, id)
		if err != nil {
			return err
		}
		if !p.user.belongsTo(k.Company) {
			return errOtherCompany
		}
		if err := change(k); err != nil {
			return err
		}
		resp = s.keyResponse(tx, k)
		return putKey(tx, k)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func maxLen(field, v string, n int) []cfe.FieldError {
	if utf8.RuneCountInString(v) > n {
		return []cfe.FieldError{{Campo: field, Mensaje: "admite hasta " + strconv.Itoa(n) + " caracteres"}}
	}
	return nil
}

// idString turns an optional numeric id of a JSON body into the form of a
// query parameter ("" when absent).
func idString(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}
