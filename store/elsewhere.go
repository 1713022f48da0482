package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// MarkUsedElsewhere records that another system (the billing software the
// shop used before, or another machine) already used the numbers of type t
// and serie up to upTo in the CAE range that holds upTo: the next number
// handed out is upTo+1 (or the start of another range when upTo ends this
// one). It is done once, before the agent signs in that range, and is written
// to the audit log with reason.
//
// Errors: EINVALID for an unknown type, an empty reason, an upTo outside
// every range of t and serie, or at or below the last number already used
// (nothing to mark); ECONFLICT when the agent already stored CFEs in that
// range (their numbers and the other system's would interleave);
// EUNAVAILABLE when a CFE of the serie is being signed, ctx is done or the
// numbering journal cannot be written.
//
// While numbering is held (Options.HoldWithoutJournal, hold.go), marking a
// serie also settles it: the agent numbers it again from upTo+1, even in a
// range where it already stored CFEs (the numbers after them were used by the
// lost file: nothing interleaves). upTo 0 then
// settles the serie without marking anything: the technician confirms that
// no other system used its numbers beyond what the store holds.
//
// A serie of a hold that carries the numbering witness's mark (an older copy
// of the data directory, witness.go) settles no lower than the mark: upTo 0
// or any number from the witness's committed mark up resumes at
// max(upTo, the witness's reserved mark)+1, and a number below the committed
// mark is refused (EINVALID, naming the mark): this machine certainly used
// it.
func (db *DB) MarkUsedElsewhere(ctx context.Context, t cfe.Type, serie string, upTo int64, reason string) error {
	const op = "store.MarkUsedElsewhere"
	reason = strings.TrimSpace(reason)
	var fs []cfe.FieldError
	if !t.Valid() {
		fs = append(fs, field("tipo", "%d no es un tipo de CFE de DGI", int(t)))
	}
	if reason == "" {
		fs = append(fs, field("motivo", "es obligatorio (por ejemplo, el sistema que usó los números)"))
	}
	if len(fs) > 0 {
		return invalid(op, fs...)
	}
	k := seqKey{t, serie}

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return errClosed(op)
	}
	if db.hold != nil {
		if m, ok := db.hold.mark(k); ok {
			return db.settleMarkLocked(ctx, op, k, m, upTo, reason)
		}
	}
	if upTo == 0 && db.hold != nil {
		// "None": while numbering is held, the technician confirms that no
		// other system used numbers of the serie beyond what the store has.
		if !slices.ContainsFunc(db.ranges[t], func(r cfe.CAERange) bool { return r.Serie == serie }) {
			return invalid(op, field("serie", "no hay ningún rango CAE cargado del tipo %d serie %s", int(t), serie))
		}
		return db.releaseLocked(ctx, op, k, reason)
	}
	var r *cfe.CAERange
	for _, c := range db.ranges[t] {
		if c.Serie == serie && c.DNro <= upTo && upTo <= c.HNro {
			r = &c
			break
		}
	}
	if r == nil {
		return invalid(op, field("hasta", "el número %d no pertenece a ningún rango CAE cargado del tipo %d serie %s", upTo, int(t), serie))
	}
	q := db.seq(k)
	if len(q.slots) > 0 {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op,
			Message: fmt.Sprintf("hay comprobantes del tipo %d serie %s firmándose; reintente", int(t), serie)}
	}
	if upTo <= q.last {
		return invalid(op, field("hasta", "el último número usado del tipo %d serie %s ya es %d", int(t), serie, q.last))
	}
	// While numbering is held, the numbers after the store's last one were
	// used by the file that was lost: they follow the store's, nothing
	// interleaves. (db.mu is held: no commit can change this meanwhile.)
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if used := usedIn(tx, k, *r); used > 0 && db.hold == nil {
			return &cfe.Error{Code: cfe.ECONFLICT, Op: op,
				Message: fmt.Sprintf("el agente ya firmó %s en el rango %s; los números usados por otro sistema deben registrarse antes de emitir en el rango",
					cfe.Count(int64(used), "comprobante", "comprobantes"), r.ID)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The journal first, as the committer does: a failure changes nothing.
	if err := db.raiseJournal(op, db.opts.Now(), cfe.LastNumber{Type: t, Serie: serie, Last: upTo}); err != nil {
		return err
	}
	var annulled []cfe.AnnulledRange
	err = db.update(ctx, op, func(tx *bolt.Tx) error {
		if err := putJSON(tx.Bucket(bucketCounters), counterKey(k), counterRecord{Type: t, Serie: serie, Last: upTo}); err != nil {
			return err
		}
		if err := appendAudit(tx, AuditEvent{At: db.opts.Now(), Kind: AuditUsedElsewhere, Type: t, Serie: serie,
			Nro: upTo, RangeID: r.ID, Detail: fmt.Sprintf("numbers %d-%d used elsewhere: %s", max(q.last+1, r.DNro), upTo, reason)}); err != nil {
			return err
		}
		// They will never be signed here: annulled for the daily report.
		annulled, err = putAnnulledTx(tx, cfe.AnnulledRange{Type: t, Serie: serie, From: max(q.last+1, r.DNro), To: upTo,
			Reason: cfe.AnnulUsedElsewhere, Note: reason, At: db.opts.Now()})
		return err
	})
	if err != nil {
		return err
	}
	db.noteAnnulledLocked(annulled)
	q.last = upTo
	return db.releaseLocked(ctx, op, k, reason)
}

// settleMarkLocked is MarkUsedElsewhere on serie k of a hold that carries the
// witness's mark m. The caller holds db.mu.
func (db *DB) settleMarkLocked(ctx context.Context, op string, k seqKey, m holdMark, upTo int64, reason string) error {
	if upTo < 0 || upTo > 0 && upTo < m.Used {
		return invalid(op, field("hasta", "el testigo de numeración de este equipo registra que %s serie %s ya usó hasta el %d: confirme ese número o uno mayor (%d, si no se usaron más)",
			k.Type.Name(), k.Serie, m.Used, m.Floor))
	}
	if upTo > 0 && !slices.ContainsFunc(db.ranges[k.Type], func(r cfe.CAERange) bool { return r.Serie == k.Serie && r.DNro <= upTo && upTo <= r.HNro }) {
		return invalid(op, field("hasta", "el número %d no pertenece a ningún rango CAE cargado del tipo %d serie %s", upTo, int(k.Type), k.Serie))
	}
	q := db.seq(k)
	if len(q.slots) > 0 {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op,
			Message: fmt.Sprintf("hay comprobantes del tipo %d serie %s firmándose; reintente", int(k.Type), k.Serie)}
	}
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	target := max(upTo, m.Floor)
	if target > q.last {
		now := db.opts.Now()
		// The journal first, as the committer does: a failure changes nothing.
		if err := db.raiseJournal(op, now, cfe.LastNumber{Type: k.Type, Serie: k.Serie, Last: target}); err != nil {
			return err
		}
		err := db.update(ctx, op, func(tx *bolt.Tx) error {
			if err := putJSON(tx.Bucket(bucketCounters), counterKey(k), counterRecord{Type: k.Type, Serie: k.Serie, Last: target}); err != nil {
				return err
			}
			return appendAudit(tx, AuditEvent{At: now, Kind: AuditUsedElsewhere, Type: k.Type, Serie: k.Serie, Nro: target,
				Detail: fmt.Sprintf("numbers %d-%d used elsewhere or never used (this machine's numbering witness recorded up to %d, the technician %d): %s",
					q.last+1, target, m.Floor, upTo, reason)})
		})
		if err != nil {
			return err
		}
		q.last = target
	}
	return db.releaseLocked(ctx, op, k, reason)
}
