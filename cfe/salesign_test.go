package cfe_test

import (
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// saleSigns is the sign of every type of DGI's table A, written out by hand
// (not derived from the type table, so that a wrong row there shows here).
var saleSigns = map[cfe.Type]int{
	101: 1, 102: -1, 103: 1, // e-Ticket
	111: 1, 112: -1, 113: 1, // e-Factura
	121: 1, 122: -1, 123: 1, // e-Factura de Exportación
	124: 0,                  // e-Remito de Exportación
	131: 1, 132: -1, 133: 1, // e-Ticket venta por cuenta ajena
	141: 1, 142: -1, 143: 1, // e-Factura venta por cuenta ajena
	151: 0, 152: 0, 153: 0, // e-Boleta de entrada: a purchase
	181: 0, // e-Remito
	182: 0, // e-Resguardo
	// Contingency: as the electronic type.
	201: 1, 202: -1, 203: 1,
	211: 1, 212: -1, 213: 1,
	221: 1, 222: -1, 223: 1,
	224: 0,
	231: 1, 232: -1, 233: 1,
	241: 1, 242: -1, 243: 1,
	251: 0, 252: 0, 253: 0,
	281: 0,
	282: 0,
}

func TestSaleSign(t *testing.T) {
	t.Parallel()
	types := cfe.Types()
	if len(types) != len(saleSigns) {
		t.Errorf("the type table has %d types, the expected signs %d", len(types), len(saleSigns))
	}
	for _, typ := range types {
		want, ok := saleSigns[typ]
		if !ok {
			t.Errorf("type %d (%s) has no expected sign", typ, typ.Name())
			continue
		}
		if got := cfe.SaleSign(typ); got != want {
			t.Errorf("SaleSign(%d %s) = %d, want %d", typ, typ.Name(), got, want)
		}
	}
	for _, unknown := range []cfe.Type{0, -101, 100, 104, 150, 183, 301, 999} {
		if got := cfe.SaleSign(unknown); got != 0 {
			t.Errorf("SaleSign(%d), a code DGI does not define, = %d, want 0", unknown, got)
		}
	}
}

// A contingency type always counts as the electronic type it stands for.
func TestSaleSign_contingencyAsElectronic(t *testing.T) {
	t.Parallel()
	for _, typ := range cfe.ElectronicTypes() {
		if got, want := cfe.SaleSign(typ+100), cfe.SaleSign(typ); got != want {
			t.Errorf("SaleSign(%d) = %d, SaleSign(%d) = %d", typ+100, got, typ, want)
		}
	}
}
