package hosted

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Provider mode's verdicts of DGI (docs/dgi-provider.md): the hosted
// service sends the agent's CFEs to DGI, and reports each one's state at
// DGI in cfeemitido/{id} and buscar (estadoDgi: DGI's codes AE, BE, CE for
// its verdict; pendiente, enviado or desconocido before it; motivosDgi).
// The DGIReader asks buscar, one request per pass for the signing days of
// the CFEs it awaits, until each CFE the agent delivered has DGI's verdict,
// and records the states in the store, where /state, the tray, the status
// page and doctor read them as in direct mode.

// IssuedCFE is an issued CFE as buscar lists it (the fields the agent
// reads).
type IssuedCFE struct {
	ID             int64       `json:"id"`
	UUID           string      `json:"uuid"`
	TipoCfe        int         `json:"tipoCfe"`
	Serie          string      `json:"serie"`
	Nro            int64       `json:"nro"`
	EstadoDgi      string      `json:"estadoDgi,omitempty"`
	MotivosDgi     []MotivoDGI `json:"motivosDgi,omitempty"`
	FechaEstadoDgi *time.Time  `json:"fechaEstadoDgi,omitempty"`
}

// MotivoDGI is one of DGI's codes with its text.
type MotivoDGI struct {
	Codigo  string `json:"codigo"`
	Glosa   string `json:"glosa,omitempty"`
	Detalle string `json:"detalle,omitempty"`
}

// SearchIssued lists the company's issued CFEs signed from desde to hasta
// (GET /api/v1/cfeemitido/buscar; with an API key the company is the
// key's).
//
// Errors: EINVALID; EFORBIDDEN; EUNAUTHORIZED; EUNAVAILABLE.
func (c *Client) SearchIssued(ctx context.Context, desde, hasta cfe.Date) ([]IssuedCFE, error) {
	if c.Auth() == AuthNone {
		return nil, errNoCredentials
	}
	var out []IssuedCFE
	err := c.do(ctx, &request{op: "hosted.SearchIssued", method: http.MethodGet, path: "/api/v1/cfeemitido/buscar",
		query: url.Values{"fechaFirmaDesde": {desde.String()}, "fechaFirmaHasta": {hasta.String()}}, retry: true}, &out)
	return out, err
}

// DGIStates is the store's provider-mode DGI records; *store.DB
// implements it.
type DGIStates interface {
	// DGIProviderAwaiting returns delivered CFEs without DGI's verdict.
	DGIProviderAwaiting(ctx context.Context, limit int) ([]cfe.DGICFE, error)
	// DGIProviderRecord records the states the service reports.
	DGIProviderRecord(ctx context.Context, states []cfe.DGIProviderState) error
}

// Defaults of DGIReaderConfig.
const (
	DefaultDGIPoll = 30 * time.Second
	// DefaultDGIIdle is the wait after a pass in which the service
	// reported no state of DGI at all (a service that does not report
	// them): the reader keeps asking, seldom.
	DefaultDGIIdle = 10 * time.Minute
	// DefaultDGIBatch is how many awaited CFEs one pass looks for.
	DefaultDGIBatch = 500
	// dgiSpanDays bounds the signing days one buscar asks for.
	dgiSpanDays = 31
)

// DGIReaderConfig configures a DGIReader. Store and Client are required.
type DGIReaderConfig struct {
	Store  DGIStates
	Client *Client
	Poll   time.Duration // DefaultDGIPoll
	Idle   time.Duration // DefaultDGIIdle
	Batch  int           // DefaultDGIBatch
	Logger *slog.Logger
}

// DGIReader reads DGI's verdicts on the delivered CFEs back from the
// service; see above.
type DGIReader struct {
	cfg  DGIReaderConfig
	log  *slog.Logger
	kick chan struct{}

	mu      sync.Mutex
	lastErr string
}

// NewDGIReader returns a DGIReader for cfg.
func NewDGIReader(cfg DGIReaderConfig) *DGIReader {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultDGIPoll
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultDGIIdle
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultDGIBatch
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &DGIReader{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1)}
}

// Kick wakes the reader for a pass now.
func (r *DGIReader) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// LastError is the last failure to read the states (Spanish), "" after a
// success.
func (r *DGIReader) LastError() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// Run does passes until ctx is done: every Poll while nothing is awaited
// or the service reports states of DGI, every Idle while it reports none
// of the CFEs awaited and all of them were signed more than Idle ago (a
// service that does not report DGI's states), and after a failure no
// sooner than the service's Retry-After.
func (r *DGIReader) Run(ctx context.Context) {
	runPasses(ctx, r.cfg.Client, r.kick, r.cfg.Poll, r.cfg.Poll, r.log, "DGI states not read from the hosted service",
		func(ctx context.Context) (passOutcome, error) {
			res, err := r.Pass(ctx)
			if err == nil && res.Awaited > res.Fresh && res.Reported == 0 {
				return passOutcome{wait: r.cfg.Idle}, nil
			}
			return passOutcome{}, err
		})
}

// PassResult is what one pass found.
type PassResult struct {
	Awaited  int // delivered CFEs without DGI's verdict, looked for
	Fresh    int // of those, how many were signed less than Idle ago
	Reported int // of those, how many the service reported a state of DGI for
	Recorded int // states that changed and were recorded
}

// Pass asks the service once for the states of the awaited CFEs and
// records those that changed.
func (r *DGIReader) Pass(ctx context.Context) (PassResult, error) {
	var res PassResult
	awaited, err := r.cfg.Store.DGIProviderAwaiting(ctx, r.cfg.Batch)
	if err != nil || len(awaited) == 0 {
		return res, err
	}
	res.Awaited = len(awaited)
	now := r.cfg.Client.now()
	for _, a := range awaited {
		if now.Sub(a.CommittedAt) < r.cfg.Idle {
			res.Fresh++
		}
	}
	// The signing days of the awaited CFEs, within dgiSpanDays of the
	// oldest: later ones are asked for in a later pass.
	from := cfe.DateOf(awaited[0].TmstFirma.In(cfe.Montevideo))
	for _, a := range awaited {
		if d := cfe.DateOf(a.TmstFirma.In(cfe.Montevideo)); d.Before(from) {
			from = d
		}
	}
	limit := cfe.DateOf(from.Time(time.UTC).AddDate(0, 0, dgiSpanDays-1))
	to := from
	for _, a := range awaited {
		if d := cfe.DateOf(a.TmstFirma.In(cfe.Montevideo)); d.After(to) && !d.After(limit) {
			to = d
		}
	}
	list, err := r.cfg.Client.SearchIssued(ctx, from, to)
	if err != nil {
		r.setErr("no se pudo leer del servicio en la nube el estado en DGI de los comprobantes: " + cfe.ErrorMessage(err))
		return res, err
	}
	type key struct {
		t     cfe.Type
		serie string
		nro   int64
	}
	byKey := make(map[key]IssuedCFE, len(list))
	for _, it := range list {
		byKey[key{cfe.Type(it.TipoCfe), it.Serie, it.Nro}] = it
	}
	var states []cfe.DGIProviderState
	for _, a := range awaited {
		it, ok := byKey[key{a.Type, a.Serie, a.Nro}]
		if !ok || it.UUID != a.UUID {
			continue // not the service's copy of this CFE (or not in the days asked)
		}
		state := StateOfDGI(it.EstadoDgi)
		if state == "" {
			continue
		}
		res.Reported++
		reasons := make([]cfe.DGIReason, 0, len(it.MotivosDgi))
		for _, m := range it.MotivosDgi {
			reasons = append(reasons, cfe.DGIReason{Codigo: m.Codigo, Glosa: m.Glosa, Detalle: m.Detalle})
		}
		if state == a.State && (!cfe.DGIFinal(state) || len(reasons) == len(a.Reasons)) {
			continue
		}
		states = append(states, cfe.DGIProviderState{Seq: a.Seq, State: state, Reasons: reasons})
		if state == cfe.DGIRejected {
			r.log.Warn("DGI rejected a CFE (reported by the hosted service)", "uuid", a.UUID, "tipo", int(a.Type), "serie", a.Serie, "nro", a.Nro)
		}
	}
	if len(states) > 0 {
		if err := r.cfg.Store.DGIProviderRecord(ctx, states); err != nil {
			return res, err
		}
	}
	res.Recorded = len(states)
	r.setErr("")
	return res, nil
}

func (r *DGIReader) setErr(msg string) {
	r.mu.Lock()
	r.lastErr = msg
	r.mu.Unlock()
}

// StateOfDGI maps the service's estadoDgi to a DGI state of cfe ("" for a
// value it does not know, or none).
func StateOfDGI(estado string) string {
	switch estado {
	case "AE":
		return cfe.DGIAccepted
	case "BE":
		return cfe.DGIRejected
	case "CE":
		return cfe.DGIObserved
	case cfe.DGIPending, cfe.DGISent, cfe.DGIUnknown:
		return estado
	}
	return ""
}
