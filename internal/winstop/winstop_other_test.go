//go:build !windows

package winstop

import (
	"context"
	"testing"
)

// TestWatch_elsewhere: outside Windows the run context is the caller's own
// (signals stop the agent) and nothing fails.
func TestWatch_elsewhere(t *testing.T) {
	t.Parallel()
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "run")
	ctx, done, err := Watch(parent)
	if err != nil || ctx != parent || done == nil {
		t.Fatalf("Watch = %v, done %v, %v; want the caller's context, a done function and no error", ctx, done != nil, err)
	}
	done()
	if ctx.Err() != nil {
		t.Error("done canceled the caller's context")
	}
}
