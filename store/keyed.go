package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Keyed-in contingency receipts (CFC, types 2xx): paper forms pre-printed
// under a contingency CAE, handed to customers while the shop could not
// issue electronically, and keyed in afterwards with the serie and number
// printed on each (docs/contingencia.md). Their numbers are the paper's, in
// whatever order the technician keys them: they never go through Reserve,
// the counters, the numbering journal or the witness. What holds here
// instead is that a number of a contingency range is stored once (by_number
// names one uuid), except when DGI observed it (CE) and the technician
// sends it again corrected: the correction is a new CFE with its own uuid
// and commit sequence, by_number names it from then on, and the observed one
// is kept, marked CorrectedBy (a signed CFE is never deleted).

// Request fields a keyed-in number is refused under (the local module's
// /sign-cfe body: cfe.Request).
const (
	keyedFieldSerie   = "cfe.idDoc.serie"
	keyedFieldNumero  = "cfe.idDoc.numero"
	keyedFieldCorrige = "corrige"
)

// KeyedRange returns the contingency range holding number nro of type t and
// serie, after checking that the number may be keyed in: it is not stored
// yet, or, with corrects, it is stored under uuid corrects and DGI observed
// that CFE (CE) and it was not corrected already. It reads only: the issuer
// calls it before it signs, and CommitKeyed checks again when it writes.
//
// Errors: EINVALID (Respuesta 01) naming cfe.idDoc.tipoCfe for a type that
// is not a contingency one, cfe.idDoc.serie for a serie without a
// contingency range of the type, cfe.idDoc.numero for a number outside
// every range of the serie or already keyed (naming the uuid it was keyed
// under), corrige for a correction of a CFE that is not the observed one;
// EUNAVAILABLE when ctx is done.
func (db *DB) KeyedRange(ctx context.Context, t cfe.Type, serie string, nro int64, corrects string) (cfe.CAERange, error) {
	const op = "store.KeyedRange"
	var r cfe.CAERange
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		var err error
		r, err = checkKeyed(tx, op, t, serie, nro, corrects)
		return err
	})
	return r, err
}

// refused is a keyed-in number refused: 01 naming the request field.
func refused(op string, fields ...cfe.FieldError) *cfe.Error { return cfe.Invalid(op, fields...) }

// checkKeyed is KeyedRange's check inside a transaction.
func checkKeyed(tx *bolt.Tx, op string, t cfe.Type, serie string, nro int64, corrects string) (cfe.CAERange, error) {
	if info, ok := t.Info(); !ok || !info.Contingency {
		return cfe.CAERange{}, refused(op, field("cfe.idDoc.tipoCfe", "%d no es un tipo de comprobante de contingencia (201 a 282)", int(t)))
	}
	ranges, err := loadRanges(tx)
	if err != nil {
		return cfe.CAERange{}, err
	}
	var inSerie []cfe.CAERange
	var found *cfe.CAERange
	for i, r := range ranges {
		if r.Type != t || r.Serie != serie {
			continue
		}
		inSerie = append(inSerie, r)
		if r.DNro <= nro && nro <= r.HNro {
			found = &ranges[i]
		}
	}
	switch {
	case len(inSerie) == 0:
		return cfe.CAERange{}, refused(op, field(keyedFieldSerie, "no hay un rango CAE de contingencia cargado para %s serie %q: importe la constancia con «cfe-agent cae import»", t.Name(), serie))
	case found == nil:
		spans := ""
		for i, r := range inSerie {
			if i > 0 {
				spans += ", "
			}
			spans += fmt.Sprintf("%d a %d", r.DNro, r.HNro)
		}
		return cfe.CAERange{}, refused(op, field(keyedFieldNumero, "%d no está en los rangos CAE de %s serie %s (%s)", nro, t.Name(), serie, spans))
	}
	held := tx.Bucket(bucketByNumber).Get(numberKey(seqKey{t, serie}, nro))
	switch {
	case held == nil && corrects != "":
		return cfe.CAERange{}, refused(op, field(keyedFieldCorrige, "%s %s-%d no fue ingresado todavía: no hay nada que corregir (quite corrige)", t.Name(), serie, nro))
	case held == nil:
		return *found, nil
	case corrects == "":
		return cfe.CAERange{}, refused(op, field(keyedFieldNumero, "%s %s-%d ya fue ingresado con el uuid %s; un número de contingencia se ingresa una sola vez (si DGI lo observó, envíe la corrección con corrige: %s)", t.Name(), serie, nro, held, held))
	case string(held) != corrects:
		return cfe.CAERange{}, refused(op, field(keyedFieldCorrige, "%s %s-%d está guardado con el uuid %s, no con %s: corrige debe nombrar el comprobante observado", t.Name(), serie, nro, held, corrects))
	}
	rec, err := readRecord(tx, op, corrects, false)
	if err != nil {
		return cfe.CAERange{}, recordError(op, err)
	}
	if state := dgiStateOf(tx, rec.OutboxSeq); state != cfe.DGIObserved {
		if state == "" {
			state = cfe.DGIPending
		}
		return cfe.CAERange{}, refused(op, field(keyedFieldCorrige, "DGI no observó %s %s-%d (su estado es %s): solo se vuelve a enviar corregido un comprobante de contingencia observado (CE)", t.Name(), serie, nro, state))
	}
	return *found, nil
}

// dgiStateOf returns the DGI state recorded for the CFE of commit sequence
// seq, "" when none is.
func dgiStateOf(tx *bolt.Tx, seq uint64) string {
	b := tx.Bucket(bucketDGICFEs)
	if b == nil {
		return ""
	}
	var r dgiCFERecord
	if ok, err := getJSON(b, seqBytes(seq), &r); err != nil || !ok {
		return ""
	}
	return r.State
}

// CommitKeyed stores signed contingency receipts in one durable transaction,
// all or none: each with its record, indexes, outbox entry and audit event
// as Commit writes them, but no counter (their numbers are the paper's). A
// correction (cfe.KeyedCFE.Corrects) takes over the number in by_number, and the
// observed CFE it corrects is marked CorrectedBy and leaves the list of
// observations (DGIObservations).
//
// Every check runs inside the transaction, before anything is written:
// KeyedRange's, the uuid is new, the CFE agrees with its range (RangeID,
// CAE data), and no two of docs take one number.
//
// Errors: ECONFLICT (Respuesta RespConflictoUUID) for a uuid already stored;
// EINVALID as KeyedRange, or for a CFE that does not match its range or
// lacks a field (the error of the first CFE that fails, its index in
// Fields' names when there are several); EUNAVAILABLE when ctx is done, the
// store is closed or the write failed.
func (db *DB) CommitKeyed(ctx context.Context, docs []cfe.KeyedCFE) error {
	const op = "store.CommitKeyed"
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	if err := db.brokenErr(op); err != nil {
		return err
	}
	recs := make([]*issuedRecord, len(docs))
	for i, k := range docs {
		if k.Doc == nil {
			return invalid(op, field("comprobante", "es obligatorio"))
		}
		if fs := checkKeyedDoc(k.Doc); len(fs) > 0 {
			return invalid(op, fs...)
		}
		rec := toIssuedRecord(k.Doc)
		rec.Delivery = deliveryRecord{State: cfe.DeliveryPending}
		rec.Corrects = k.Corrects
		rec.words = wordsOfXML(k.Doc.XML)
		zxml, err := db.codec.encode(k.Doc.XML)
		if err != nil {
			return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo comprimir el comprobante firmado", Err: err}
		}
		rec.zxml = zxml
		recs[i] = &rec
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return errClosed(op)
	}
	now := db.opts.Now()
	var failed error
	txErr := db.bolt.Update(func(tx *bolt.Tx) error {
		db.room.ensure(tx.Size())
		seen := map[string]int{}
		for i, rec := range recs {
			fail := func(err error) error {
				failed = err
				if len(recs) > 1 {
					failed = fmt.Errorf("comprobante %d de %d: %w", i+1, len(recs), err)
				}
				return err
			}
			nk := string(numberKey(rec.key(), rec.Nro))
			if j, dup := seen[nk]; dup {
				return fail(refused(op, field(keyedFieldNumero, "%s %s-%d está dos veces (también en el comprobante %d)", rec.Type.Name(), rec.Serie, rec.Nro, j+1)))
			}
			seen[nk] = i
			if err := checkKeyedCommit(tx, op, rec); err != nil {
				return fail(err)
			}
			if err := putKeyed(tx, rec, now); err != nil {
				return err
			}
		}
		return nil
	})
	db.transactions.Add(1)
	if failed != nil {
		return failed
	}
	db.writes.record(txErr, now)
	if txErr != nil {
		return db.commitFailed(txErr)
	}
	db.pending.Add(int64(len(recs)))
	db.notifyCommit(len(recs))
	return nil
}

// checkKeyedDoc checks that doc has what the store needs.
func checkKeyedDoc(doc *cfe.Issued) []cfe.FieldError {
	fs := cfe.CheckUUID(doc.UUID)
	if doc.TmstFirma.IsZero() {
		fs = append(fs, field("tmst_firma", "es obligatoria"))
	}
	if len(doc.XML) == 0 {
		fs = append(fs, field("xml", "el CFE firmado es obligatorio"))
	}
	return fs
}

// checkKeyedCommit is CommitKeyed's check of one CFE in its transaction.
func checkKeyedCommit(tx *bolt.Tx, op string, rec *issuedRecord) error {
	if tx.Bucket(bucketCFEs).Get([]byte(rec.UUID)) != nil {
		return &cfe.Error{Code: cfe.ECONFLICT, Op: op, Respuesta: cfe.RespConflictoUUID,
			Message: fmt.Sprintf("ya existe un comprobante con el uuid %s", rec.UUID)}
	}
	r, err := checkKeyed(tx, op, rec.Type, rec.Serie, rec.Nro, rec.Corrects)
	if err != nil {
		return err
	}
	if rec.RangeID != r.ID || toCAERecord(r.CAEData()) != rec.CAE {
		return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: fmt.Sprintf("los datos del CAE no coinciden con el rango %s", r.ID)}
	}
	return nil
}

// putKeyed writes a keyed-in CFE as putCommit writes a numbered one, without
// the counter; a correction takes over by_number and marks the CFE it
// corrects.
func putKeyed(tx *bolt.Tx, rec *issuedRecord, now time.Time) error {
	k := rec.key()
	outbox := appendOnly(tx, bucketOutbox)
	seq, err := outbox.NextSequence()
	if err != nil {
		return err
	}
	rec.CommittedAt, rec.OutboxSeq = now, seq
	uuid := []byte(rec.UUID)
	if rec.Corrects != "" {
		old, err := readRecord(tx, "store.CommitKeyed", rec.Corrects, false)
		if err != nil {
			return recordError("store.CommitKeyed", err)
		}
		old.CorrectedBy = rec.UUID
		if err := putRecord(tx, old); err != nil {
			return err
		}
		if b := tx.Bucket(bucketDGIObserved); b != nil {
			if err := b.Delete(seqBytes(old.OutboxSeq)); err != nil {
				return err
			}
		}
	}
	if err := putRecord(tx, rec); err != nil {
		return err
	}
	if err := putXML(tx, seqBytes(seq), rec.zxml); err != nil {
		return err
	}
	if err := tx.Bucket(bucketByNumber).Put(numberKey(k, rec.Nro), uuid); err != nil {
		return err
	}
	tk := timeKey(rec.TmstFirma, k, rec.Nro)
	if err := tx.Bucket(bucketByTime).Put(tk, uuid); err != nil {
		return err
	}
	// Found by /comprobantes like any CFE (search.go).
	if err := putSearch(tx, tk, k, rec.words); err != nil {
		return err
	}
	if err := putJSON(outbox, seqBytes(seq), outboxEntry{UUID: rec.UUID, CommittedAt: now}); err != nil {
		return err
	}
	detail := "keyed in"
	if rec.Corrects != "" {
		detail = "keyed in again, corrected, replacing " + rec.Corrects + " which DGI observed"
	}
	return appendAudit(tx, AuditEvent{At: now, Kind: AuditSigned, UUID: rec.UUID, Type: rec.Type,
		Serie: rec.Serie, Nro: rec.Nro, RangeID: rec.RangeID, Detail: detail})
}

// keyedUsed counts the numbers of contingency range r keyed in (by_number
// entries within it; a corrected number counts once).
func keyedUsed(tx *bolt.Tx, r cfe.CAERange) int64 {
	k := seqKey{r.Type, r.Serie}
	lo, hi := numberKey(k, r.DNro), numberKey(k, r.HNro)
	c := tx.Bucket(bucketByNumber).Cursor()
	var n int64
	for key, _ := c.Seek(lo); key != nil && string(key) <= string(hi); key, _ = c.Next() {
		n++
	}
	return n
}

// dgiObservedRecord is a CFE DGI observed (CE) and not yet corrected.
type dgiObservedRecord = dgiAnnulledRecord

// DGIObservations returns up to limit contingency receipts DGI observed
// (CE) that were not sent again corrected, newest first.
func (db *DB) DGIObservations(ctx context.Context, limit int) ([]cfe.DGIRejection, error) {
	const op = "store.DGIObservations"
	var out []cfe.DGIRejection
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDGIObserved)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var r dgiObservedRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("dgi_observed %d: %w", seqOf(k), err)
			}
			out = append(out, cfe.DGIRejection{UUID: r.UUID, Type: r.Type, Serie: r.Serie, Nro: r.Nro,
				TmstFirma: inMontevideo(r.TmstFirma), Reasons: fromReasonRecords(r.Reasons), At: r.At})
		}
		return nil
	})
	return out, err
}

// noteObserved keeps the list of observations (DGIObservations) as a
// verdict on the CFE of commit sequence seq is recorded: a CE enters it,
// any other verdict leaves it.
func noteObserved(tx *bolt.Tx, seq uint64, r *dgiCFERecord, state string, now time.Time) error {
	b, err := tx.CreateBucketIfNotExists(bucketDGIObserved)
	if err != nil {
		return err
	}
	k := seqBytes(seq)
	if state != cfe.DGIObserved {
		return b.Delete(k)
	}
	return putJSON(b, k, dgiObservedRecord{UUID: r.UUID, Type: r.Type, Serie: r.Serie, Nro: r.Nro,
		TmstFirma: r.TmstFirma, Reasons: r.Reasons, At: now})
}

// keyedStatus is RangeStatus for a contingency range: Used counts the forms
// keyed in, Remaining those not keyed in while the range is valid (forms
// may be keyed in any order, so none is ever skipped).
func keyedStatus(tx *bolt.Tx, r cfe.CAERange, today cfe.Date, nearlyUsedUpPercent, nearExpiryDays int) cfe.RangeUse {
	st := cfe.RangeUse{Range: r, Used: keyedUsed(tx, r), Expired: r.Expired(today),
		DaysLeft: int(r.Vencimiento.Time(time.UTC).Sub(today.Time(time.UTC)).Hours() / 24)}
	if !st.Expired {
		st.Remaining = r.Size() - st.Used
	}
	pct := int64(nearlyUsedUpPercent)
	st.NearlyUsedUp = st.Remaining > 0 && (r.Size()-st.Remaining)*100 >= pct*r.Size()
	st.NearExpiry = !st.Expired && st.DaysLeft <= nearExpiryDays
	return st
}
