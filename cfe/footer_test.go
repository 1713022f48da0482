package cfe

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckFooter(t *testing.T) {
	t.Parallel()
	fecha := Date{Year: 2012, Month: time.October, Day: 1}
	for _, c := range []struct {
		name       string
		fecha      Date
		resolucion string
		webURL     string
		want       []string // the fields named
	}{
		{"nothing set", Date{}, "", "", nil},
		{"fecha emisor and web site", fecha, "", "https://www.laesquina.com.uy/cfe", nil},
		{"resolution over http", Date{}, "798/2012", "http://laesquina.com.uy", nil},
		{"fecha emisor before 2000", Date{Year: 1999, Month: time.December, Day: 31}, "", "", []string{"fechaEmisor"}},
		{"resolution and fecha emisor", fecha, "798/2012", "", []string{"resolucion"}},
		{"resolution with Res.", Date{}, "Res. 798/2012", "", []string{"resolucion"}},
		{"resolution without year", Date{}, "798", "", []string{"resolucion"}},
		{"resolution with a two-digit year", Date{}, "798/12", "", []string{"resolucion"}},
		{"resolution number 0", Date{}, "0/2012", "", []string{"resolucion"}},
		{"web site without scheme", Date{}, "", "www.laesquina.com.uy", []string{"webUrl"}},
		{"web site over FTP", Date{}, "", "ftp://laesquina.com.uy", []string{"webUrl"}},
		{"web site with a space", Date{}, "", "https://laesquina.com.uy/mis cfe", []string{"webUrl"}},
		{"web site too long", Date{}, "", "https://laesquina.com.uy/" + strings.Repeat("a", 100), []string{"webUrl"}},
		{"every rule broken", Date{Year: 1012, Month: time.May, Day: 2}, "1234-2016", "laesquina", []string{"fechaEmisor", "resolucion", "webUrl"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range CheckFooter(c.fecha, c.resolucion, c.webURL) {
				if f.Mensaje == "" {
					t.Errorf("%s has no message", f.Campo)
				}
				got = append(got, f.Campo)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("fields %v, want %v", got, c.want)
			}
		})
	}
}
