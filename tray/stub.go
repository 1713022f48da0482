//go:build !linux && !windows && !(darwin && cgo)

package tray

import (
	"context"
	"fmt"
	"runtime"
)

// Available reports that this build has no tray.
func Available(context.Context) error {
	return fmt.Errorf("%w: this build for %s has no tray", ErrUnavailable, runtime.GOOS)
}

// Run returns Available's error: this build has no tray.
func Run(ctx context.Context, _ Config) error { return Available(ctx) }

// WaitHost returns Available's error: this build has no tray.
func WaitHost(ctx context.Context) error { return Available(ctx) }
