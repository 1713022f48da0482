package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// RepairSource is where Repair takes a CFE that cannot be read back from:
// a backup that holds it intact, or another copy of its signed XML (the
// hosted service's).
type RepairSource struct {
	// Backup is the path of a backup (a file of the store's layout: what
	// Backup writes) that holds the CFE intact, its record and its signed
	// XML.
	Backup string
	// Fetch returns the signed XML of the CFE as another copy holds it,
	// given the live record (without its XML). It is used when Backup is
	// empty, and needs the live record to be readable (only the XML
	// damaged).
	Fetch func(ctx context.Context, known *cfe.Issued) ([]byte, error)
	// Verify checks the copy before anything is written: that its XML's
	// signature verifies and that it is the document the record describes
	// (the security code and the QR data come from the signature's
	// digest). The store does not verify signatures; it checks the uuid,
	// the number, the commit sequence, the record's fields and, when the
	// live XML still reads, that the copy's is the same bytes. Required.
	Verify func(copy *cfe.Issued) error
}

// Repaired is what Repair put back.
type Repaired struct {
	CFE *cfe.Issued // as stored now, with its signed XML
	// Requeued is true when the CFE left the quarantine for the outbox:
	// the deliverer sends it next.
	Requeued bool
}

// Repair puts back the stored CFE uuid, which cannot be read back, from a
// copy that holds it intact (see RepairSource), and when it was quarantined
// returns it to the outbox under its own commit sequence, ahead of every
// later CFE. The copy must be the same CFE: same uuid, number, commit
// sequence and record, and the document Verify accepts. What the copy
// replaces is the damaged part only: the XML, or the record when only the
// record was damaged (its delivery state must then agree with where the CFE
// is: outbox or quarantine, rejected list, or neither). A CFE quarantined
// because only its outbox entry was damaged is returned to the outbox when
// the copy matches it.
//
// Errors: EINVALID for an empty uuid or a source without Verify or without
// Backup and Fetch; ENOTFOUND when the live file has no CFE uuid; ECONFLICT
// when it can be read back (nothing to repair), when the copy does not hold
// it intact, or when the copy is not the same CFE (a Spanish message saying
// which); what Fetch and Verify return; EUNAVAILABLE when ctx ends or the
// write fails.
func (db *DB) Repair(ctx context.Context, uuid string, src RepairSource) (*Repaired, error) {
	const op = "store.Repair"
	var fs []cfe.FieldError
	if uuid == "" {
		fs = append(fs, field("uuid", "es obligatorio"))
	}
	if src.Verify == nil || (src.Backup == "" && src.Fetch == nil) {
		fs = append(fs, field("origen", "indique una copia de seguridad o la copia del servicio, y cómo verificarla"))
	}
	if len(fs) > 0 {
		return nil, invalid(op, fs...)
	}
	var live *liveCopy
	if err := db.view(ctx, op, func(tx *bolt.Tx) error {
		var err error
		live, err = readLive(tx, op, uuid)
		return err
	}); err != nil {
		return nil, err
	}
	var cand *issuedRecord
	var from string
	if src.Backup != "" {
		var err error
		if cand, err = readBackupRecord(op, src.Backup, uuid); err != nil {
			return nil, err
		}
		from = "la copia de seguridad " + src.Backup
	} else {
		if live.rec == nil {
			return nil, conflict(op, "el registro del comprobante %s está dañado: solo una copia de seguridad puede recuperarlo", uuid)
		}
		xml, err := src.Fetch(ctx, live.rec.domain())
		if err != nil {
			return nil, err
		}
		c := *live.rec
		c.XML = xml
		cand, from = &c, "la copia del servicio en la nube"
	}
	if live.seq == 0 {
		if err := db.view(ctx, op, func(tx *bolt.Tx) error { return live.locate(op, tx, cand) }); err != nil {
			return nil, err
		}
	}
	if err := live.same(op, cand, from); err != nil {
		return nil, err
	}
	if err := src.Verify(cand.domain()); err != nil {
		return nil, err
	}
	enc, err := db.codec.encode(cand.XML)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err, Message: "no se pudo comprimir el XML firmado"}
	}
	now := db.opts.Now()
	out := &Repaired{}
	err = db.update(ctx, op, func(tx *bolt.Tx) error {
		again, err := readLive(tx, op, uuid)
		if err == nil {
			err = again.locate(op, tx, cand)
		}
		if err != nil {
			return err
		}
		if !bytes.Equal(again.raw, live.raw) || !bytes.Equal(again.heldKey, live.heldKey) {
			return conflict(op, "el comprobante %s cambió mientras se recuperaba: vuelva a intentarlo", uuid)
		}
		rec := cand
		if live.rec != nil {
			r := *live.rec // the live delivery state is the truth
			r.XML = cand.XML
			rec = &r
		} else if err := live.agreeingState(op, tx, rec); err != nil {
			return err
		}
		seq := seqBytes(live.seq)
		if live.xml == nil { // the XML was the damaged part
			if err := putXML(tx, seq, enc); err != nil {
				return err
			}
		}
		if live.rec == nil { // the record, or its number index, was the damaged part
			if err := putRecord(tx, rec); err != nil {
				return err
			}
			if err := reindexNumber(op, tx, rec); err != nil {
				return err
			}
		}
		// What is written must read back, or nothing is.
		if _, err := readRecord(tx, op, uuid, true); err != nil {
			return conflict(op, "el comprobante %s no se pudo recuperar de %s: %v", uuid, from, err)
		}
		if live.heldKey != nil {
			if err := tx.Bucket(bucketQuarantine).Delete(live.heldKey); err != nil {
				return err
			}
			if err := putJSON(tx.Bucket(bucketOutbox), seq, outboxEntry{UUID: rec.UUID, CommittedAt: rec.CommittedAt}); err != nil {
				return err
			}
			tx.OnCommit(func() { db.pending.Add(1); db.quarantined.Add(-1) })
			out.Requeued = true
		}
		out.CFE = rec.domain()
		return appendAudit(tx, AuditEvent{At: now, Kind: AuditRepaired, UUID: rec.UUID, Type: rec.Type, Serie: rec.Serie,
			Nro: rec.Nro, Detail: "recuperado de " + from})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// liveCopy is what the live file holds of a CFE to repair.
type liveCopy struct {
	uuid    string
	raw     []byte        // the record's stored bytes
	rec     *issuedRecord // the record, when it reads and agrees with the indexes
	xml     []byte        // the signed XML, when it reads back
	seq     uint64        // the commit sequence
	heldKey []byte        // the quarantine key, nil when not quarantined
}

// readLive reads what tx holds of the CFE uuid and checks that there is
// something to repair.
func readLive(tx *bolt.Tx, op, uuid string) (*liveCopy, error) {
	raw := tx.Bucket(bucketCFEs).Get([]byte(uuid))
	if raw == nil {
		return nil, notFound(op, "el archivo de datos en uso no tiene un comprobante con el uuid %s", uuid)
	}
	l := &liveCopy{uuid: uuid, raw: bytes.Clone(raw), heldKey: heldKey(tx, uuid)}
	rec, err := readRecord(tx, op, uuid, true)
	d, damaged := errors.AsType[*recordDamage](err)
	switch {
	case err == nil:
		l.rec, l.xml = rec, rec.XML
	case damaged:
		l.rec = d.known
	default:
		return nil, err
	}
	switch {
	case l.rec != nil:
		l.seq = l.rec.OutboxSeq
	case l.heldKey != nil:
		l.seq = seqOf(l.heldKey)
	default:
		// Neither the record nor the quarantine says where its XML is: the
		// outbox or the rejected list may.
		l.seq = entrySeq(tx, uuid)
	}
	if l.rec == nil && l.seq != 0 {
		l.xml = liveXML(tx, l.seq)
	}
	if err == nil && l.heldKey == nil {
		return nil, conflict(op, "el comprobante %s se puede leer: no hay nada que recuperar", uuid)
	}
	return l, nil
}

// liveXML is the signed XML under seq in tx, nil when it does not read
// back.
func liveXML(tx *bolt.Tx, seq uint64) []byte {
	if x := tx.Bucket(bucketXML).Get(seqBytes(seq)); x != nil {
		if xml, err := decodeXML(tx, x); err == nil {
			return xml
		}
	}
	return nil
}

// locate sets the commit sequence of a CFE the live file cannot place (its
// record does not read, and it is in neither the outbox, the rejected list
// nor the quarantine: a delivered one) from the copy's record, provided the
// live XML under it reads and is the copy's: the XML ties the copy's record
// to the live file.
func (l *liveCopy) locate(op string, tx *bolt.Tx, cand *issuedRecord) error {
	if l.seq != 0 {
		return nil
	}
	if xml := liveXML(tx, cand.OutboxSeq); xml != nil && bytes.Equal(xml, cand.XML) {
		l.seq, l.xml = cand.OutboxSeq, xml
		return nil
	}
	return conflict(op, "no se encuentra dónde está guardado el comprobante %s, ni coincide su XML firmado con el de la copia: no se puede recuperar", l.uuid)
}

// entrySeq finds the commit sequence of uuid in the outbox or the rejected
// list (0 when in neither), for a record that does not say it.
func entrySeq(tx *bolt.Tx, uuid string) uint64 {
	for _, name := range [][]byte{bucketOutbox, bucketRejected} {
		c := tx.Bucket(name).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var e outboxEntry
			if json.Unmarshal(v, &e) == nil && e.UUID == uuid {
				return seqOf(k)
			}
		}
	}
	return 0
}

// same checks that cand, read from from, is the CFE the live file holds:
// same uuid and commit sequence, the same record where the live one reads,
// the same XML where the live one reads, and an XML that names the
// record's number.
func (l *liveCopy) same(op string, cand *issuedRecord, from string) error {
	differs := func(what string) error {
		return conflict(op, "%s no tiene el mismo comprobante %s: %s no coincide con el guardado", from, l.uuid, what)
	}
	switch {
	case cand.UUID != l.uuid:
		return differs("el uuid")
	case cand.OutboxSeq != l.seq:
		return differs("el orden de registro")
	}
	if r := l.rec; r != nil {
		switch {
		case cand.Type != r.Type || cand.Serie != r.Serie || cand.Nro != r.Nro:
			return differs("el número")
		case cand.RangeID != r.RangeID || cand.CAE != r.CAE:
			return differs("el rango CAE")
		case !cand.TmstFirma.Equal(r.TmstFirma) || !cand.CommittedAt.Equal(r.CommittedAt):
			return differs("la fecha de firma")
		case cand.CodSeguridad != r.CodSeguridad || cand.DatosQR != r.DatosQR:
			return differs("el código de seguridad o los datos del QR")
		case !cand.Total.Equal(r.Total) || cand.RequestHash != r.RequestHash || cand.Adenda != r.Adenda:
			return differs("el contenido")
		}
	}
	if l.xml != nil && !bytes.Equal(cand.XML, l.xml) {
		return differs("el XML firmado")
	}
	head, err := cfe.ReadCFEHead(cand.XML)
	if err != nil {
		return conflict(op, "el XML firmado de %s no se puede leer: %s", from, cfe.ErrorMessage(err))
	}
	if head.Type != cand.Type || head.Serie != cand.Serie || head.Nro != cand.Nro {
		return differs("el número que dice el XML firmado")
	}
	return nil
}

// agreeingState checks, for a record put back whole from a backup, that its
// delivery state agrees with where the live file keeps the CFE: pending in
// the outbox or the quarantine, refused on the rejected list, accepted in
// neither. A backup taken before the CFE was delivered cannot say under
// which id the hosted service accepted it.
func (l *liveCopy) agreeingState(op string, tx *bolt.Tx, rec *issuedRecord) error {
	key := seqBytes(l.seq)
	want := cfe.DeliveryAccepted
	switch {
	case l.heldKey != nil || tx.Bucket(bucketOutbox).Get(key) != nil:
		want = cfe.DeliveryPending
	case tx.Bucket(bucketRejected).Get(key) != nil:
		want = cfe.DeliveryRejected
	}
	if rec.Delivery.State != want {
		return conflict(op, "la copia tiene el comprobante %s como %s, pero ahora está %s: use una copia más reciente",
			l.uuid, rec.Delivery.State, want)
	}
	return nil
}

// reindexNumber makes the number index name rec, when its entry is missing
// or names a uuid that has no record (the damaged part); an entry naming
// another CFE is a conflict: that number is another CFE's.
func reindexNumber(op string, tx *bolt.Tx, rec *issuedRecord) error {
	b, nk := tx.Bucket(bucketByNumber), numberKey(rec.key(), rec.Nro)
	v := b.Get(nk)
	switch {
	case bytes.Equal(v, []byte(rec.UUID)):
		return nil
	case v != nil && tx.Bucket(bucketCFEs).Get(v) != nil:
		return conflict(op, "el número %s %s-%d es del comprobante %s, no de %s", rec.Type.Name(), rec.Serie, rec.Nro, v, rec.UUID)
	}
	return b.Put(nk, []byte(rec.UUID))
}

// readBackupRecord reads the record of uuid, with its signed XML, from the
// backup at path, read-only, checked as Open checks a file (its page tree
// first, every read under guard).
func readBackupRecord(op, path, uuid string) (*issuedRecord, error) {
	refused := func(format string, args ...any) *cfe.Error {
		return &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: "la copia " + path + " " + fmt.Sprintf(format, args...)}
	}
	if _, err := os.Stat(path); err != nil {
		return nil, &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Err: err, Message: "no se puede leer la copia " + path}
	}
	if err := checkFileSize(path); err != nil {
		return nil, refused("está truncada")
	}
	if err := checkTree(path); err != nil {
		return nil, refused("está dañada (%v)", err)
	}
	var rec *issuedRecord
	err := withBolt(path, true, func(bdb *bolt.DB) error {
		return bdb.View(func(tx *bolt.Tx) error {
			if tx.Bucket(bucketCFEs) == nil || tx.Bucket(bucketXML) == nil || tx.Bucket(bucketByNumber) == nil {
				return refused("no es un archivo de datos del agente")
			}
			var err error
			rec, err = readRecord(tx, op, uuid, true)
			return err
		})
	})
	switch d, ok := errors.AsType[*recordDamage](err); {
	case err == nil:
		return rec, nil
	case ok:
		return nil, refused("también tiene dañado el comprobante %s (%s)", uuid, d.reason)
	case cfe.ErrorCode(err) == cfe.ENOTFOUND:
		return nil, refused("no tiene el comprobante %s (es anterior a su firma, o de otro archivo de datos)", uuid)
	case isDamage(err):
		return nil, refused("está dañada (%v)", err)
	}
	var ce *cfe.Error
	if errors.As(err, &ce) {
		return nil, err
	}
	return nil, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Err: err, Message: "no se puede leer la copia " + path}
}
