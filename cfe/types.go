package cfe

import (
	"fmt"
	"sort"
)

// Type is a CFE type code (TipoCFE), such as 101 for e-Ticket.
type Type int

// The CFE type codes of DGI's table A (Formato de los CFE v24).
const (
	ETicket                  Type = 101
	ETicketNC                Type = 102
	ETicketND                Type = 103
	EFactura                 Type = 111
	EFacturaNC               Type = 112
	EFacturaND               Type = 113
	EFacturaExp              Type = 121
	EFacturaExpNC            Type = 122
	EFacturaExpND            Type = 123
	ERemitoExp               Type = 124
	ETicketCtaAjena          Type = 131
	ETicketCtaAjenaNC        Type = 132
	ETicketCtaAjenaND        Type = 133
	EFacturaCtaAjena         Type = 141
	EFacturaCtaAjenaNC       Type = 142
	EFacturaCtaAjenaND       Type = 143
	EBoleta                  Type = 151
	EBoletaNC                Type = 152
	EBoletaND                Type = 153
	ERemito                  Type = 181
	EResguardo               Type = 182
	contingencyOffset             = 100
	firstContingencyTypeCode      = 201
)

// Element is the name of the XML element that carries a CFE type inside <CFE>.
type Element string

// The seven type elements of CFEType.xsd.
const (
	ElemTicket     Element = "eTck"
	ElemFactura    Element = "eFact"
	ElemFacturaExp Element = "eFact_Exp"
	ElemRemito     Element = "eRem"
	ElemRemitoExp  Element = "eRem_Exp"
	ElemResguardo  Element = "eResg"
	ElemBoleta     Element = "eBoleta"
)

// Kind says whether a type is a base document or a credit or debit note.
type Kind int

// Kinds of document.
const (
	KindDocument Kind = iota
	KindCreditNote
	KindDebitNote
)

// TypeInfo describes one CFE type.
type TypeInfo struct {
	Code        Type
	Name        string  // DGI's name, as printed
	Element     Element // XML element inside <CFE>
	Kind        Kind
	Base        Type // the base document of the family (101 for 101, 102 and 103)
	Contingency bool // 2xx: paper contingency receipt (CFC) sent afterwards
	MaxLines    int  // 700 for the e-Ticket family, 200 for the others
}

// IsNote reports whether the type is a credit or debit note.
func (i TypeInfo) IsNote() bool { return i.Kind != KindDocument }

var typeTable = buildTypeTable()

func buildTypeTable() map[Type]TypeInfo {
	type row struct {
		code Type
		name string
		elem Element
	}
	electronic := []row{
		{ETicket, "e-Ticket", ElemTicket},
		{ETicketNC, "Nota de Crédito de e-Ticket", ElemTicket},
		{ETicketND, "Nota de Débito de e-Ticket", ElemTicket},
		{EFactura, "e-Factura", ElemFactura},
		{EFacturaNC, "Nota de Crédito de e-Factura", ElemFactura},
		{EFacturaND, "Nota de Débito de e-Factura", ElemFactura},
		{EFacturaExp, "e-Factura Exportación", ElemFacturaExp},
		{EFacturaExpNC, "Nota de Crédito de e-Factura Exportación", ElemFacturaExp},
		{EFacturaExpND, "Nota de Débito de e-Factura Exportación", ElemFacturaExp},
		{ERemitoExp, "e-Remito de Exportación", ElemRemitoExp},
		{ETicketCtaAjena, "e-Ticket Venta por Cuenta Ajena", ElemTicket},
		{ETicketCtaAjenaNC, "Nota de Crédito de e-Ticket Venta por Cuenta Ajena", ElemTicket},
		{ETicketCtaAjenaND, "Nota de Débito de e-Ticket Venta por Cuenta Ajena", ElemTicket},
		{EFacturaCtaAjena, "e-Factura Venta por Cuenta Ajena", ElemFactura},
		{EFacturaCtaAjenaNC, "Nota de Crédito de e-Factura Venta por Cuenta Ajena", ElemFactura},
		{EFacturaCtaAjenaND, "Nota de Débito de e-Factura Venta por Cuenta Ajena", ElemFactura},
		{EBoleta, "e-Boleta de entrada", ElemBoleta},
		{EBoletaNC, "Nota de Crédito de e-Boleta de entrada", ElemBoleta},
		{EBoletaND, "Nota de Débito de e-Boleta de entrada", ElemBoleta},
		{ERemito, "e-Remito", ElemRemito},
		{EResguardo, "e-Resguardo", ElemResguardo},
	}
	t := make(map[Type]TypeInfo, 2*len(electronic))
	for _, r := range electronic {
		info := TypeInfo{Code: r.code, Name: r.name, Element: r.elem, Base: r.code, MaxLines: 200}
		// Notes sit at base+1 (credit) and base+2 (debit) in every family that has them.
		switch {
		case r.code >= 101 && r.code <= 153 && r.code != ERemitoExp:
			switch (r.code - 101) % 10 {
			case 1:
				info.Kind, info.Base = KindCreditNote, r.code-1
			case 2:
				info.Kind, info.Base = KindDebitNote, r.code-2
			}
		}
		if r.elem == ElemTicket {
			info.MaxLines = 700
		}
		t[r.code] = info
		c := info
		c.Code = r.code + contingencyOffset
		c.Base = info.Base + contingencyOffset
		c.Name = r.name + " Contingencia"
		c.Contingency = true
		t[c.Code] = c
	}
	return t
}

// Info returns the description of a type, and false for a code DGI does not define.
func (t Type) Info() (TypeInfo, bool) {
	i, ok := typeTable[t]
	return i, ok
}

// Valid reports whether t is a CFE type code DGI defines.
func (t Type) Valid() bool { _, ok := typeTable[t]; return ok }

// String returns the code as DGI writes it.
func (t Type) String() string { return fmt.Sprintf("%d", int(t)) }

// Name returns DGI's name of the type, or "tipo N" for an unknown code.
func (t Type) Name() string {
	if i, ok := typeTable[t]; ok {
		return i.Name
	}
	return fmt.Sprintf("tipo %d", int(t))
}

// Types lists every CFE type code, electronic first, in ascending order.
func Types() []Type {
	out := make([]Type, 0, len(typeTable))
	for c := range typeTable {
		out = append(out, c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// ElectronicTypes lists the 1xx types (those a CAE of kind E authorizes).
func ElectronicTypes() []Type {
	var out []Type
	for _, c := range Types() {
		if !typeTable[c].Contingency {
			out = append(out, c)
		}
	}
	return out
}

// CreditNoteOf returns the credit note type of a family (102 for 101), and false
// where the family has no notes (remitos, resguardos).
func (t Type) CreditNoteOf() (Type, bool) { return t.noteOf(KindCreditNote) }

// DebitNoteOf returns the debit note type of a family (103 for 101), and false
// where the family has no notes.
func (t Type) DebitNoteOf() (Type, bool) { return t.noteOf(KindDebitNote) }

func (t Type) noteOf(k Kind) (Type, bool) {
	i, ok := typeTable[t]
	if !ok {
		return 0, false
	}
	n := i.Base + Type(k)
	ni, ok := typeTable[n]
	if !ok || ni.Kind != k || ni.Base != i.Base {
		return 0, false
	}
	return n, true
}

// OppositeNote pairs credit and debit notes: 102↔103, 112↔113, 122↔123, 132↔133,
// 142↔143, 152↔153 (and their contingency forms). It returns false for a type
// that is not a note.
func (t Type) OppositeNote() (Type, bool) {
	i, ok := typeTable[t]
	if !ok {
		return 0, false
	}
	switch i.Kind {
	case KindCreditNote:
		return t.DebitNoteOf()
	case KindDebitNote:
		return t.CreditNoteOf()
	}
	return 0, false
}

// IsTicketFamily reports whether the type belongs to the e-Ticket family
// (101-103, 131-133 and contingency forms): consumers, "CONSUMO FINAL".
func (t Type) IsTicketFamily() bool {
	i, ok := typeTable[t]
	return ok && i.Element == ElemTicket
}
