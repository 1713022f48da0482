package auth

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Keys serves the management of company API keys (interface §2.2, §4.2):
// JWT only, for the caller's companies.
type Keys struct {
	db     *data.DB
	prefix string // this environment's key prefix
	now    func() time.Time
	log    *slog.Logger
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

func (k *Keys) writeError(w http.ResponseWriter, r *http.Request, err error) {
	web.WriteError(k.log, w, r, err)
}

func keyResponse(tx *bolt.Tx, key *data.APIKey) KeyResponse {
	c, _ := data.GetCompany(tx, key.Company)
	perMinute, perHour := key.Limits(c)
	state := keyActive
	if key.Revoked != nil {
		state = keyRevoked
	}
	return KeyResponse{ID: key.ID, IdEmpresa: key.Company, Nombre: key.Nombre, Descripcion: key.Descripcion,
		Prefijo: key.Hint, Estado: state, Creada: key.Created, Revocada: key.Revoked,
		LimitePorMinuto: perMinute, LimitePorHora: perHour}
}

// HandleList is GET /api/v1/apikeys[?idEmpresa]: the company's keys.
func (k *Keys) HandleList(w http.ResponseWriter, r *http.Request) {
	company, err := PrincipalOf(r).Company(r.URL.Query().Get("idEmpresa"))
	if err != nil {
		k.writeError(w, r, err)
		return
	}
	var out []KeyResponse
	err = k.db.View(func(tx *bolt.Tx) error {
		keys, err := data.CompanyKeys(tx, company)
		out = make([]KeyResponse, 0, len(keys))
		for _, key := range keys {
			out = append(out, keyResponse(tx, key))
		}
		return err
	})
	if err != nil {
		k.writeError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, out)
}

// HandleCreate is POST /api/v1/apikeys: a new key, shown this once.
func (k *Keys) HandleCreate(w http.ResponseWriter, r *http.Request) {
	var req CreateKeyRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		k.writeError(w, r, err)
		return
	}
	fields := web.Required("nombre", req.Nombre)
	fields = append(fields, web.MaxLen("nombre", req.Nombre, 100)...)
	fields = append(fields, web.MaxLen("descripcion", req.Descripcion, 500)...)
	if err := web.Invalid(fields...); err != nil {
		k.writeError(w, r, err)
		return
	}
	company, err := PrincipalOf(r).Company(web.IDString(req.IdEmpresa))
	if err != nil {
		k.writeError(w, r, err)
		return
	}
	secret := NewSecret(k.prefix)
	key := &data.APIKey{Company: company, Nombre: req.Nombre, Descripcion: req.Descripcion,
		Hint: KeyHint(secret, k.prefix), Hash: HashSecret(secret), Created: k.now().UTC()}
	var resp CreatedKeyResponse
	err = k.db.Update(func(tx *bolt.Tx) error {
		if err := data.PutKey(tx, key); err != nil {
			return err
		}
		resp = CreatedKeyResponse{KeyResponse: keyResponse(tx, key), ApiKey: secret}
		return nil
	})
	if err != nil {
		k.writeError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusCreated, resp)
}

// HandleRevoke is POST /api/v1/apikeys/{id}/revocar; revoking a revoked key
// changes nothing.
func (k *Keys) HandleRevoke(w http.ResponseWriter, r *http.Request) {
	k.update(w, r, func(key *data.APIKey) {
		if key.Revoked == nil {
			now := k.now().UTC()
			key.Revoked = &now
		}
	})
}

// HandleLimits is POST /api/v1/apikeys/{id}/rate-limit.
func (k *Keys) HandleLimits(w http.ResponseWriter, r *http.Request) {
	var req KeyLimitsRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		k.writeError(w, r, err)
		return
	}
	if err := web.Invalid(checkLimits(req)...); err != nil {
		k.writeError(w, r, err)
		return
	}
	k.update(w, r, func(key *data.APIKey) {
		key.PerMinute, key.PerHour = req.LimitePorMinuto, req.LimitePorHora
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

// update applies change to the key named by the path, when it belongs to
// one of the caller's companies, and answers the updated record.
func (k *Keys) update(w http.ResponseWriter, r *http.Request, change func(*data.APIKey)) {
	p := PrincipalOf(r)
	id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	if err != nil || id <= 0 {
		k.writeError(w, r, web.Invalid(cfe.FieldError{Campo: "id", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	var resp KeyResponse
	err = k.db.Update(func(tx *bolt.Tx) error {
		key, err := data.GetKey(tx, id)
		if err != nil {
			return err
		}
		if !p.User.BelongsTo(key.Company) {
			return ErrOtherCompany
		}
		change(key)
		resp = keyResponse(tx, key)
		return data.PutKey(tx, key)
	})
	if err != nil {
		k.writeError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, resp)
}
