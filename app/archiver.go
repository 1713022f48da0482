package app

import (
	"context"
	"log/slog"
	"time"
)

// archiveFirstRun is how long after the start the daily archive first runs:
// not while the agent starts, and soon enough that an agent started on a new
// year's first day moves the previous year that day.
const archiveFirstRun = 2 * time.Minute

// runArchiver moves the CFEs of the years the profile does not keep
// (profiles.Archive) to the yearly archives, once a day while the agent
// serves, until ctx ends. Only delivered CFEs move (store.DB.Archive); a
// failure is logged and retried the next day.
func runArchiver(ctx context.Context, a *Agent, log *slog.Logger) {
	if a.Profile.Archive.Disabled {
		return
	}
	t := time.NewTimer(archiveFirstRun)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		before := a.Profile.Archive.Before(time.Now())
		res, err := a.DB.Archive(ctx, before)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("the daily archive of previous years failed", "before", before.String(), "moved", res.Moved, "err", err)
		case res.Moved > 0:
			log.Info("archived CFEs of previous years", "before", before.String(), "moved", res.Moved, "years", res.Years)
		}
		t.Reset(24 * time.Hour)
	}
}
