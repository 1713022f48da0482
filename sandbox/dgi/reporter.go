package dgi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/signer"
)

// The provider's daily report (docs/sandbox.md, "The daily report"): DGI
// takes one report per RUC and day, so the sandbox, the one place that
// holds every till's CFEs of a company, builds it: after midnight
// (Montevideo, the injected clock) it reports each company's previous day
// — days without CFEs too — from every CFE signed that day (the agents'
// deliveries and its own emitir and anular; each carries its CodSuc, its
// issuing point's branch) and every number annulled that day (the agents'
// ranges, POST /api/v1/numerosanulados, and the CFEs DGI rejected, BE),
// signs it with the company's certificate and sends it to its DGI.
//
// The report is recorded before it is sent and its attempt before each
// send: a report sent without an answer is asked about (EFACCONSULTAR-
// ENVIOSREPORTE with its SecEnvio) before it is ever sent again. DGI's
// answer (AR, BR) is kept, and the later state (DR, ER, FR) read until it
// is final. When a day's content changes after its report was built (an
// agent delivers a CFE of the day late, a number of the day is annulled,
// DGI rejects a CFE of the day), the report is built again and sent as a
// correction: SecEnvio + 1 after DGI took the earlier one (AR, DR, ER), the
// same SecEnvio after DGI refused it (BR: it took nothing).

// ReportDGI is what the reporter needs of DGI's web services; *dgi.Client
// implements it.
type ReportDGI interface {
	SendReport(ctx context.Context, report []byte) (*dgi.ACKRepDiario, error)
	Reports(ctx context.Context, q dgi.ReportQuery) ([]dgi.ReportInfo, error)
}

// ReportContent is what one company's report of one day is built from.
type ReportContent struct {
	RUC      string
	Date     cfe.Date
	Seq      int
	CFEs     [][]byte            // the signed CFEs of the day, in id order (DGI's rejections too: Annulled says so)
	Annulled []cfe.AnnulledRange // the numbers annulled that day (Day set)
	Now      time.Time
}

// ReporterConfig configures a Reporter. DB, Credentials, NewDGI and Build
// are required.
type ReporterConfig struct {
	DB          *data.DB
	Credentials func(ctx context.Context, company int64) (*signer.Credentials, error)
	NewDGI      func(creds *signer.Credentials) (ReportDGI, error)
	// Build writes the unsigned report of c (cfe.BuildReport), in its
	// canonical form (it is signed as it is).
	Build func(c ReportContent) ([]byte, error)
	// Poll is the wait between rounds (DefaultReportPoll); Kick cuts it
	// short. Check is the wait between two questions about a report's
	// later state (DefaultReportCheck).
	Poll  time.Duration
	Check time.Duration
	// Settle is how long after its day ends a day's report waits for DGI's
	// verdict on each of the day's CFEs (DefaultReportSettle): DGI checks
	// a report against the CFEs it received, so the report is built once
	// the provider's envelopes of the day are answered, or at the latest
	// Settle after midnight, well within DGI's deadline (the first 18
	// hours of the next business day).
	Settle time.Duration
	Now    func() time.Time
	Log    *slog.Logger
}

// Defaults of ReporterConfig.
const (
	DefaultReportPoll   = time.Minute
	DefaultReportCheck  = 10 * time.Minute
	DefaultReportSettle = 12 * time.Hour
)

// Reporter builds and sends the companies' daily reports; see above.
type Reporter struct {
	cfg  ReporterConfig
	log  *slog.Logger
	kick chan struct{}

	mu      sync.Mutex
	clients map[int64]ReportDGI
	signers map[int64]*signer.Signer
	lastErr map[int64]string
}

// NewReporter returns a Reporter for cfg.
func NewReporter(cfg ReporterConfig) *Reporter {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultReportPoll
	}
	if cfg.Check <= 0 {
		cfg.Check = DefaultReportCheck
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultReportSettle
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Reporter{cfg: cfg, log: cfg.Log, kick: make(chan struct{}, 1), clients: map[int64]ReportDGI{},
		signers: map[int64]*signer.Signer{}, lastErr: map[int64]string{}}
}

// Kick wakes the reporter for a round now.
func (r *Reporter) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run does rounds until ctx is done.
func (r *Reporter) Run(ctx context.Context) {
	dgisend.RunPasses(ctx, r.cfg.Poll, r.kick, nil, roundPass(r.Round), roundFailed(ctx, r.log, "daily report: round failed"))
}

// LastError returns the last failure of company's reports (Spanish), ""
// when none.
func (r *Reporter) LastError(company int64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr[company]
}

func (r *Reporter) setErr(company int64, msg string) {
	r.mu.Lock()
	r.lastErr[company] = msg
	r.mu.Unlock()
}

// work is what a round does for one day of one company.
type work struct {
	day    cfe.Date
	build  bool // no report yet, or its content changed: build (again)
	dirty  bool // clear the day's change mark when the content is unchanged
	record *data.DailyReportRecord
}

// Round does, for every company, what its reports need now: the days
// after its last report up to yesterday reported, changed days reported
// again, reports without DGI's answer asked about or sent, and the later
// state of received reports read.
func (r *Reporter) Round(ctx context.Context) error {
	now := r.cfg.Now()
	today := cfe.DateOf(now.In(cfe.Montevideo))
	var companies []int64
	if err := r.cfg.DB.Update(func(tx *bolt.Tx) error {
		for _, c := range data.Companies(tx) {
			if data.ReportBegin(tx, c).IsZero() {
				if err := data.SetReportBegin(tx, c, today); err != nil {
					return err
				}
			}
			companies = append(companies, c)
		}
		return nil
	}); err != nil {
		return err
	}
	var first error
	for _, c := range companies {
		if err := r.company(ctx, c, now, today); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.log.Warn("daily report: company failed", "company", c, "err", err)
			r.setErr(c, cfe.ErrorMessage(err))
			first = cmp.Or(first, err)
		}
	}
	return first
}

// plan lists company's work for today, in date order.
func (r *Reporter) plan(company int64, now time.Time, today cfe.Date) ([]work, error) {
	byDay := map[cfe.Date]*work{}
	add := func(w work) {
		if p := byDay[w.day]; p != nil {
			p.build, p.dirty = p.build || w.build, p.dirty || w.dirty
			return
		}
		byDay[w.day] = &w
	}
	err := r.cfg.DB.View(func(tx *bolt.Tx) error {
		records := map[cfe.Date]*data.DailyReportRecord{}
		if err := data.DailyReports(tx, company, cfe.Date{}, cfe.Date{}, func(rec *data.DailyReportRecord) error {
			records[rec.Date] = rec
			return nil
		}); err != nil {
			return err
		}
		for _, d := range data.ReportDirty(tx, company) {
			if d.Before(today) {
				add(work{day: d, build: true, dirty: true, record: records[d]})
			}
		}
		for d := data.ReportBegin(tx, company); d.Before(today); d = d.AddDays(1) {
			if records[d] == nil {
				add(work{day: d, build: true})
			}
		}
		for d, rec := range records {
			if rec.State == "" || ((rec.State == dgi.ReportOK || rec.State == "ER") && now.Sub(rec.CheckedAt) >= r.cfg.Check) {
				add(work{day: d, record: rec})
			}
		}
		return nil
	})
	out := make([]work, 0, len(byDay))
	for _, w := range byDay {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b work) int { return a.day.Time(time.UTC).Compare(b.day.Time(time.UTC)) })
	return out, err
}

// company does company's work.
func (r *Reporter) company(ctx context.Context, company int64, now time.Time, today cfe.Date) error {
	plan, err := r.plan(company, now, today)
	if err != nil || len(plan) == 0 {
		return err
	}
	client, sg, err := r.clientOf(ctx, company)
	if err != nil {
		return err
	}
	for _, w := range plan {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := w.record
		if rec != nil && rec.State == "" && rec.Attempts > 0 {
			// Sent without an answer: ask DGI before anything is sent.
			if rec, err = r.resolve(ctx, company, client, rec); err != nil {
				return err
			}
		}
		if w.build && (rec == nil || rec.State != "" || rec.Attempts == 0) && r.settled(company, w.day, now) {
			if rec, err = r.rebuild(company, w.day, rec, sg, w.dirty); err != nil {
				return err
			}
		}
		switch {
		case rec == nil:
		case rec.State == "":
			if _, err = r.send(ctx, company, client, rec); err != nil {
				return err
			}
		case rec.State == dgi.ReportOK || rec.State == "ER":
			if r.cfg.Now().Sub(rec.CheckedAt) >= r.cfg.Check {
				if _, err = r.later(ctx, company, client, rec); err != nil {
					return err
				}
			}
		}
	}
	r.setErr(company, "")
	return nil
}

func (r *Reporter) clientOf(ctx context.Context, company int64) (ReportDGI, *signer.Signer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[company]; c != nil {
		return c, r.signers[company], nil
	}
	creds, err := r.cfg.Credentials(ctx, company)
	if err != nil {
		return nil, nil, err
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: r.cfg.Now})
	if err != nil {
		return nil, nil, err
	}
	client, err := r.cfg.NewDGI(creds)
	if err != nil {
		return nil, nil, err
	}
	r.clients[company], r.signers[company] = client, sg
	return client, sg, nil
}

// settled reports whether day d's report may be built now: every CFE of
// company signed that day has DGI's verdict, or Settle has passed since
// the day ended.
func (r *Reporter) settled(company int64, d cfe.Date, now time.Time) bool {
	if !now.Before(d.AddDays(1).Time(cfe.Montevideo).Add(r.cfg.Settle)) {
		return true
	}
	settled := true
	err := r.cfg.DB.View(func(tx *bolt.Tx) error {
		return data.CompanyCFEs(tx, company, func(rec *data.CFERecord) error {
			if !settled || rec.SignatureDay() != d {
				return nil
			}
			st, err := data.GetDGI(tx, rec.ID)
			settled = err == nil && st != nil && cfe.DGIFinal(st.State)
			return err
		})
	})
	return err == nil && settled
}

// content reads company's content of day d and its fingerprint.
func content(tx *bolt.Tx, company int64, d cfe.Date) (ReportContent, string, error) {
	co, err := data.GetCompany(tx, company)
	if err != nil {
		return ReportContent{}, "", err
	}
	c := ReportContent{RUC: co.RUC, Date: d}
	h := sha256.New()
	err = data.CompanyCFEs(tx, company, func(rec *data.CFERecord) error {
		if rec.SignatureDay() != d {
			return nil
		}
		st, err := data.GetDGI(tx, rec.ID)
		if err != nil {
			return err
		}
		if st != nil && st.State == cfe.DGIRejected {
			note := ""
			for _, m := range st.Reasons {
				note += m.Codigo + " " + m.Glosa + "; "
			}
			c.Annulled = append(c.Annulled, cfe.AnnulledRange{Type: rec.Type, Serie: rec.Serie, From: rec.Nro, To: rec.Nro,
				Reason: cfe.AnnulDGIRejected, Note: note, At: st.UpdatedAt, Day: d})
		}
		c.CFEs = append(c.CFEs, rec.XML)
		fmt.Fprintf(h, "cfe %d\n", rec.ID)
		return nil
	})
	if err != nil {
		return c, "", err
	}
	err = data.CompanyAnnulled(tx, company, func(a *data.AnnulledRecord) error {
		if a.Day() != d {
			return nil
		}
		// A number of the range that is also a CFE (DGI rejected it: the
		// agent learnt it and annulled it too) is counted by the CFE, on
		// its signature day.
		var used []int64
		if err := data.SerieCFEs(tx, company, a.Type, a.Serie, func(nro, _ int64) error {
			if a.From <= nro && nro <= a.To {
				used = append(used, nro)
			}
			return nil
		}); err != nil {
			return err
		}
		slices.Sort(used)
		from := a.From
		for _, n := range append(used, a.To+1) {
			if n > from {
				c.Annulled = append(c.Annulled, cfe.AnnulledRange{Type: a.Type, Serie: a.Serie, From: from, To: n - 1,
					Reason: a.Reason, Note: a.Note, At: a.At, Day: d})
			}
			from = n + 1
		}
		return nil
	})
	if err != nil {
		return c, "", err
	}
	slices.SortFunc(c.Annulled, func(a, b cfe.AnnulledRange) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie), cmp.Compare(a.From, b.From))
	})
	for _, a := range c.Annulled {
		fmt.Fprintf(h, "annulled %d %s %d %d\n", int(a.Type), a.Serie, a.From, a.To)
	}
	return c, hex.EncodeToString(h.Sum(nil)), nil
}

// countAnnulled returns the number of annulled numbers of c.
func (c ReportContent) countAnnulled() int {
	n := 0
	for _, a := range c.Annulled {
		n += int(a.To - a.From + 1)
	}
	return n
}

// rebuild builds day d's report again when its content is not the one
// prev was built from, and records it unsent: SecEnvio 1 for the day's
// first report, prev's again after a BR, prev's + 1 after DGI took prev.
// It returns the record to act on (prev when nothing changed).
func (r *Reporter) rebuild(company int64, d cfe.Date, prev *data.DailyReportRecord, sg *signer.Signer, dirty bool) (*data.DailyReportRecord, error) {
	var rec *data.DailyReportRecord
	err := r.cfg.DB.Update(func(tx *bolt.Tx) error {
		c, fp, err := content(tx, company, d)
		if err != nil {
			return err
		}
		cur, err := data.GetDailyReport(tx, company, d)
		if err != nil {
			return err
		}
		if cur != nil && cur.Fingerprint == fp {
			rec = cur
			if dirty {
				return data.ClearReportDirty(tx, company, d)
			}
			return nil
		}
		if cur != nil && cur.State == "" && cur.Attempts > 0 {
			rec = cur // its outcome is not known: resolved first, rebuilt in a later round
			return nil
		}
		now := r.cfg.Now()
		next := &data.DailyReportRecord{Date: d, Seq: 1, Fingerprint: fp, CFEs: len(c.CFEs), Annulled: c.countAnnulled(), BuiltAt: now.UTC()}
		if cur != nil {
			next.Seq, next.Earlier = cur.Seq, cur.Earlier
			if cur.State != dgi.ReportFailed && cur.State != "" {
				next.Seq = cur.Seq + 1
				next.Earlier = append(slices.Clone(cur.Earlier), data.EarlierReport{Seq: cur.Seq, State: cur.State, IDReceptor: cur.IDReceptor, SentAt: cur.SentAt})
			}
		}
		c.Seq, c.Now = next.Seq, now
		unsigned, err := r.cfg.Build(c)
		if err != nil {
			return err
		}
		signed, err := sg.SignCanonical(unsigned)
		if err != nil {
			return err
		}
		next.XML = signed.XML
		if err := data.PutDailyReport(tx, company, next); err != nil {
			return err
		}
		rec = next
		return data.ClearReportDirty(tx, company, d)
	})
	if err == nil && rec != prev && (prev == nil || rec.Seq != prev.Seq || rec.Fingerprint != prev.Fingerprint) {
		r.log.Info("daily report built", "company", company, "fecha", d.String(), "secEnvio", rec.Seq, "cfes", rec.CFEs, "anulados", rec.Annulled)
	}
	return rec, err
}

// update applies fn to company's record of day d, unless it is no longer
// the report of seq (a later round rebuilt it).
func (r *Reporter) update(company int64, d cfe.Date, seq int, fingerprint string, fn func(rec *data.DailyReportRecord)) (*data.DailyReportRecord, error) {
	var out *data.DailyReportRecord
	err := r.cfg.DB.Update(func(tx *bolt.Tx) error {
		rec, err := data.GetDailyReport(tx, company, d)
		if err != nil || rec == nil {
			return cmp.Or(err, data.NotFound("el reporte del "+d.String()))
		}
		if rec.Seq != seq || rec.Fingerprint != fingerprint {
			out = rec
			return nil
		}
		fn(rec)
		out = rec
		return data.PutDailyReport(tx, company, rec)
	})
	return out, err
}

func reasonsOf(ms []dgi.Motivo) []data.DGIReason {
	var out []data.DGIReason
	for _, m := range ms {
		out = append(out, data.DGIReason{Codigo: m.Codigo, Glosa: m.Glosa, Detalle: m.Detalle})
	}
	return out
}

// send sends rec's report, its attempt recorded first.
func (r *Reporter) send(ctx context.Context, company int64, client ReportDGI, rec *data.DailyReportRecord) (*data.DailyReportRecord, error) {
	rec, err := r.update(company, rec.Date, rec.Seq, rec.Fingerprint, func(rec *data.DailyReportRecord) {
		rec.Attempts++
		rec.SentAt = r.cfg.Now().UTC()
	})
	if err != nil || rec.State != "" {
		return rec, err
	}
	ack, sendErr := client.SendReport(ctx, rec.XML)
	if sendErr != nil {
		msg := "DGI no respondió al reporte del " + rec.Date.String() + ": " + cfe.ErrorMessage(sendErr)
		_, err := r.update(company, rec.Date, rec.Seq, rec.Fingerprint, func(rec *data.DailyReportRecord) { rec.LastError = msg })
		r.log.Warn("daily report: not answered; DGI is asked before it is sent again", "company", company, "fecha", rec.Date.String(),
			"secEnvio", rec.Seq, "err", sendErr)
		return rec, cmp.Or(err, sendErr)
	}
	r.log.Info("daily report sent", "company", company, "fecha", rec.Date.String(), "secEnvio", rec.Seq, "estado", ack.Estado,
		"idReceptor", ack.IDReceptor)
	return r.update(company, rec.Date, rec.Seq, rec.Fingerprint, func(rec *data.DailyReportRecord) {
		rec.State, rec.Reasons, rec.IDReceptor, rec.LastError = ack.Estado, reasonsOf(ack.Motivos), ack.IDReceptor, ""
		rec.CheckedAt = r.cfg.Now().UTC()
	})
}

// resolve asks DGI about a report sent without an answer: DGI's state when
// it has it, otherwise the record as it is, to be sent again.
func (r *Reporter) resolve(ctx context.Context, company int64, client ReportDGI, rec *data.DailyReportRecord) (*data.DailyReportRecord, error) {
	list, err := client.Reports(ctx, dgi.ReportQuery{FechaResumen: rec.Date, Secuencia: rec.Seq})
	if err != nil {
		return rec, err
	}
	if len(list) == 0 {
		r.log.Info("daily report: DGI does not have it; sending it again", "company", company, "fecha", rec.Date.String(), "secEnvio", rec.Seq)
		return rec, nil
	}
	info := list[len(list)-1]
	return r.update(company, rec.Date, rec.Seq, rec.Fingerprint, func(rec *data.DailyReportRecord) {
		rec.State, rec.IDReceptor, rec.LastError = info.Estado, info.IdReceptor, ""
		rec.CheckedAt = r.cfg.Now().UTC()
	})
}

// later reads the later state (DR, ER, FR) of a report DGI received.
func (r *Reporter) later(ctx context.Context, company int64, client ReportDGI, rec *data.DailyReportRecord) (*data.DailyReportRecord, error) {
	list, err := client.Reports(ctx, dgi.ReportQuery{FechaResumen: rec.Date, Secuencia: rec.Seq})
	if err != nil {
		return rec, err
	}
	state := rec.State
	for _, info := range list {
		if rec.IDReceptor == 0 || info.IdReceptor == rec.IDReceptor {
			state = info.Estado
		}
	}
	if state != rec.State {
		r.log.Info("daily report: DGI's later state", "company", company, "fecha", rec.Date.String(), "secEnvio", rec.Seq, "estado", state)
	}
	return r.update(company, rec.Date, rec.Seq, rec.Fingerprint, func(rec *data.DailyReportRecord) {
		rec.State = state
		rec.CheckedAt = r.cfg.Now().UTC()
	})
}

// States returns company's report states of the days from to to (zero
// bounds open), in date order.
func States(db *data.DB, company int64, from, to cfe.Date) ([]*data.DailyReportRecord, error) {
	var out []*data.DailyReportRecord
	err := db.View(func(tx *bolt.Tx) error {
		return data.DailyReports(tx, company, from, to, func(rec *data.DailyReportRecord) error {
			out = append(out, rec)
			return nil
		})
	})
	return out, err
}
