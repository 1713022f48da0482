package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
	"github.com/cfe-agent/cfe-agent/store"
)

// Restoring a backup ("cfe-agent restore", README "Backups",
// docs/numbering.md "Backups and restore"): with the agent stopped, the
// backup is verified and put in place of the profile's store, never behind
// the numbers already used — what the replaced store, the numbering journal,
// the witness and the hosted service know, or what a technician confirms.

// restoreHostedTimeout bounds the question to the hosted service of a
// restore for its last numbers.
const restoreHostedTimeout = 20 * time.Second

// restoreCompareTimeout bounds the search of the CFEs the hosted service
// holds in the backup's ranges (a search per type and two weeks since the
// ranges' authorization).
const restoreCompareTimeout = 2 * time.Minute

// RestoreRequest is the technician's restore.
type RestoreRequest struct {
	File string // the backup
	// Confirmed are the last numbers used since the backup, per serie
	// (--confirmar-numeros-usados, ParseConfirmed).
	Confirmed []cfe.LastNumber
	// Foreign is the identity of a backup of another installation to
	// restore all the same (--aceptar-copia-ajena).
	Foreign string
	// Offline asks the hosted service nothing (--sin-servicio).
	Offline bool
	// Notices gets, as they happen, the Spanish notices of what the restore
	// could not learn and goes on without (no witness, the service did not
	// answer); nil: none are written.
	Notices io.Writer
}

// ParseConfirmed reads the technician's confirmed numbers, each
// TIPO:SERIE:NUMERO (--confirmar-numeros-usados); the serie is upper-cased.
func ParseConfirmed(values []string) ([]cfe.LastNumber, error) {
	var out []cfe.LastNumber
	for _, v := range values {
		parts := strings.Split(v, ":")
		var t, n int64
		var err1, err2 error
		if len(parts) == 3 {
			t, err1 = strconv.ParseInt(parts[0], 10, 32)
			n, err2 = strconv.ParseInt(parts[2], 10, 64)
		}
		if len(parts) != 3 || err1 != nil || err2 != nil || !cfe.Type(t).Valid() || parts[1] == "" || n < 0 {
			return nil, cfe.Errorf(cfe.EINVALID, "--confirmar-numeros-usados %q: se espera TIPO:SERIE:NUMERO, por ejemplo 101:A:1234", v)
		}
		out = append(out, cfe.LastNumber{Type: cfe.Type(t), Serie: strings.ToUpper(parts[1]), Last: n})
	}
	return out, nil
}

// Restored is what a restore did.
type Restored struct {
	Backup string // the backup restored, absolute
	*store.RestoreResult
}

// Restore puts a backup back in place of the active profile's store. It
// refuses while the profile's agent runs.
func Restore(ctx context.Context, opts Options, req RestoreRequest, log *slog.Logger) (*Restored, error) {
	notices := req.Notices
	if notices == nil {
		notices = io.Discard
	}
	dataDir, cfg, p, err := ActiveProfile(opts)
	if err != nil {
		return nil, err
	}
	if info, ok := ReadRunFile(dataDir, cfg.Active); ok {
		var se *localclient.StatusError
		if _, err := StateAt(ctx, LocalBaseURL(info.BaseURL)); err == nil || errors.As(err, &se) {
			return nil, cfe.Errorf(cfe.EUNAVAILABLE, "el agente está en ejecución (%s): deténgalo antes de restaurar", info.BaseURL)
		}
	}
	o := store.RestoreOptions{Backup: req.File, Store: cfg.StorePath(dataDir, cfg.Active),
		Journal: JournalPath(dataDir, p.Environment, cfg.Active), Confirmed: req.Confirmed, AcceptForeign: req.Foreign,
		Meta:    store.BackupMeta{Profile: cfg.Active, Environment: string(p.Environment), RUC: p.Company.RUC},
		Records: RecordChecks(0)}
	if abs, err := filepath.Abs(req.File); err == nil {
		o.Backup = abs
	}
	if o.Witness, err = WitnessPath(dataDir, p, cfg.Active); err != nil {
		fmt.Fprintf(notices, "aviso: sin testigo de numeración (%s): se comprueba con el diario de numeración, el archivo actual y el servicio en línea\n", cfe.Describe(err))
	}
	o.WitnessKey = WitnessKey(p, cfg.Active)
	h, err := NewHostedClient(p.Hosted, log)
	if err != nil {
		return nil, err
	}
	askable := h != nil && h.Auth() != hosted.AuthNone
	// Nothing local bounds the numbers used since the backup when the
	// journal is missing: the agent then waits for the service, as when
	// its journal is lost.
	o.HoldWithoutService = askable
	if askable && !req.Offline {
		o.Service = func(ctx context.Context, info *store.BackupInfo) store.ServiceAnswer {
			return askService(ctx, notices, h, info)
		}
	}
	res, err := store.Restore(ctx, o)
	if err != nil {
		return nil, err
	}
	return &Restored{Backup: o.Backup, RestoreResult: res}, nil
}

// Write writes the technician's report of the restore.
func (r *Restored) Write(w io.Writer) {
	fmt.Fprintf(w, "restaurada la copia %s (del %s: %d comprobantes, %d pendientes de envío; %d firmas verificadas)\n", r.Backup,
		r.Info.TakenAt.In(cfe.Montevideo).Format("02/01/2006 15:04:05"), r.Info.Counts.CFEs, r.Info.Counts.Outbox,
		r.Info.Checked.Signatures)
	if r.ServiceCompared {
		fmt.Fprintf(w, "comparada con el servicio en línea: %d comprobantes de la copia son los mismos que el servicio guarda con esos números\n", r.Compared)
	}
	if r.Foreign {
		fmt.Fprintf(w, "la copia era de otra instalación (%s) y se aceptó con --aceptar-copia-ajena; el archivo de datos reemplazado queda como anterior (%s)\n",
			r.Info.StoreID, strings.Join(r.Lineage, ", "))
	}
	if r.Held {
		fmt.Fprintln(w, "aviso: no hay diario de numeración y no se consultó el servicio en línea: el agente no firmará hasta que el servicio responda o un técnico ejecute «cfe-agent cae used-elsewhere»")
	}
	if r.Replaced != "" {
		fmt.Fprintf(w, "el archivo de datos reemplazado se conserva en %s (puede tener comprobantes posteriores a la copia)\n", r.Replaced)
	}
	for _, s := range r.Behind {
		fmt.Fprintf(w, "%s serie %s: la copia llegaba al %d; la numeración sigue en el %d (los números intermedios ya se usaron o no se usarán: repórtelos a DGI como anulados si no se usaron)\n",
			s.Type.Name(), s.Serie, s.Backup, s.Resume+1)
	}
}

// askService asks the hosted service, for a restore, its last numbers and
// the CFEs it holds in the backup's ranges. What it cannot learn is said
// (Spanish, on notices) and left unknown: the restore goes on with the
// other checks, and the agent asks the service for its last numbers again
// at every start.
func askService(ctx context.Context, notices io.Writer, h *hosted.Client, info *store.BackupInfo) store.ServiceAnswer {
	var ans store.ServiceAnswer
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	hctx, cancel := context.WithTimeout(ctx, restoreHostedTimeout)
	lasts, err := h.LastNumbers(hctx, info.Ranges, today)
	cancel()
	if err != nil {
		fmt.Fprintf(notices, "aviso: no se pudo consultar el servicio en línea (%s); se comprueba con el diario de numeración y el archivo actual, "+
			"no se comparan los comprobantes de la copia con los del servicio, y el agente vuelve a consultarlo al iniciar\n", cfe.Describe(err))
		return ans
	}
	ans.Last, ans.LastKnown = lasts, true
	inUse := info.SeriesInUse()
	if len(inUse) == 0 {
		ans.CFEsKnown = true // the backup holds no CFE: nothing to compare
		return ans
	}
	hctx, cancel = context.WithTimeout(ctx, restoreCompareTimeout)
	held, err := h.Held(hctx, inUse, today)
	cancel()
	if err != nil {
		fmt.Fprintf(notices, "aviso: no se pudieron comparar los comprobantes de la copia con los del servicio en línea (%s); se restaura sin esa comparación\n", cfe.Describe(err))
		return ans
	}
	for _, c := range held {
		ans.CFEs = append(ans.CFEs, store.ServiceCFE{Type: cfe.Type(c.TipoCfe), Serie: c.Serie, Nro: c.Nro, UUID: c.UUID, CodSeguridad: c.CodSeguridad})
	}
	ans.CFEsKnown = true
	return ans
}
