package main_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/browser"
)

// chartLabels reads, in the browser, the box of the sales chart's SVG and of
// each of its labels (the tallest bar's amount and the hour ticks), in CSS
// pixels.
const chartLabels = `(() => {
  const svg = document.querySelector("#ventas svg").getBoundingClientRect();
  return Array.from(document.querySelectorAll("#ventas svg text")).map(t => {
    const r = t.getBoundingClientRect();
    return {label: t.textContent, cls: t.getAttribute("class"),
      top: r.top - svg.top, bottom: svg.bottom - r.bottom, left: r.left - svg.left, right: svg.right - r.right};
  });
})()`

type chartLabel struct {
	Label                    string
	Cls                      string
	Top, Bottom, Left, Right float64
}

// TestStatusPage_chartLabelsInsideBox: on a phone (390 and 360 px) as on a
// desktop, every label of the sales chart — the tallest bar's amount at the
// top, the hours at the bottom — lies inside the SVG's box (the SVG clips
// what is outside it: the amount's top was cut at 390 px).
func TestStatusPage_chartLabelsInsideBox(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "chromium")
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")
	p.signExample("8a4f5e6d-7b82-4d9e-9fa0-2b3c4d5e6f70")

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), browser.Options(t, chromedp.Flag("hide-scrollbars", true))...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Run(bctx); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int64{390, 360, 1280} {
		ctx, cancelTimeout := context.WithTimeout(bctx, 60*time.Second)
		var labels []chartLabel
		err := chromedp.Run(ctx,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(p.baseURL+"/"),
			chromedp.WaitVisible(`#ventas svg text.max`, chromedp.ByQuery),
			chromedp.Evaluate(chartLabels, &labels),
		)
		cancelTimeout()
		if err != nil {
			t.Fatalf("%d px: loading the status page: %v", width, err)
		}
		var sawMax bool
		for _, l := range labels {
			sawMax = sawMax || l.Cls == "max"
			if l.Top < 0 || l.Bottom < 0 || l.Left < 0 || l.Right < 0 {
				t.Errorf("%d px: the chart's label %q (%s) leaves the chart's box by %.1f px at the top, %.1f at the bottom, %.1f left, %.1f right",
					width, l.Label, l.Cls, max(-l.Top, 0), max(-l.Bottom, 0), max(-l.Left, 0), max(-l.Right, 0))
			}
		}
		if !sawMax || len(labels) < 9 {
			t.Errorf("%d px: the chart has %d labels, without the maximum's: %+v", width, len(labels), labels)
		}
	}
}
