package app

import (
	"context"
	"log/slog"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// loggedOutbox is the store as the deliverer's outbox: each CFE the outbox
// moves to the quarantine is logged once, as an error, with how to recover
// it. The deliverer calls it from one goroutine.
type loggedOutbox struct {
	*store.DB
	log    *slog.Logger
	logged map[string]bool // uuids of quarantined CFEs already logged
}

func newLoggedOutbox(db *store.DB, log *slog.Logger) *loggedOutbox {
	return &loggedOutbox{DB: db, log: log, logged: map[string]bool{}}
}

func (o *loggedOutbox) PendingOutbox(ctx context.Context, limit int) ([]*cfe.Issued, error) {
	before := o.QuarantineCount()
	list, err := o.DB.PendingOutbox(ctx, limit)
	if err != nil || o.QuarantineCount() <= before {
		return list, err
	}
	held, qerr := o.Quarantined(ctx)
	if qerr != nil {
		return list, err
	}
	for _, q := range held {
		if !o.logged[q.UUID] {
			o.logged[q.UUID] = true
			o.log.Error("a signed CFE cannot be read back: held out of delivery while the others go on; recover it with cfe-agent recuperar",
				"uuid", q.UUID, "tipo", int(q.Type), "serie", q.Serie, "nro", q.Nro, "reason", q.Reason)
		}
	}
	return list, err
}
