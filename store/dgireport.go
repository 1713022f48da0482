package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The daily reports sent to DGI in direct mode (package dgisend sends
// them; cfe/dgireport.go names their states). A report is recorded with its
// signed XML before it is sent (DGIReportOpen), and every attempt and every
// answer is recorded in a transaction of its own, so that after a crash a
// report is either unrecorded (built again) or recorded with the bytes that
// may have reached DGI (asked about before they are sent again, never
// rebuilt under the same SecEnvio).
//
//	dgi_reports  "YYYY-MM-DD/NNN" (FechaResumen, SecEnvio) → dgiReportRecord
//
// The bucket is made by the first report recorded; a missing one reads as
// empty.
var bucketDGIReports = []byte("dgi_reports")

type dgiReportRecord struct {
	Date       cfe.Date          `json:"date"`
	Seq        int               `json:"seq"`
	Phase      string            `json:"phase"`
	State      string            `json:"state,omitempty"`
	Reasons    []dgiReasonRecord `json:"reasons,omitempty"`
	ReceiverID int64             `json:"receiver_id,omitempty"`
	XML        []byte            `json:"xml"`
	Attempts   int               `json:"attempts,omitempty"`
	LastError  string            `json:"last_error,omitempty"`
	RecordedAt time.Time         `json:"recorded_at"`
	SentAt     time.Time         `json:"sent_at,omitzero"`
	CheckedAt  time.Time         `json:"checked_at,omitzero"`
}

func (r *dgiReportRecord) domain() *cfe.DGIDailyReport {
	return &cfe.DGIDailyReport{
		DailyReportState: cfe.DailyReportState{Date: r.Date, Seq: r.Seq, State: r.State, Reasons: fromReasonRecords(r.Reasons),
			ReceiverID: r.ReceiverID, SentAt: r.SentAt, CheckedAt: r.CheckedAt},
		Phase: r.Phase, XML: bytes.Clone(r.XML), Attempts: r.Attempts, LastError: r.LastError, RecordedAt: r.RecordedAt,
	}
}

func reportKey(d cfe.Date, seq int) []byte { return fmt.Appendf(nil, "%s/%03d", d, seq) }

// MaxReportSeq is the highest SecEnvio (DGI's query takes 0–127).
const MaxReportSeq = 127

// DGIReportOpen records report seq of day d, signed (xml), before it is
// sent: the day's first report has seq 1, a correction the day's last seq
// + 1. Errors: EINVALID for a seq that is not the day's next one or an
// empty document; ECONFLICT when the day's last report has no answer from
// DGI yet (recorded, or sent with an unknown outcome): it must be answered
// before another is sent.
func (db *DB) DGIReportOpen(ctx context.Context, d cfe.Date, seq int, xml []byte) (*cfe.DGIDailyReport, error) {
	const op = "store.DGIReportOpen"
	if d.IsZero() || len(xml) == 0 || seq < 1 || seq > MaxReportSeq {
		return nil, invalid(op, field("reporte", "faltan la fecha, la secuencia (1 a %d) o el reporte firmado", MaxReportSeq))
	}
	var out *cfe.DGIDailyReport
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketDGIReports)
		if err != nil {
			return err
		}
		last, err := lastReport(b, d)
		if err != nil {
			return err
		}
		next := 1
		if last != nil {
			next = last.Seq + 1
			if last.Phase != cfe.ReportAnswered {
				return conflict(op, "el reporte %d del %s todavía no tiene respuesta de DGI: se envía otro cuando la tenga", last.Seq, d)
			}
		}
		if seq != next {
			return invalid(op, field("sec_envio", "el próximo reporte del %s es el %d, no el %d", d, next, seq))
		}
		r := &dgiReportRecord{Date: d, Seq: seq, Phase: cfe.ReportRecorded, XML: bytes.Clone(xml), RecordedAt: db.opts.Now()}
		out = r.domain()
		return putJSON(b, reportKey(d, seq), r)
	})
	return out, err
}

// lastReport returns the day's report with the highest seq, nil when none.
func lastReport(b *bolt.Bucket, d cfe.Date) (*dgiReportRecord, error) {
	prefix := []byte(d.String() + "/")
	c := b.Cursor()
	k, _ := c.Seek(append(bytes.Clone(prefix), 0xff))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return nil, nil
	}
	var r dgiReportRecord
	if _, err := getJSON(b, k, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// updateReport applies fn to the record of report seq of day d.
func (db *DB) updateReport(ctx context.Context, op string, d cfe.Date, seq int, fn func(r *dgiReportRecord, now time.Time)) (*cfe.DGIDailyReport, error) {
	var out *cfe.DGIDailyReport
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDGIReports)
		var r dgiReportRecord
		ok := false
		if b != nil {
			var err error
			if ok, err = getJSON(b, reportKey(d, seq), &r); err != nil {
				return err
			}
		}
		if !ok {
			return notFound(op, "no hay un reporte %d del %s", seq, d)
		}
		fn(&r, db.opts.Now())
		out = r.domain()
		return putJSON(b, reportKey(d, seq), &r)
	})
	return out, err
}

// DGIReportSending records that report seq of day d leaves at at: until an
// answer is recorded, its outcome is unknown (a restart asks DGI first).
func (db *DB) DGIReportSending(ctx context.Context, d cfe.Date, seq int, at time.Time) (*cfe.DGIDailyReport, error) {
	return db.updateReport(ctx, "store.DGIReportSending", d, seq, func(r *dgiReportRecord, _ time.Time) {
		r.Attempts++
		r.SentAt, r.Phase = at, cfe.ReportUnknown
	})
}

// DGIReportFailed records that a sending of the report reached nothing
// (no connection: nothing was sent), or that reading its state failed,
// with reason (Spanish). A report not yet answered goes back to recorded
// when notSent, and stays unknown otherwise.
func (db *DB) DGIReportFailed(ctx context.Context, d cfe.Date, seq int, reason string, notSent bool) (*cfe.DGIDailyReport, error) {
	return db.updateReport(ctx, "store.DGIReportFailed", d, seq, func(r *dgiReportRecord, _ time.Time) {
		r.LastError = reason
		if notSent && r.Phase == cfe.ReportUnknown && r.Attempts <= 1 {
			r.Phase = cfe.ReportRecorded
		}
	})
}

// DGIReportAnswered records DGI's state of report seq of day d: its answer
// (ACKRepDiario: AR or BR with reasons), or what EFACCONSULTARENVIOSREPORTE
// says of it later (DR, ER, FR), with DGI's IDReceptor when known (0 keeps
// the one recorded) and at as the time it was read.
func (db *DB) DGIReportAnswered(ctx context.Context, d cfe.Date, seq int, state string, idReceptor int64, reasons []cfe.DGIReason, at time.Time) (*cfe.DGIDailyReport, error) {
	return db.updateReport(ctx, "store.DGIReportAnswered", d, seq, func(r *dgiReportRecord, _ time.Time) {
		r.Phase, r.State, r.CheckedAt, r.LastError = cfe.ReportAnswered, state, at, ""
		if idReceptor != 0 {
			r.ReceiverID = idReceptor
		}
		if reasons != nil || state != cfe.ReportMismatch {
			r.Reasons = toReasonRecords(reasons)
			if len(r.Reasons) == 0 {
				r.Reasons = nil
			}
		}
	})
}

// DGIReports returns every report of the days [from, to], by day then
// SecEnvio.
func (db *DB) DGIReports(ctx context.Context, from, to cfe.Date) ([]*cfe.DGIDailyReport, error) {
	const op = "store.DGIReports"
	var out []*cfe.DGIDailyReport
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDGIReports)
		if b == nil {
			return nil
		}
		end := []byte(to.AddDays(1).String())
		c := b.Cursor()
		for k, v := c.Seek([]byte(from.String())); k != nil && bytes.Compare(k, end) < 0; k, v = c.Next() {
			var r dgiReportRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			out = append(out, r.domain())
		}
		return nil
	})
	return out, err
}

// DGIReportStates returns, for the last n days that have a report, newest
// first, where each stands: its last report (the highest SecEnvio) and
// DGI's state of it.
func (db *DB) DGIReportStates(ctx context.Context, n int) ([]cfe.DailyReportState, error) {
	const op = "store.DGIReportStates"
	var out []cfe.DailyReportState
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDGIReports)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		var day cfe.Date
		for k, v := c.Last(); k != nil && len(out) < n; k, v = c.Prev() {
			var r dgiReportRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if r.Date == day {
				continue
			}
			day = r.Date
			out = append(out, r.domain().DailyReportState)
		}
		return nil
	})
	return out, err
}

// DGIReportStart returns the first day direct mode reports on: the
// signature date of the first CFE it sends (the first committed after
// DGIBegin's start still in the store); ok false while there is none.
func (db *DB) DGIReportStart(ctx context.Context) (d cfe.Date, ok bool, err error) {
	const op = "store.DGIReportStart"
	err = db.view(ctx, op, func(tx *bolt.Tx) error {
		if !dgiBegun(tx) {
			return nil
		}
		start := seqOf(tx.Bucket(bucketDGIMeta).Get(keyDGIStart))
		c := tx.Bucket(bucketXML).Cursor()
		for k, _ := c.Seek(seqBytes(start + 1)); k != nil; k, _ = c.Next() {
			it, err := dgiItemAt(tx, op, seqOf(k))
			if err != nil || it == nil {
				continue // damaged: the next one dates the start (the quarantine reports it)
			}
			d, ok = cfe.DateOf(it.TmstFirma.In(cfe.Montevideo)), true
			return nil
		}
		return nil
	})
	return d, ok, err
}

// DGIUnreceivedSince returns the signature time of the oldest CFE signed
// at or before until that DGI has not received (pending, in an envelope
// not yet answered, or with an unknown outcome), zero when none: a day's
// report waits for its CFEs, since DGI compares them.
func (db *DB) DGIUnreceivedSince(ctx context.Context, until time.Time) (time.Time, error) {
	const op = "store.DGIUnreceivedSince"
	var oldest time.Time
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if !dgiBegun(tx) {
			return nil
		}
		check := func(t time.Time) {
			if !t.After(until) && (oldest.IsZero() || t.Before(oldest)) {
				oldest = t
			}
		}
		if open := tx.Bucket(bucketDGIOpen); open != nil {
			cfes := tx.Bucket(bucketDGICFEs)
			c := open.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				var r dgiCFERecord
				if ok, err := getJSON(cfes, k, &r); err != nil || !ok {
					return err
				}
				check(r.TmstFirma)
			}
		}
		// Committed CFEs not yet in an envelope, after the cursor, in
		// commit order (a CFE is committed right after it is signed).
		cursor := seqOf(tx.Bucket(bucketDGIMeta).Get(keyDGICursor))
		c := tx.Bucket(bucketXML).Cursor()
		for k, _ := c.Seek(seqBytes(cursor + 1)); k != nil; k, _ = c.Next() {
			if at, ok := committedAt(tx, seqOf(k)); ok && at.After(until.Add(time.Hour)) {
				break
			}
			it, err := dgiItemAt(tx, op, seqOf(k))
			if err != nil || it == nil {
				continue // an unreadable CFE stops the envelope sender, which reports it
			}
			check(it.TmstFirma)
		}
		return nil
	})
	return oldest, err
}
