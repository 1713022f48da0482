package cfe

import (
	"testing"
	"time"
)

// TestType_Agree: every type's participle agrees with its name's gender —
// "Nota de Crédito de e-Ticket A-1 firmada", "e-Factura firmada",
// "e-Boleta de entrada firmada", "e-Ticket firmado", "e-Remito firmado",
// "e-Resguardo firmado" — their contingency forms included.
func TestType_Agree(t *testing.T) {
	t.Parallel()
	for _, typ := range Types() {
		name := typ.Name()
		want := "firmado"
		for _, fem := range []string{"Nota de ", "e-Factura", "e-Boleta", "Factura", "Boleta"} {
			if len(name) >= len(fem) && name[:len(fem)] == fem {
				want = "firmada"
			}
		}
		if got := typ.Agree("firmado"); got != want {
			t.Errorf("%d %s: %q, want %q", typ, name, got, want)
		}
	}
	if ETicketNC.Agree("firmado") != "firmada" || EFactura.Agree("firmado") != "firmada" || ETicket.Agree("firmado") != "firmado" ||
		ERemito.Agree("firmado") != "firmado" || EResguardo.Agree("firmado") != "firmado" {
		t.Error("the main types' participles do not agree")
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 comprobantes pendientes", 1: "1 comprobante pendiente", 2: "2 comprobantes pendientes"} {
		if got := Count(n, "comprobante pendiente", "comprobantes pendientes"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestHace: one form of "hace …" for every age, never "hace 0 min".
func TestHace(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		-time.Minute:                    "hace menos de 1 min",
		0:                               "hace menos de 1 min",
		59 * time.Second:                "hace menos de 1 min",
		time.Minute:                     "hace 1 min",
		59*time.Minute + 59*time.Second: "hace 59 min",
		time.Hour:                       "hace 1 h",
		2*time.Hour + 5*time.Minute:     "hace 2 h 5 min",
		47*time.Hour + 59*time.Minute:   "hace 47 h 59 min",
		48 * time.Hour:                  "hace 2 días",
		10*24*time.Hour + time.Hour:     "hace 10 días",
	} {
		if got := Hace(d); got != want {
			t.Errorf("Hace(%s) = %q, want %q", d, got, want)
		}
	}
}
