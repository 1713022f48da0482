package dgi

import (
	"context"
	"log/slog"
	"time"
)

// runRounds calls round at once and then every poll, or sooner when kick
// wakes it, until ctx is done: the loop of the provider's envelope sender
// and of its daily reporter. A failed round is logged with msg.
func runRounds(ctx context.Context, kick <-chan struct{}, poll time.Duration, log *slog.Logger, msg string, round func(context.Context) error) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		if err := round(ctx); err != nil && ctx.Err() == nil {
			log.Warn(msg, "err", err)
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(poll)
	}
}
