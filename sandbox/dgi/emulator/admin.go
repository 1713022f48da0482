package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
)

// The admin endpoint (its own listener, so that the services can be made
// unreachable while it answers): knobs for tests and integrators, the
// emulator's clock, and what it received. JSON in and out; errors are
// {"error": "..."} in Spanish. docs/dgi-emulator.md lists every route.

// admin is the admin endpoint's handlers over the Emulator's knobs.
type admin struct{ e *Emulator }

// AdminHandler serves the admin endpoint.
func (e *Emulator) AdminHandler() http.Handler {
	a := &admin{e: e}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/estado", a.handleState)
	mux.HandleFunc("GET /admin/cfes", a.handleCFEs)
	mux.HandleFunc("GET /admin/reportes", a.handleReports)
	mux.HandleFunc("POST /admin/demora", a.handleDelay)
	mux.HandleFunc("POST /admin/cortar", a.handleDrop)
	mux.HandleFunc("POST /admin/inalcanzable", a.handleUnreachable)
	mux.HandleFunc("POST /admin/rechazos", a.handleReject)
	mux.HandleFunc("POST /admin/reloj", a.handleClock)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	d := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		writeErr(w, http.StatusBadRequest, "el cuerpo no es el JSON esperado: "+err.Error())
		return false
	}
	return true
}

// State is the admin endpoint's summary.
type State struct {
	Reloj        time.Time `json:"reloj"`
	Demora       string    `json:"demora"`
	Cortes       int       `json:"cortesPendientes"`
	Inalcanzable bool      `json:"inalcanzable"`
	Sobres       int       `json:"sobres"`
	URL          string    `json:"url"`
}

func (a *admin) handleState(w http.ResponseWriter, _ *http.Request) {
	e := a.e
	n, err := e.EnvelopeCount()
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "no se pudo leer el estado")
		return
	}
	e.mu.Lock()
	s := State{Demora: e.delay.String(), Cortes: e.drops, Inalcanzable: e.unreachable, Sobres: n}
	e.mu.Unlock()
	s.Reloj, s.URL = e.now(), e.URL()
	writeJSON(w, http.StatusOK, s)
}

// handleCFEs lists what the emulator knows of each CFE; with ruc, tipo,
// serie and nro it answers that one CFE (404 when no envelope carried it).
func (a *admin) handleCFEs(w http.ResponseWriter, r *http.Request) {
	e := a.e
	counts, err := e.Counts()
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "no se pudieron leer los CFE")
		return
	}
	q := r.URL.Query()
	if q.Get("nro") == "" {
		writeJSON(w, http.StatusOK, map[string]any{"cfes": counts})
		return
	}
	tipo, err1 := strconv.Atoi(q.Get("tipo"))
	nro, err2 := strconv.ParseInt(q.Get("nro"), 10, 64)
	if err1 != nil || err2 != nil {
		writeErr(w, http.StatusBadRequest, "tipo y nro deben ser números")
		return
	}
	for _, c := range counts {
		if (q.Get("ruc") == "" || c.RUCEmisor == q.Get("ruc")) && c.TipoCFE == cfe.Type(tipo) && c.Serie == q.Get("serie") && c.Nro == nro {
			writeJSON(w, http.StatusOK, c)
			return
		}
	}
	writeErr(w, http.StatusNotFound, "ningún sobre recibido contiene ese CFE")
}

func (a *admin) handleDelay(w http.ResponseWriter, r *http.Request) {
	e := a.e
	var req struct {
		Demora string `json:"demora"`
	}
	if !decode(w, r, &req) {
		return
	}
	d, err := time.ParseDuration(req.Demora)
	if err != nil || d < 0 {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("demora %q no es una duración (por ejemplo \"2s\")", req.Demora))
		return
	}
	e.SetDelay(d)
	a.handleState(w, r)
}

func (a *admin) handleDrop(w http.ResponseWriter, r *http.Request) {
	e := a.e
	var req struct {
		Sobres int `json:"sobres"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Sobres < 0 {
		writeErr(w, http.StatusBadRequest, "sobres no puede ser negativo")
		return
	}
	e.DropAfterReceipt(req.Sobres)
	a.handleState(w, r)
}

func (a *admin) handleUnreachable(w http.ResponseWriter, r *http.Request) {
	e := a.e
	var req struct {
		Inalcanzable bool `json:"inalcanzable"`
	}
	if !decode(w, r, &req) {
		return
	}
	if err := e.SetUnreachable(req.Inalcanzable); err != nil {
		writeErr(w, http.StatusInternalServerError, "no se pudo cambiar el estado: "+err.Error())
		return
	}
	a.handleState(w, r)
}

func (a *admin) handleReject(w http.ResponseWriter, r *http.Request) {
	e := a.e
	var req Rejection
	if !decode(w, r, &req) {
		return
	}
	if err := e.Reject(req); err != nil {
		var ce *cfe.Error
		if errors.As(err, &ce) && ce.Code == cfe.EINVALID {
			writeErr(w, http.StatusBadRequest, ce.Message)
			return
		}
		writeErr(w, http.StatusInternalServerError, "no se pudo guardar el rechazo")
		return
	}
	writeJSON(w, http.StatusOK, req)
}

func (a *admin) handleClock(w http.ResponseWriter, r *http.Request) {
	e := a.e
	var req struct {
		Adelantar string `json:"adelantar"`
	}
	if !decode(w, r, &req) {
		return
	}
	d, err := time.ParseDuration(req.Adelantar)
	if err != nil || d < 0 {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("adelantar %q no es una duración positiva (por ejemplo \"48h\")", req.Adelantar))
		return
	}
	if err := e.Advance(d); err != nil {
		writeErr(w, http.StatusInternalServerError, "no se pudo mover el reloj")
		return
	}
	a.handleState(w, r)
}

// reportJSON is one report of GET /admin/reportes.
type reportJSON struct {
	IDReceptor   int64        `json:"idReceptor"`
	RUCEmisor    string       `json:"rucEmisor"`
	FechaResumen cfe.Date     `json:"fechaResumen"`
	SecEnvio     int          `json:"secEnvio"`
	Recibido     time.Time    `json:"recibido"`
	Estado       string       `json:"estado"`
	Hallazgos    []dgi.Motivo `json:"hallazgos,omitempty"`
}

// handleReports lists the daily reports received, in reception order,
// with the state a query answers now and the inconsistencies behind an ER.
func (a *admin) handleReports(w http.ResponseWriter, _ *http.Request) {
	list, err := a.e.Reports()
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "no se pudieron leer los reportes")
		return
	}
	out := struct {
		Reportes []reportJSON `json:"reportes"`
	}{Reportes: []reportJSON{}}
	for _, r := range list {
		out.Reportes = append(out.Reportes, reportJSON{IDReceptor: r.IDReceptor, RUCEmisor: r.RUCEmisor, FechaResumen: r.FechaResumen,
			SecEnvio: r.SecEnvio, Recibido: r.Received, Estado: r.Estado, Hallazgos: r.Findings})
	}
	writeJSON(w, http.StatusOK, out)
}
