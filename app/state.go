package app

import (
	"context"
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
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
		st.Certificate = &health.Certificate{Subject: c.CommonName, RUC: c.RUC, NotBefore: c.NotBefore, NotAfter: c.NotAfter,
			SubjectDN: c.Subject, Issuer: c.Issuer, SerialNumber: c.SerialNumber, Test: c.Test}
	} else if a.CertErr != nil {
		st.CertificateError = cfe.ErrorMessage(a.CertErr)
	}
	ranges, err := a.DB.RangeStatus(ctx, today)
	if err != nil {
		return st, err
	}
	for _, r := range ranges {
		st.CAE = append(st.CAE, health.CAERangeUse{Range: r.Range, Used: r.Used, Remaining: r.Remaining, Expired: r.Expired,
			NearlyUsedUp: r.NearlyUsedUp, NearExpiry: r.NearExpiry})
	}
	stats, err := a.DB.Stats(ctx)
	if err != nil {
		return st, err
	}
	st.Outbox = health.Outbox{Pending: stats.Pending, OldestPending: stats.OldestPending, Rejected: stats.Rejected,
		Quarantined: stats.Quarantined}
	for _, q := range stats.Quarantine {
		st.Outbox.Quarantine = append(st.Outbox.Quarantine, health.QuarantinedCFE{UUID: q.UUID, Type: q.Type, Serie: q.Serie,
			Nro: q.Nro, CommittedAt: q.CommittedAt, Since: q.Since, Reason: q.Reason})
	}
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
	st.Storage = storageState(a.DB)
	st.Backup = backupState(a)
	return st, nil
}

// storageState reports the disk of the store: the last commit's failure and
// the free space of the store's filesystem (one statfs).
func storageState(db *store.DB) *health.Storage {
	w := db.WriteHealth()
	st := &health.Storage{Dir: w.Dir, LastWriteError: w.LastError, LastWriteErrorAt: w.LastErrorAt}
	free, total, err := store.FreeSpace(w.Dir)
	if err != nil {
		st.SpaceError = "no se pudo leer el espacio libre del disco de los datos"
	} else {
		st.FreeBytes, st.TotalBytes = free, total
	}
	return st
}
