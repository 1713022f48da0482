package dgi

import (
	"context"
	"log/slog"
)

// roundPass makes a round a pass of dgisend.RunPasses, the loop the
// provider's sender and reporter share with the agent's: a round is not
// repeated at once (the next comes at the poll or a kick).
func roundPass(round func(context.Context) error) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) { return false, round(ctx) }
}

// roundFailed logs a failed round with msg, unless ctx has ended.
func roundFailed(ctx context.Context, log *slog.Logger, msg string) func(error) {
	return func(err error) {
		if ctx.Err() == nil {
			log.Warn(msg, "err", err)
		}
	}
}
