package cfe_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestQRData_DGIExample checks the worked example of dgi-cfe-format.md §4,
// made from DGI's signed sample CFE 101 A-1 as read from the file.
func TestQRData_DGIExample(t *testing.T) {
	t.Parallel()
	file := filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe", "Sob_Ej_Mod_19072016__CFE_101_A1.xml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfe.ParseXML(b)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := cfe.DigestValue(b)
	if err != nil {
		t.Fatal(err)
	}
	const want = "https://www.efactura.dgi.gub.uy/consultaQR/cfe?219999830019,101,A,1,168816.00,19/07/2016,xpXiLtg0nWejadP44Gm7ArFMk7Y%3D"
	if got := cfe.QRData(c, digest); got != want {
		t.Errorf("QRData =\n%s\nwant\n%s", got, want)
	}
	if got := cfe.SecurityCode(digest); got != "xpXiLt" {
		t.Errorf("SecurityCode = %q, want xpXiLt", got)
	}
}

// TestQRAmount gives every document three different amounts, so that each
// rule shows which one it takes.
func TestQRAmount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ  cfe.Type
		want string // amount as the QR writes it
	}{
		{cfe.ERemito, "0.00"}, {cfe.ERemito + 100, "0.00"},
		{cfe.EResguardo, "7.10"}, {cfe.EResguardo + 100, "7.10"},
		{cfe.ERemitoExp, "100.50"}, {cfe.ERemitoExp + 100, "100.50"},
		{cfe.ETicket, "120.25"}, {cfe.ETicket + 100, "120.25"}, {cfe.ETicketNC, "120.25"},
		{cfe.EFactura, "120.25"}, {cfe.EFacturaExp, "120.25"}, {cfe.EFacturaCtaAjena, "120.25"},
		{cfe.EBoleta, "120.25"},
	}
	for _, tc := range cases {
		t.Run(tc.typ.String(), func(t *testing.T) {
			c := minimalCFE(tc.typ)
			c.Totales.MntTotal, c.Totales.MntPagar, c.Totales.MntTotRetenido = numP("100.5"), numP("120.25"), numP("7.1")
			if got := cfe.QRAmount(c); !got.Equal(num(tc.want)) {
				t.Errorf("QRAmount = %s, want %s", got, tc.want)
			}
			fields := strings.Split(strings.TrimPrefix(cfe.QRData(c, "AAAA"), cfe.QRBaseURL+"?"), ",")
			if len(fields) != 7 || fields[4] != tc.want {
				t.Errorf("QR fields %q, want amount %s", fields, tc.want)
			}
		})
	}
	t.Run("absent amount", func(t *testing.T) {
		c := minimalCFE(cfe.ETicket)
		c.Totales.MntPagar = nil
		if got := cfe.QRAmount(c); !got.IsZero() {
			t.Errorf("QRAmount = %s, want 0", got)
		}
	})
}

func TestQRData_Fields(t *testing.T) {
	t.Parallel()
	c := minimalCFE(cfe.EFactura)
	c.IdDoc.Serie, c.IdDoc.Nro = "AB", 7
	c.Totales.MntPagar = numP("1007")
	// 02:30 UTC on the 15th is still the 14th in Montevideo.
	c.TmstFirma = time.Date(2026, time.March, 15, 2, 30, 0, 0, time.UTC)
	const want = cfe.QRBaseURL + "?219999830019,111,AB,7,1007.00,14/03/2026,ab%2Bc%2Fd%3D%3D"
	if got := cfe.QRData(c, "ab+c/d=="); got != want {
		t.Errorf("QRData =\n%s\nwant\n%s", got, want)
	}
}

func TestSecurityCode(t *testing.T) {
	t.Parallel()
	for digest, want := range map[string]string{
		"gKSy8dDHR0YsTy0P4cx+cSu4Zvo=":                 "gKSy8d",
		"n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=": "n4bQgY", // a SHA-256 digest
		"abc": "abc",
		"":    "",
	} {
		if got := cfe.SecurityCode(digest); got != want {
			t.Errorf("SecurityCode(%q) = %q, want %q", digest, got, want)
		}
	}
}
