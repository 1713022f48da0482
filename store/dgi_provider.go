package store

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Provider mode's DGI states (the hosted service sends to DGI for the
// agent; docs/dgi-provider.md): the agent reads back from the service the
// state of each CFE it delivered and keeps it in the same records as
// direct mode (dgi_cfes, dgi_annulled, the counts), so that /state's dgi
// block, the rejections and the audit read alike in both modes.
//
// A provider-mode record never enters dgi_open (direct mode's queue): a
// store that later turns direct mode on sends only what its provider had
// not accepted (DGIBegin), never a CFE the provider holds. Two entries of
// their own:
//
//	dgi_meta "prov_cursor"  every CFE of a commit sequence up to it has a
//	                        provider-mode record, was refused by the service,
//	                        is no longer in the live file, was delivered
//	                        before reading began (DGIProviderBegin), or was
//	                        never reported on for dgiProvGiveUp
//	dgi_meta "prov_begun"   set by DGIProviderBegin
//	dgi_prov_open           commit sequence → "" while the service reports
//	                        no verdict of DGI on the CFE
var (
	keyDGIProvCursor  = []byte("prov_cursor")
	keyDGIProvBegun   = []byte("prov_begun")
	bucketDGIProvOpen = []byte("dgi_prov_open")
)

// dgiProvGiveUp is how long after its commit a delivered CFE the service
// never reports on stops holding the cursor back (it is no longer awaited).
const dgiProvGiveUp = 31 * 24 * time.Hour

// DGIProviderBegin sets, once, where provider mode's reading starts: at the
// first CFE not yet delivered (still in the outbox or in quarantine), or
// after the last committed one. CFEs delivered before (a store from before
// the service reported DGI's states) are not awaited: asking for years of
// them would hold the newer ones back. Later calls change nothing.
func (db *DB) DGIProviderBegin(ctx context.Context) error {
	const op = "store.DGIProviderBegin"
	begun := false
	if err := db.view(ctx, op, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketDGIMeta)
		begun = meta != nil && meta.Get(keyDGIProvBegun) != nil
		return nil
	}); err != nil || begun {
		return err
	}
	return db.update(ctx, op, func(tx *bolt.Tx) error {
		d, err := newDGITx(tx)
		if err != nil {
			return err
		}
		if d.bucket(bucketDGIMeta).Get(keyDGIProvBegun) != nil {
			return nil
		}
		outbox := tx.Bucket(bucketOutbox)
		start := outbox.Sequence()
		if k, _ := outbox.Cursor().First(); k != nil {
			start = seqOf(k) - 1
		}
		if q, _ := tx.Bucket(bucketQuarantine).Cursor().First(); q != nil && seqOf(q)-1 < start {
			start = seqOf(q) - 1
		}
		if start > d.meta(keyDGIProvCursor) {
			if err := d.setMeta(keyDGIProvCursor, start); err != nil {
				return err
			}
		}
		return d.setMeta(keyDGIProvBegun, 1)
	})
}

// DGIProviderAwaiting returns up to limit CFEs the hosted service accepted
// whose verdict of DGI the agent has not read yet, in commit order: those
// the service reported without a verdict first (State set), then the
// delivered ones it never reported on (State ""). It stops at the first CFE
// still in the outbox or in quarantine.
func (db *DB) DGIProviderAwaiting(ctx context.Context, limit int) ([]cfe.DGICFE, error) {
	const op = "store.DGIProviderAwaiting"
	var out []cfe.DGICFE
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if open := tx.Bucket(bucketDGIProvOpen); open != nil {
			cfes := tx.Bucket(bucketDGICFEs)
			c := open.Cursor()
			for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
				var r dgiCFERecord
				if ok, err := getJSON(cfes, k, &r); err != nil || !ok {
					return unreadable("dgi_prov_open", k, err)
				}
				out = append(out, r.domain(seqOf(k)))
			}
		}
		var cursor uint64
		if meta := tx.Bucket(bucketDGIMeta); meta != nil {
			if v := meta.Get(keyDGIProvCursor); len(v) == 8 {
				cursor = seqOf(v)
			}
		}
		return provAfter(tx, op, cursor, func(it *cfe.DGIItem) bool {
			if len(out) >= limit {
				return false
			}
			out = append(out, cfe.DGICFE{Seq: it.Seq, UUID: it.UUID, Type: it.Type, Serie: it.Serie, Nro: it.Nro,
				TmstFirma: it.TmstFirma, CommittedAt: it.CommittedAt, Total: it.Total})
			return true
		})
	})
	return out, err
}

// provAfter calls fn for each delivered CFE after cursor without a
// provider-mode record, in commit order, until fn returns false or a CFE
// not yet delivered is met.
func provAfter(tx *bolt.Tx, op string, cursor uint64, fn func(*cfe.DGIItem) bool) error {
	cfes := tx.Bucket(bucketDGICFEs)
	c := tx.Bucket(bucketXML).Cursor()
	for k, _ := c.Seek(seqBytes(cursor + 1)); k != nil; k, _ = c.Next() {
		if tx.Bucket(bucketOutbox).Get(k) != nil || tx.Bucket(bucketQuarantine).Get(k) != nil {
			return nil // not delivered yet: nothing after it is awaited
		}
		if tx.Bucket(bucketRejected).Get(k) != nil || (cfes != nil && cfes.Get(k) != nil) {
			continue
		}
		it, err := dgiItemAt(tx, op, seqOf(k))
		if err != nil {
			return err
		}
		if it != nil && !fn(it) {
			return nil
		}
	}
	return nil
}

// DGIProviderRecord records the states of DGI the hosted service reports
// for CFEs the agent delivered. A BE annuls the number (kept for the daily
// report, DGIRejections) and every verdict is audited, as in direct mode. A
// state equal to the one recorded changes nothing.
//
// Errors: EINVALID for an unknown state; ENOTFOUND for a commit sequence
// with no CFE in the live file; EUNAVAILABLE when ctx is done.
func (db *DB) DGIProviderRecord(ctx context.Context, states []cfe.DGIProviderState) error {
	const op = "store.DGIProviderRecord"
	for _, s := range states {
		switch s.State {
		case cfe.DGIPending, cfe.DGIInEnvelope, cfe.DGISent, cfe.DGIUnknown, cfe.DGIAccepted, cfe.DGIRejected, cfe.DGIObserved:
		default:
			return invalid(op, field("estado", "%q no es un estado de DGI", s.State))
		}
	}
	return db.update(ctx, op, func(tx *bolt.Tx) error {
		d, err := newDGITx(tx)
		if err != nil {
			return err
		}
		open, err := tx.CreateBucketIfNotExists(bucketDGIProvOpen)
		if err != nil {
			return err
		}
		now := db.opts.Now()
		for _, s := range states {
			k := seqBytes(s.Seq)
			var r dgiCFERecord
			ok, err := getJSON(d.bucket(bucketDGICFEs), k, &r)
			if err != nil {
				return err
			}
			if !ok {
				it, err := dgiItemAt(tx, op, s.Seq)
				if err != nil {
					return err
				}
				if it == nil {
					return notFound(op, "no existe el comprobante de la secuencia %d", s.Seq)
				}
				r = dgiCFERecord{UUID: it.UUID, Type: it.Type, Serie: it.Serie, Nro: it.Nro, TmstFirma: it.TmstFirma,
					CommittedAt: it.CommittedAt, Total: it.Total}
			} else if r.State == s.State {
				continue
			}
			if r.State != "" {
				d.counts[r.State]--
			}
			d.counts[s.State]++
			r.State, r.UpdatedAt, r.Reasons = s.State, now, toReasonRecords(s.Reasons)
			if err := putJSON(d.bucket(bucketDGICFEs), k, &r); err != nil {
				return err
			}
			if !cfe.DGIFinal(s.State) {
				if err := open.Put(k, nil); err != nil {
					return err
				}
				continue
			}
			if err := open.Delete(k); err != nil {
				return err
			}
			if s.State == cfe.DGIRejected {
				if err := putJSON(d.bucket(bucketDGIAnnulled), k, dgiAnnulledRecord{UUID: r.UUID, Type: r.Type, Serie: r.Serie,
					Nro: r.Nro, TmstFirma: r.TmstFirma, Reasons: r.Reasons, At: now}); err != nil {
					return err
				}
			} else if err := d.bucket(bucketDGIAnnulled).Delete(k); err != nil {
				return err
			}
			if err := noteObserved(tx, s.Seq, &r, s.State, now); err != nil {
				return err
			}
			if err := appendAudit(tx, AuditEvent{At: now, Kind: AuditDGIVerdict, UUID: r.UUID, Type: r.Type, Serie: r.Serie,
				Nro: r.Nro, Detail: "por el proveedor, " + verdictDetail(cfe.DGIVerdict{State: s.State, Reasons: s.Reasons})}); err != nil {
				return err
			}
		}
		if err := provAdvance(tx, d, now); err != nil {
			return err
		}
		return d.saveCounts()
	})
}

// provAdvance moves the provider cursor past every CFE that has a record,
// was refused by the service, left the live file, or was delivered more
// than dgiProvGiveUp ago and never reported on.
func provAdvance(tx *bolt.Tx, d *dgiTx, now time.Time) error {
	cursor := d.meta(keyDGIProvCursor)
	next := cursor
	c := tx.Bucket(bucketXML).Cursor()
	for k, _ := c.Seek(seqBytes(cursor + 1)); k != nil; k, _ = c.Next() {
		if d.bucket(bucketDGICFEs).Get(k) == nil && tx.Bucket(bucketRejected).Get(k) == nil {
			if tx.Bucket(bucketOutbox).Get(k) != nil || tx.Bucket(bucketQuarantine).Get(k) != nil {
				break
			}
			if at, ok := committedAt(tx, seqOf(k)); ok && now.Sub(at) < dgiProvGiveUp {
				break
			}
		}
		next = seqOf(k)
	}
	if next == cursor {
		return nil
	}
	return d.setMeta(keyDGIProvCursor, next)
}

// DGIProviderCounts returns the counts of provider-mode records (and any
// direct-mode ones), for /state's dgi block in provider mode: zero when
// the service never reported a state of DGI.
func (db *DB) DGIProviderCounts(ctx context.Context) (cfe.DGICounts, error) {
	const op = "store.DGIProviderCounts"
	var out cfe.DGICounts
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketDGIMeta)
		if meta == nil {
			return nil
		}
		c := dgiCounts{}
		if _, err := getJSON(meta, keyDGICounts, &c); err != nil {
			return err
		}
		out = cfe.DGICounts{
			Enviados:     c[cfe.DGISent] + c[cfe.DGIAccepted] + c[cfe.DGIRejected] + c[cfe.DGIObserved],
			Aceptados:    c[cfe.DGIAccepted],
			Rechazados:   c[cfe.DGIRejected],
			Observados:   c[cfe.DGIObserved],
			Pendientes:   c[cfe.DGIPending] + c[cfe.DGIInEnvelope],
			Desconocidos: c[cfe.DGIUnknown],
		}
		if open := tx.Bucket(bucketDGIProvOpen); open != nil {
			var oldest time.Time
			_ = open.ForEach(func(k, _ []byte) error {
				var r dgiCFERecord
				if ok, _ := getJSON(tx.Bucket(bucketDGICFEs), k, &r); ok && r.State != cfe.DGISent &&
					(oldest.IsZero() || r.CommittedAt.Before(oldest)) {
					oldest = r.CommittedAt
				}
				return nil
			})
			out.OldestPending = oldest
		}
		return nil
	})
	return out, err
}
