package app

import (
	"context"
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/signer"
)

// recentReceipts is how many of the last signed CFEs the state reports.
const recentReceipts = 10

// facts reads, as of now, what the agent's state report is made of: the
// signer's certificate, the store's ranges, outbox, receipts, numbering hold
// and disk, the hosted service as last seen and the backups. It stays cheap:
// every /health request calls it.
func (a *Agent) facts(ctx context.Context, now time.Time) (health.State, error) {
	today := cfe.DateOf(now.In(cfe.Montevideo))
	var st health.State
	if a.Signer != nil {
		c := signer.CertInfo(a.Signer.Certificate(), now)
		st.Certificate = &c
	} else if a.CertErr != nil {
		st.CertificateError = cfe.ErrorMessage(a.CertErr)
	}
	var err error
	if st.CAE, err = a.DB.RangeStatus(ctx, today); err != nil {
		return st, err
	}
	stats, err := a.DB.Stats(ctx)
	if err != nil {
		return st, err
	}
	st.Outbox = stats.Outbox
	if st.Receipts.SignedToday, err = a.DB.CountByDate(ctx, today, today); err != nil {
		return st, err
	}
	if st.Receipts.Recent, err = a.DB.Last(ctx, recentReceipts); err != nil {
		return st, err
	}
	if len(st.Receipts.Recent) > 0 {
		st.Receipts.LastSignedAt = st.Receipts.Recent[0].TmstFirma
	}
	st.Hosted = hostedState(a)
	if h := a.DB.NumberingHold(); h != nil {
		st.NumberingHold = &health.NumberingHold{Since: h.Since, Reason: h.Reason}
		for _, r := range h.Released {
			st.NumberingHold.Settled = append(st.NumberingHold.Settled, fmt.Sprintf("%s serie %s", r.Type.Name(), r.Serie))
		}
	}
	storage := a.DB.Storage()
	st.Storage = &storage
	st.Backup = backupState(a)
	st.Printer = a.PrinterWatch.state()
	if st.DGI, err = dgiState(ctx, a, now); err != nil {
		return st, err
	}
	return st, nil
}
