package hosted

import (
	"context"
	"log/slog"
	"time"
)

// passOutcome is what one pass of a background loop (runPasses) asks of
// it.
type passOutcome struct {
	again bool          // more work waits: pass again at once
	wait  time.Duration // how long to wait otherwise; 0: the loop's poll
}

// runPasses runs pass until ctx ends, the loop of the annulled-number
// deliverer and the DGI reader: a client without credentials only waits; a
// failed pass waits a growing backoff, at least floor and never less than
// the service's Retry-After, and is logged with msg; a kick wakes the wait.
func runPasses(ctx context.Context, c *Client, kick <-chan struct{}, poll, floor time.Duration, log *slog.Logger, msg string,
	pass func(context.Context) (passOutcome, error)) {
	failures := 0
	for ctx.Err() == nil {
		wait := poll
		if c.Auth() != AuthNone {
			out, err := pass(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				failures++
				wait = max(floor, backoff(failures))
				if ra, ok := RetryAfter(err); ok {
					wait = max(wait, ra)
				}
				log.Warn(msg, "wait", wait, "err", err)
			case out.again:
				failures = 0
				continue
			default:
				failures = 0
				if out.wait > 0 {
					wait = out.wait
				}
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-kick:
			t.Stop()
		case <-t.C:
		}
	}
}
