//go:build !windows

package main

import "context"

// watchStopMessages is Windows' hidden stop window (stopwindow_windows.go);
// elsewhere SIGINT and SIGTERM are the whole story.
func watchStopMessages(ctx context.Context) (context.Context, func(), error) {
	return ctx, func() {}, nil
}
