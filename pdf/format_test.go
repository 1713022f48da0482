package pdf

import (
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/shopspring/decimal"
)

func TestFormat_Numbers(t *testing.T) {
	t.Parallel()
	d := decimal.RequireFromString
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"money zero", money(d("0")), "0,00"},
		{"money small", money(d("5")), "5,00"},
		{"money thousands", money(d("1234.5")), "1.234,50"},
		{"money millions", money(d("137704.92")), "137.704,92"},
		{"money exact group", money(d("100000")), "100.000,00"},
		{"money negative", money(d("-1234567.891")), "-1.234.567,89"},
		{"money with currency", moneyIn("USD", d("29400")), "USD 29.400,00"},
		{"money without currency", moneyIn("", d("1")), "1,00"},
		{"quantity whole", quantity(d("10")), "10"},
		{"quantity fraction", quantity(d("1.500")), "1,5"},
		{"quantity thousands", quantity(d("1000.125")), "1.000,125"},
		{"quantity negative", quantity(d("-2")), "-2"},
		{"price keeps two decimals", price(d("1000")), "1.000,00"},
		{"price keeps needed decimals", price(d("12.3456")), "12,3456"},
		{"price six decimals", price(d("0.000001")), "0,000001"},
		{"rate whole", rate(d("22")), "22 %"},
		{"rate fraction", rate(d("10.500")), "10,5 %"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestFormat_Date(t *testing.T) {
	t.Parallel()
	if got := date(cfe.Date{Year: 2016, Month: 7, Day: 9}); got != "09/07/2016" {
		t.Fatalf("date: got %q, want 09/07/2016", got)
	}
}
