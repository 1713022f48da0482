package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// salesChart is the page's bar chart of today's sales by hour, drawn as an
// inline SVG by the page's template from these numbers (viewBox units).
type salesChart struct {
	Width, Height int
	Baseline      int // the bars stand on it
	Bars          []chartBar
	Ticks         []chartTick // hour labels under the bars
	Max           string      // the tallest bar's amount, at the top of the axis
	MaxY          int         // the baseline of Max's label
	Caption       string      // the day's total, in words
	Others        string      // sales in other currencies, not charted; "" when none
	Empty         bool        // nothing sold yet today
}

type chartBar struct {
	X, Y, W, H float64
	Title      string // the hour, its amount and its receipts
	Current    bool   // the hour now
}

type chartTick struct {
	X, Y  float64
	Label string
}

// Chart geometry, in viewBox units. The labels' room is for their largest
// size, 26 units on a phone (status.css), whose glyph box reaches about 0.93
// of it above the baseline and 0.25 below: the maximum's label stands on
// chartMaxY, inside the chart's top, and the hours' on chartHeight -
// chartTickDrop (TestStatusPage_chartLabelsInsideBox measures them in a
// browser at 390 and 360 px).
const (
	chartWidth    = 720
	chartHeight   = 190
	chartTop      = 36 // room for the maximum's label
	chartMaxY     = 28
	chartBottom   = 34 // room for the hour labels
	chartTickDrop = 9
	chartLeft     = 8
	chartRight    = 8
)

// newSalesChart draws the 24 hours of the day with their sales in pesos;
// credit notes make an hour's bar shorter, never negative.
func newSalesChart(s *salesToday, now time.Time) *salesChart {
	c := &salesChart{Width: chartWidth, Height: chartHeight, Baseline: chartHeight - chartBottom, MaxY: chartMaxY, Empty: s.sold == 0}
	maxAmount := decimal.Zero
	for _, a := range s.hours {
		if a.GreaterThan(maxAmount) {
			maxAmount = a
		}
	}
	slot := float64(chartWidth-chartLeft-chartRight) / 24
	plot := float64(chartHeight - chartTop - chartBottom)
	nowHour := -1
	if cfe.DateOf(now.In(cfe.Montevideo)) == s.day {
		nowHour = now.In(cfe.Montevideo).Hour()
	}
	for h, a := range s.hours {
		x := chartLeft + float64(h)*slot
		height := 0.0
		if maxAmount.IsPositive() && a.IsPositive() {
			height, _ = a.Div(maxAmount).Mul(decimal.NewFromFloat(plot)).Float64()
			height = max(height, 1)
		}
		receipts := "comprobantes"
		if s.receipts[h] == 1 {
			receipts = "comprobante"
		}
		c.Bars = append(c.Bars, chartBar{
			X: round1(x + slot*0.15), W: round1(slot * 0.7), Y: round1(chartTop + plot - height), H: round1(height),
			Title:   fmt.Sprintf("%02d:00 a %02d:59: %s (%d %s)", h, h, formatMoney("UYU", s.hours[h]), s.receipts[h], receipts),
			Current: h == nowHour,
		})
		if h%3 == 0 {
			c.Ticks = append(c.Ticks, chartTick{X: round1(x + slot/2), Y: chartHeight - chartTickDrop, Label: fmt.Sprintf("%d h", h)})
		}
	}
	c.Max = formatMoney("UYU", maxAmount)
	receipts := "comprobantes"
	if s.sold == 1 {
		receipts = "comprobante"
	}
	c.Caption = fmt.Sprintf("Ventas de hoy: %s en %s %s", formatMoney("UYU", s.total), formatInt(int64(s.sold)), receipts)
	if len(s.others) > 0 {
		var parts []string
		for _, cur := range slices.Sorted(maps.Keys(s.others)) {
			parts = append(parts, formatMoney(cur, s.others[cur]))
		}
		c.Others = "Además, en otras monedas (no están en el gráfico): " + strings.Join(parts, "; ")
	}
	return c
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }
