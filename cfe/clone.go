package cfe

import (
	"slices"

	"github.com/shopspring/decimal"
)

// Clone returns a deep copy of c: no slice, pointer or nested value of the copy
// is shared with c, so either can be changed without affecting the other.
func (c *CFE) Clone() *CFE {
	if c == nil {
		return nil
	}
	d := *c
	d.IdDoc = c.IdDoc.clone()
	d.Emisor.Telefono = slices.Clone(c.Emisor.Telefono)
	d.Receptor = clonePtr(c.Receptor)
	d.Totales = c.Totales.clone()
	d.Items = cloneEach(c.Items, Item.clone)
	d.SubTotInfo = slices.Clone(c.SubTotInfo)
	d.DscRcgGlobal = slices.Clone(c.DscRcgGlobal)
	d.MediosPago = slices.Clone(c.MediosPago)
	d.Referencias = cloneEach(c.Referencias, Referencia.clone)
	d.ComplFiscal = clonePtr(c.ComplFiscal)
	return &d
}

func (d IdDoc) clone() IdDoc {
	d.FchValor = clonePtr(d.FchValor)
	d.PeriodoDesde = clonePtr(d.PeriodoDesde)
	d.PeriodoHasta = clonePtr(d.PeriodoHasta)
	d.FchVenc = clonePtr(d.FchVenc)
	return d
}

func (t Totales) clone() Totales {
	for _, p := range []**decimal.Decimal{
		&t.TpoCambio, &t.MntNoGrv, &t.MntExpoyAsim, &t.MntImpuestoPerc, &t.MntIVaenSusp,
		&t.MntNetoIvaTasaMin, &t.MntNetoIVATasaBasica, &t.MntNetoIVAOtra,
		&t.IVATasaMin, &t.IVATasaBasica, &t.MntIVATasaMin, &t.MntIVATasaBasica, &t.MntIVAOtra,
		&t.MntTotal, &t.MntTotRetenido, &t.MntTotCredFisc, &t.MontoNF, &t.MntPagar,
	} {
		*p = clonePtr(*p)
	}
	t.RetencPercep = slices.Clone(t.RetencPercep)
	return t
}

func (it Item) clone() Item {
	it.CodItem = slices.Clone(it.CodItem)
	it.DescuentoPct = clonePtr(it.DescuentoPct)
	it.DescuentoMonto = clonePtr(it.DescuentoMonto)
	it.SubDescuento = slices.Clone(it.SubDescuento)
	it.RecargoPct = clonePtr(it.RecargoPct)
	it.RecargoMnt = clonePtr(it.RecargoMnt)
	it.SubRecargo = slices.Clone(it.SubRecargo)
	it.RetencPercep = cloneEach(it.RetencPercep, ItemRetPerc.clone)
	return it
}

func (r ItemRetPerc) clone() ItemRetPerc {
	r.Tasa = clonePtr(r.Tasa)
	r.MntSujetoaRet = clonePtr(r.MntSujetoaRet)
	return r
}

func (r Referencia) clone() Referencia {
	r.FechaCFEref = clonePtr(r.FechaCFEref)
	return r
}

// clonePtr returns a pointer to a copy of *p, and nil for nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneEach returns a new slice holding clone of each element of s (nil for nil).
func cloneEach[T any](s []T, clone func(T) T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = clone(v)
	}
	return out
}
