package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// One unreadable record never blocks the rest.
//
// A stored CFE can become unreadable while the file stays whole: a bit
// flipped by a failing disk inside its compressed XML (the XML then does not
// decompress, or not to the bytes whose checksum was stored), or inside its
// JSON record. The page tree is intact, so Open and its background check
// (which read every page, not every value's meaning) do not see it; the
// first read of that CFE does. readRecord is the one check of a stored CFE:
// every read of a record goes through it.
//
// A read that meets such a CFE answers a Spanish *cfe.Error naming it and
// saying how to recover it (errors.Is ErrRecordDamaged; EUNAVAILABLE with
// RespErrorInterno, like a damaged file, because a retry cannot help and the
// cashier must not be told to retry). The DB is not marked broken: every
// other CFE reads as before.
//
// The outbox does not stop at it. PendingOutbox skips it and moves its entry
// to the quarantine bucket, under the same commit sequence, in a write
// transaction of its own that runs only when a damaged entry was met (the
// read path of a healthy outbox writes nothing). Delivery goes on in commit
// order past it: "in order" means in commit order among the CFEs that can
// be read; a quarantined CFE goes to the hosted service after the ones
// committed after it, once recovered. Its number stays used (the counter,
// the number index and the record are never touched), its record is never
// deleted, and it stays visible: Stats and Quarantined list it, Last reports
// it as cfe.DeliveryQuarantined. The quarantine is durable: it is a bucket of
// the file.
//
// Repair (repair.go) puts such a CFE back from a copy that holds it intact
// (a backup, or the hosted service's copy of its signed XML), after checking
// that the copy is the same CFE; a quarantined one then goes back to the
// outbox under its commit sequence, ahead of every later entry.

// ErrRecordDamaged is wrapped by the error of a read that met a stored CFE
// that cannot be read back (errors.Is). The file itself is not damaged:
// other CFEs read as before.
var ErrRecordDamaged = errors.New("stored CFE cannot be read back")

// Audit events of the quarantine.
const (
	AuditQuarantined = "quarantined" // a CFE of the outbox could not be read back: held out of delivery
	AuditRepaired    = "repaired"    // a CFE that could not be read back was put back from a copy
)

// maxHeldPerRead bounds the entries one PendingOutbox moves to the
// quarantine (a file whose dictionary was lost makes every entry unreadable):
// the next calls go on.
const maxHeldPerRead = 1000

// Spanish reasons of a record that cannot be read back.
const (
	reasonRecord = "su registro no se puede leer"
	reasonIndex  = "su registro no coincide con el índice de números"
	reasonNoXML  = "falta su XML firmado"
	reasonXML    = "su XML firmado guardado está dañado (no se descomprime o no coincide con su suma de verificación)"
	reasonEntry  = "su entrada en la cola de envíos está dañada"
)

// recordDamage is why a stored CFE cannot be read back.
type recordDamage struct {
	uuid   string        // "" when not even the uuid is known (a damaged outbox entry)
	known  *issuedRecord // the record when its JSON reads and agrees with the indexes, else nil
	reason string        // Spanish
	cause  error         // English, for the logs
}

func (d *recordDamage) Error() string {
	return fmt.Sprintf("cfe %s cannot be read back: %v", d.uuid, d.cause)
}

func (d *recordDamage) Unwrap() []error { return []error{ErrRecordDamaged, d.cause} }

// name is the CFE as the technician knows it: "e-Ticket A-7 (uuid …)".
func (d *recordDamage) name() string {
	if d.known != nil {
		return fmt.Sprintf("%s %s-%d (uuid %s)", d.known.Type.Name(), d.known.Serie, d.known.Nro, d.uuid)
	}
	if d.uuid == "" {
		return "de la cola de envíos sin uuid legible"
	}
	return "con uuid " + d.uuid
}

// asError is the Spanish error of op that met d.
func (d *recordDamage) asError(op string) *cfe.Error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Respuesta: cfe.RespErrorInterno, Err: d,
		Message: fmt.Sprintf("el comprobante %s está dañado en el archivo de datos: %s. No se envía al servicio en la nube "+
			"ni se imprime hasta recuperarlo, y su número sigue usado: un técnico lo recupera de una copia de seguridad "+
			"o de la copia del servicio en la nube con «cfe-agent recuperar %s» (vea «cfe-agent doctor»)",
			d.name(), d.reason, d.uuid)}
}

// readRecord reads the record stored under uuid in tx and checks that it can
// be read back as it was stored: its JSON decodes and names uuid, the number
// index names it back and, withXML, its signed XML is there and decompresses
// to the bytes whose checksum was stored. It is the one check of a stored
// CFE's readability: every read of a record goes through it, and so can a
// verification of a whole file.
//
// Errors: ENOTFOUND (a *cfe.Error of op) when tx has no record under uuid;
// a *recordDamage when it cannot be read back (recordError makes it the
// Spanish error).
func readRecord(tx *bolt.Tx, op, uuid string, withXML bool) (*issuedRecord, error) {
	v := tx.Bucket(bucketCFEs).Get([]byte(uuid))
	if v == nil {
		return nil, notFound(op, "no existe un comprobante con el uuid %s", uuid)
	}
	var rec issuedRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, &recordDamage{uuid: uuid, reason: reasonRecord, cause: err}
	}
	if rec.UUID != uuid {
		return nil, &recordDamage{uuid: uuid, reason: reasonRecord, cause: fmt.Errorf("the record names uuid %q", rec.UUID)}
	}
	// A contingency receipt sent again corrected left its number to its
	// correction (keyed.go).
	if nk := numberKey(rec.key(), rec.Nro); !bytes.Equal(tx.Bucket(bucketByNumber).Get(nk), []byte(uuid)) &&
		(rec.CorrectedBy == "" || tx.Bucket(bucketByNumber).Get(nk) == nil) {
		return nil, &recordDamage{uuid: uuid, reason: reasonIndex, cause: fmt.Errorf("by_number %s does not name it", nk)}
	}
	if !withXML {
		return &rec, nil
	}
	x := tx.Bucket(bucketXML).Get(seqBytes(rec.OutboxSeq))
	if x == nil {
		return nil, &recordDamage{uuid: uuid, known: &rec, reason: reasonNoXML,
			cause: fmt.Errorf("no signed XML under commit sequence %d", rec.OutboxSeq)}
	}
	xml, err := decodeXML(tx, x) // a new slice: bbolt's memory is valid only inside tx
	if err != nil {
		return nil, &recordDamage{uuid: uuid, known: &rec, reason: reasonXML, cause: err}
	}
	rec.XML = xml
	return &rec, nil
}

// recordError returns err, a readRecord error, as op's *cfe.Error.
func recordError(op string, err error) error {
	var d *recordDamage
	if errors.As(err, &d) {
		return d.asError(op)
	}
	return err
}

// quarantineEntry is the value of a quarantine entry: what is known of the
// CFE, when and why it was held.
type quarantineEntry struct {
	UUID        string    `json:"uuid"`
	Type        cfe.Type  `json:"type,omitempty"`
	Serie       string    `json:"serie,omitempty"`
	Nro         int64     `json:"nro,omitempty"`
	CommittedAt time.Time `json:"committed_at"`
	Since       time.Time `json:"since"`
	Reason      string    `json:"reason"`           // Spanish
	Detail      string    `json:"detail,omitempty"` // the cause, English
}

func (e quarantineEntry) domain() cfe.Quarantined {
	return cfe.Quarantined{UUID: e.UUID, Type: e.Type, Serie: e.Serie, Nro: e.Nro,
		CommittedAt: inMontevideo(e.CommittedAt), Since: inMontevideo(e.Since), Reason: e.Reason}
}

// QuarantineCount is how many CFEs are quarantined, without a transaction.
func (db *DB) QuarantineCount() int { return int(db.quarantined.Load()) }

// Quarantined returns every quarantined CFE, in commit order.
//
// Errors: EUNAVAILABLE when ctx is done.
func (db *DB) Quarantined(ctx context.Context) ([]cfe.Quarantined, error) {
	const op = "store.Quarantined"
	var out []cfe.Quarantined
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		var err error
		out, err = listQuarantine(tx, 0)
		return err
	})
	return out, err
}

// listQuarantine returns up to limit quarantined CFEs of tx (every one when
// limit is 0), in commit order.
func listQuarantine(tx *bolt.Tx, limit int) ([]cfe.Quarantined, error) {
	var out []cfe.Quarantined
	c := tx.Bucket(bucketQuarantine).Cursor()
	for k, v := c.First(); k != nil && (limit == 0 || len(out) < limit); k, v = c.Next() {
		var e quarantineEntry
		if err := json.Unmarshal(v, &e); err != nil {
			// Not even this entry reads: it is still listed, by its place.
			e = quarantineEntry{Reason: fmt.Sprintf("la entrada %d de la cuarentena no se puede leer", seqOf(k))}
		}
		out = append(out, e.domain())
	}
	return out, nil
}

// PendingOutbox returns up to limit CFEs still to be delivered, in commit
// order. A CFE whose stored record cannot be read back is not returned: it
// leaves the outbox for the quarantine (see above), durably, and the CFEs
// after it are returned as if it were not there.
//
// Errors: EINVALID when limit is not positive; EUNAVAILABLE when ctx is done
// or when moving an unreadable CFE to the quarantine failed (the disk).
func (db *DB) PendingOutbox(ctx context.Context, limit int) ([]*cfe.Issued, error) {
	const op = "store.PendingOutbox"
	if limit <= 0 {
		return nil, invalid(op, field("limite", "debe ser mayor que cero"))
	}
	var out []*cfe.Issued
	var held [][]byte
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		out, held = nil, nil
		c := tx.Bucket(bucketOutbox).Cursor()
		for k, v := c.First(); k != nil && len(out) < limit && len(held) < maxHeldPerRead; k, v = c.Next() {
			rec, err := pendingRecord(tx, op, k, v)
			if _, ok := errors.AsType[*recordDamage](err); ok {
				held = append(held, bytes.Clone(k))
				continue
			}
			if err != nil {
				return err
			}
			out = append(out, rec.domain())
		}
		return nil
	})
	if err != nil || len(held) == 0 {
		return out, err
	}
	if err := db.setAside(ctx, op, held); err != nil {
		return nil, err
	}
	return out, nil
}

// pendingRecord reads the CFE of the outbox entry v under key k: the record
// the entry names, which must carry k as its commit sequence. An entry that
// does not lead to its record (itself damaged) is resolved through the
// signed XML under k: its number, then the number index. Errors: a
// *recordDamage when the CFE cannot be read back.
func pendingRecord(tx *bolt.Tx, op string, k, v []byte) (*issuedRecord, error) {
	var e outboxEntry
	if err := json.Unmarshal(v, &e); err == nil && e.UUID != "" {
		rec, err := readRecord(tx, op, e.UUID, true)
		switch d, ok := errors.AsType[*recordDamage](err); {
		case err == nil && rec.OutboxSeq == seqOf(k):
			return rec, nil
		case ok:
			return nil, d
		}
	}
	d := &recordDamage{uuid: e.UUID, reason: reasonEntry, cause: fmt.Errorf("outbox entry %d %q names no record of its commit sequence", seqOf(k), v)}
	x := tx.Bucket(bucketXML).Get(k)
	if x == nil {
		return nil, d
	}
	xml, err := decodeXML(tx, x)
	if err != nil {
		return nil, d
	}
	head, err := cfe.ReadCFEHead(xml)
	if err != nil {
		return nil, d
	}
	uuid := tx.Bucket(bucketByNumber).Get(numberKey(seqKey{head.Type, head.Serie}, head.Nro))
	if uuid == nil {
		return nil, d
	}
	d.uuid = string(uuid)
	rec, err := readRecord(tx, op, d.uuid, true)
	switch d2, ok := errors.AsType[*recordDamage](err); {
	case err == nil && rec.OutboxSeq == seqOf(k):
		// Only the entry was damaged: the CFE is whole, and delivering it
		// takes the entry away (MarkDelivered deletes by commit sequence).
		return rec, nil
	case ok:
		return nil, d2
	case err == nil:
		d.known = rec
	}
	return nil, d
}

// setAside moves the outbox entries under keys to the quarantine, each only if
// its CFE still cannot be read back, in one transaction.
func (db *DB) setAside(ctx context.Context, op string, keys [][]byte) error {
	now := db.opts.Now()
	return db.update(ctx, op, func(tx *bolt.Tx) error {
		outbox, q := tx.Bucket(bucketOutbox), tx.Bucket(bucketQuarantine)
		var n int64
		for _, k := range keys {
			v := outbox.Get(k)
			if v == nil {
				continue // delivered or held meanwhile
			}
			_, err := pendingRecord(tx, op, k, v)
			d, ok := errors.AsType[*recordDamage](err)
			if !ok {
				continue // repaired meanwhile, or another failure that is not the CFE's
			}
			var oe outboxEntry
			_ = json.Unmarshal(v, &oe) // the commit time, when the entry reads
			e := quarantineEntry{UUID: d.uuid, CommittedAt: oe.CommittedAt, Since: now, Reason: d.reason, Detail: d.cause.Error()}
			if r := d.known; r != nil {
				e.Type, e.Serie, e.Nro, e.CommittedAt = r.Type, r.Serie, r.Nro, r.CommittedAt
			} else if d.uuid != "" {
				e.Type, e.Serie, e.Nro = numberOf(tx, d.uuid)
			}
			if err := putJSON(q, k, e); err != nil {
				return err
			}
			if err := outbox.Delete(k); err != nil {
				return err
			}
			if err := appendAudit(tx, AuditEvent{At: now, Kind: AuditQuarantined, UUID: e.UUID, Type: e.Type,
				Serie: e.Serie, Nro: e.Nro, Detail: e.Reason + ": " + e.Detail}); err != nil {
				return err
			}
			n++
		}
		tx.OnCommit(func() { db.pending.Add(-n); db.quarantined.Add(n) })
		return nil
	})
}

// numberOf finds the number of the CFE uuid in the number index, for a
// record that cannot say it: a walk of the index, on the rare path of a
// damaged record only. Zero values when no entry names it.
func numberOf(tx *bolt.Tx, uuid string) (cfe.Type, string, int64) {
	c := tx.Bucket(bucketByNumber).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if string(v) == uuid {
			t, serie, nro, _ := parseNumberKey(k)
			return t, serie, nro
		}
	}
	return 0, "", 0
}

// parseNumberKey reads a number key ("101/A/0000042", numberKey).
func parseNumberKey(k []byte) (cfe.Type, string, int64, bool) {
	parts := strings.Split(string(k), "/")
	if len(parts) != 3 {
		return 0, "", 0, false
	}
	t, err1 := strconv.Atoi(parts[0])
	nro, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, "", 0, false
	}
	return cfe.Type(t), parts[1], nro, true
}

// heldKey returns the quarantine key of the CFE uuid in tx, nil when it is
// not quarantined.
func heldKey(tx *bolt.Tx, uuid string) []byte {
	c := tx.Bucket(bucketQuarantine).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var e quarantineEntry
		if json.Unmarshal(v, &e) == nil && e.UUID == uuid {
			return bytes.Clone(k)
		}
	}
	return nil
}

// errHeld is the error of a delivery update on a quarantined CFE.
func errHeld(op, uuid string) *cfe.Error {
	return conflict(op, "el comprobante %s está en cuarentena (no se puede leer): recupérelo con «cfe-agent recuperar %s»", uuid, uuid)
}
