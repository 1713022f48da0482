//go:build !windows

package winstop

import "context"

// Watch is Windows' hidden stop window (winstop_windows.go); elsewhere
// SIGINT and SIGTERM are the whole story, and ctx is returned as it is.
func Watch(ctx context.Context) (context.Context, func(), error) {
	return ctx, func() {}, nil
}
