package cfe_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// tableA is DGI's table A (Formato de los CFE v24, "Tablas - A. Tipo de
// comprobante"), transcribed by hand. Table A omits "Contingencia" from the
// names of 252 and 253; they are completed as DGITypes.xsd documents them.
var tableA = []struct {
	code cfe.Type
	name string
}{
	{101, "e-Ticket"},
	{102, "Nota de Crédito de e-Ticket"},
	{103, "Nota de Débito de e-Ticket"},
	{111, "e-Factura"},
	{112, "Nota de Crédito de e-Factura"},
	{113, "Nota de Débito de e-Factura"},
	{121, "e-Factura Exportación"},
	{122, "Nota de Crédito de e-Factura Exportación"},
	{123, "Nota de Débito de e-Factura Exportación"},
	{124, "e-Remito de Exportación"},
	{131, "e-Ticket Venta por Cuenta Ajena"},
	{132, "Nota de Crédito de e-Ticket Venta por Cuenta Ajena"},
	{133, "Nota de Débito de e-Ticket Venta por Cuenta Ajena"},
	{141, "e-Factura Venta por Cuenta Ajena"},
	{142, "Nota de Crédito de e-Factura Venta por Cuenta Ajena"},
	{143, "Nota de Débito de e-Factura Venta por Cuenta Ajena"},
	{151, "e-Boleta de entrada"},
	{152, "Nota de Crédito de e-Boleta de entrada"},
	{153, "Nota de Débito de e-Boleta de entrada"},
	{181, "e-Remito"},
	{182, "e-Resguardo"},
	{201, "e-Ticket Contingencia"},
	{202, "Nota de Crédito de e-Ticket Contingencia"},
	{203, "Nota de Débito de e-Ticket Contingencia"},
	{211, "e-Factura Contingencia"},
	{212, "Nota de Crédito de e-Factura Contingencia"},
	{213, "Nota de Débito de e-Factura Contingencia"},
	{221, "e-Factura Exportación Contingencia"},
	{222, "Nota de Crédito de e-Factura Exportación Contingencia"},
	{223, "Nota de Débito de e-Factura Exportación Contingencia"},
	{224, "e-Remito de Exportación Contingencia"},
	{231, "e-Ticket Venta por Cuenta Ajena Contingencia"},
	{232, "Nota de Crédito de e-Ticket Venta por Cuenta Ajena Contingencia"},
	{233, "Nota de Débito de e-Ticket Venta por Cuenta Ajena Contingencia"},
	{241, "e-Factura Venta por Cuenta Ajena Contingencia"},
	{242, "Nota de Crédito de e-Factura Venta por Cuenta Ajena Contingencia"},
	{243, "Nota de Débito de e-Factura Venta por Cuenta Ajena Contingencia"},
	{251, "e-Boleta de entrada Contingencia"},
	{252, "Nota de Crédito de e-Boleta de entrada Contingencia"},
	{253, "Nota de Débito de e-Boleta de entrada Contingencia"},
	{281, "e-Remito Contingencia"},
	{282, "e-Resguardo Contingencia"},
}

func tableACodes() []cfe.Type {
	codes := make([]cfe.Type, len(tableA))
	for i, r := range tableA {
		codes[i] = r.code
	}
	return codes
}

func TestTypes_TableA(t *testing.T) {
	t.Parallel()
	if got, want := cfe.Types(), tableACodes(); !slices.Equal(got, want) {
		t.Fatalf("Types() = %v\nwant table A: %v", got, want)
	}
	if got, want := cfe.Types(), dgiTypeCodes(t); !slices.Equal(got, want) {
		t.Fatalf("Types() = %v\nwant DGITypes.xsd CFEType: %v", got, want)
	}
	for _, r := range tableA {
		t.Run(r.code.String(), func(t *testing.T) {
			info, ok := r.code.Info()
			if !ok || !r.code.Valid() {
				t.Fatalf("Info ok = %v, Valid = %v; want both true", ok, r.code.Valid())
			}
			if info.Code != r.code {
				t.Errorf("Info().Code = %d", info.Code)
			}
			if info.Name != r.name || r.code.Name() != r.name {
				t.Errorf("name = %q (Name() %q), want %q", info.Name, r.code.Name(), r.name)
			}
			if want := r.code >= 200; info.Contingency != want {
				t.Errorf("Contingency = %v, want %v", info.Contingency, want)
			}
			if got, want := r.code.String(), fmt.Sprint(int(r.code)); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
		})
	}
}

func TestTypes_ElectronicTypes(t *testing.T) {
	t.Parallel()
	var want []cfe.Type
	for _, c := range tableACodes() {
		if c < 200 {
			want = append(want, c)
		}
	}
	if got := cfe.ElectronicTypes(); !slices.Equal(got, want) {
		t.Errorf("ElectronicTypes() = %v, want %v", got, want)
	}
}

// Each type's element, and each element's line limit, must be what CFEType.xsd
// declares.
func TestTypes_ElementAndMaxLinesMatchXSD(t *testing.T) {
	t.Parallel()
	schema := loadTypeSchema(t)
	if len(schema) != 7 {
		t.Fatalf("CFEType.xsd CFEDefType has %d type elements, want 7", len(schema))
	}
	elementOf := make(map[cfe.Type]cfe.Element)
	for el, s := range schema {
		for _, code := range s.Types {
			if prev, dup := elementOf[code]; dup {
				t.Fatalf("XSD allows %d in both %s and %s", code, prev, el)
			}
			elementOf[code] = el
		}
	}
	for _, code := range cfe.Types() {
		info, _ := code.Info()
		el, ok := elementOf[code]
		if !ok {
			t.Errorf("%d: no type element of CFEType.xsd allows it", code)
			continue
		}
		if info.Element != el {
			t.Errorf("%d: Element = %s, CFEType.xsd puts it in %s", code, info.Element, el)
		}
		if info.MaxLines != schema[el].MaxLines {
			t.Errorf("%d: MaxLines = %d, CFEType.xsd allows %d Items in %s", code, info.MaxLines, schema[el].MaxLines, el)
		}
		if got, want := code.IsTicketFamily(), el == cfe.ElemTicket; got != want {
			t.Errorf("%d: IsTicketFamily = %v, want %v", code, got, want)
		}
	}
	if len(elementOf) != len(cfe.Types()) {
		t.Errorf("CFEType.xsd enumerates %d type codes, the table has %d", len(elementOf), len(cfe.Types()))
	}
}

// V24 zone B: up to 700 lines for e-Tickets, e-Tickets por cuenta ajena and
// their notes; 200 for every other CFE.
func TestTypes_MaxLines(t *testing.T) {
	t.Parallel()
	ticket := []cfe.Type{101, 102, 103, 131, 132, 133}
	for _, code := range cfe.Types() {
		want := 200
		if slices.Contains(ticket, code) || slices.Contains(ticket, code-100) {
			want = 700
		}
		if info, _ := code.Info(); info.MaxLines != want {
			t.Errorf("%d: MaxLines = %d, want %d", code, info.MaxLines, want)
		}
	}
}

func TestTypes_Notes(t *testing.T) {
	t.Parallel()
	// Families with notes: document, credit note, debit note.
	families := [][3]cfe.Type{
		{101, 102, 103}, {111, 112, 113}, {121, 122, 123}, {131, 132, 133}, {141, 142, 143}, {151, 152, 153},
		{201, 202, 203}, {211, 212, 213}, {221, 222, 223}, {231, 232, 233}, {241, 242, 243}, {251, 252, 253},
	}
	for _, f := range families {
		doc, nc, nd := f[0], f[1], f[2]
		t.Run(doc.String(), func(t *testing.T) {
			for _, c := range f {
				info, _ := c.Info()
				if info.Base != doc {
					t.Errorf("%d: Base = %d, want %d", c, info.Base, doc)
				}
				if got, ok := c.CreditNoteOf(); !ok || got != nc {
					t.Errorf("%d.CreditNoteOf() = %d, %v; want %d", c, got, ok, nc)
				}
				if got, ok := c.DebitNoteOf(); !ok || got != nd {
					t.Errorf("%d.DebitNoteOf() = %d, %v; want %d", c, got, ok, nd)
				}
			}
			checkKind(t, doc, cfe.KindDocument)
			checkKind(t, nc, cfe.KindCreditNote)
			checkKind(t, nd, cfe.KindDebitNote)
			if got, ok := nc.OppositeNote(); !ok || got != nd {
				t.Errorf("%d.OppositeNote() = %d, %v; want %d", nc, got, ok, nd)
			}
			if got, ok := nd.OppositeNote(); !ok || got != nc {
				t.Errorf("%d.OppositeNote() = %d, %v; want %d", nd, got, ok, nc)
			}
			if got, ok := doc.OppositeNote(); ok {
				t.Errorf("%d.OppositeNote() = %d, true; a document has no opposite", doc, got)
			}
		})
	}
	// Remitos and resguardos have no notes: they are corrected by their own type.
	for _, c := range []cfe.Type{124, 181, 182, 224, 281, 282} {
		checkKind(t, c, cfe.KindDocument)
		if info, _ := c.Info(); info.Base != c {
			t.Errorf("%d: Base = %d, want itself", c, info.Base)
		}
		if got, ok := c.CreditNoteOf(); ok {
			t.Errorf("%d.CreditNoteOf() = %d, true; want none", c, got)
		}
		if got, ok := c.DebitNoteOf(); ok {
			t.Errorf("%d.DebitNoteOf() = %d, true; want none", c, got)
		}
		if got, ok := c.OppositeNote(); ok {
			t.Errorf("%d.OppositeNote() = %d, true; want none", c, got)
		}
	}
}

func checkKind(t *testing.T, c cfe.Type, want cfe.Kind) {
	t.Helper()
	info, _ := c.Info()
	if info.Kind != want {
		t.Errorf("%d: Kind = %d, want %d", c, info.Kind, want)
	}
	if got := info.IsNote(); got != (want != cfe.KindDocument) {
		t.Errorf("%d: IsNote() = %v", c, got)
	}
}

func TestTypes_UnknownCodes(t *testing.T) {
	t.Parallel()
	for _, c := range []cfe.Type{-101, 0, 1, 100, 104, 110, 125, 154, 180, 183, 200, 204, 225, 283, 301, 999} {
		if c.Valid() {
			t.Errorf("%d.Valid() = true", c)
		}
		if _, ok := c.Info(); ok {
			t.Errorf("%d.Info() ok", c)
		}
		if got, want := c.Name(), fmt.Sprintf("tipo %d", int(c)); got != want {
			t.Errorf("%d.Name() = %q, want %q", c, got, want)
		}
		if _, ok := c.CreditNoteOf(); ok {
			t.Errorf("%d.CreditNoteOf() ok", c)
		}
		if _, ok := c.DebitNoteOf(); ok {
			t.Errorf("%d.DebitNoteOf() ok", c)
		}
		if _, ok := c.OppositeNote(); ok {
			t.Errorf("%d.OppositeNote() ok", c)
		}
		if c.IsTicketFamily() {
			t.Errorf("%d.IsTicketFamily() = true", c)
		}
	}
}
