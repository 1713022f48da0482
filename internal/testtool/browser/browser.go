// Package browser starts headless Chromium for tests the way this machine and
// CI can run it: the Debian build found by testtool.Require, a fresh profile,
// and the flags that keep it off the network.
package browser

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// Options returns the allocator options of a headless Chromium with a new
// profile (removed when the test ends), followed by extra. The test is
// skipped, or failed under CFE_STRICT_TOOLS=1, when chromium is missing.
func Options(t testing.TB, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	t.Helper()
	chromium := testtool.Require(t, "chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(testtool.BrowserProfile(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // tests run as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
	}
	return append(opts, extra...)
}
