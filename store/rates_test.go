package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestDB_Rates: the rate table keeps each quote with its source across a
// restart, refuses bad quotes writing none, and gives an operation the
// close of the last day before it that has one (Friday's on a Monday), up
// to store.RateLookBack days back.
func TestDB_Rates(t *testing.T) {
	t.Parallel()
	db, path := openStore(t, store.Options{})
	fri := cfe.Date{Year: 2026, Month: time.March, Day: 13}
	rates := []store.Rate{
		{Currency: "USD", Day: fri, Value: decimal.RequireFromString("39.812"), Source: "archivo bcu.csv, línea 2"},
		{Currency: "EUR", Day: fri, Value: decimal.RequireFromString("43.1"), Source: "ingresada por el técnico"},
	}
	if err := db.SetRates(ctx, rates); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []store.Rate{
		{Currency: "usd", Day: fri, Value: decimal.NewFromInt(1), Source: "x"},
		{Currency: "UYU", Day: fri, Value: decimal.NewFromInt(1), Source: "x"},
		{Currency: "USD", Day: fri, Value: decimal.Zero, Source: "x"},
		{Currency: "USD", Value: decimal.NewFromInt(1), Source: "x"},
		{Currency: "USD", Day: fri, Value: decimal.NewFromInt(1)},
	} {
		ok := store.Rate{Currency: "BRL", Day: fri, Value: decimal.NewFromInt(8), Source: "x"}
		if err := db.SetRates(ctx, []store.Rate{ok, bad}); cfe.ErrorCode(err) != cfe.EINVALID {
			t.Errorf("SetRates(%+v) = %v, want EINVALID", bad, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Rates(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("Rates = %+v, %v (the refused BRL must not be there)", got, err)
	}
	table, err := db.RateTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mon := fri.AddDays(3)
	if v, src, ok := table.Rate("USD", mon); !ok || !v.Equal(decimal.RequireFromString("39.812")) ||
		!strings.Contains(src, "BCU USD del 2026-03-13 (archivo bcu.csv, línea 2)") {
		t.Errorf("Monday's USD = %s %q %v, want Friday's close", v, src, ok)
	}
	if _, _, ok := table.Rate("USD", fri); ok {
		t.Error("an operation on Friday used Friday's own close: it converts at the day before's")
	}
	if _, _, ok := table.Rate("USD", fri.AddDays(store.RateLookBack+1)); ok {
		t.Error("a quote older than RateLookBack days was used")
	}
	if _, _, ok := table.Rate("ARS", mon); ok {
		t.Error("a currency without quotes has a rate")
	}
}
