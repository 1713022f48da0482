package app

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printing"
)

// CierrePDF returns the day's close (Cierre's content) as a PDF on paper
// ("a4", the default, or "rollo": 80 mm). Errors: EINVALID for a missing
// date or an unknown paper, EUNAVAILABLE, EINTERNAL.
func (f *Facade) CierrePDF(ctx context.Context, day cfe.Date, paper string) ([]byte, error) {
	const op = "app.CierrePDF"
	p := pdf.ReportPaper(cmp.Or(strings.ToLower(strings.TrimSpace(paper)), string(pdf.PaperA4)))
	if p != pdf.PaperA4 && p != pdf.PaperRoll {
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: "el formato del cierre no es válido",
			Fields: []cfe.FieldError{{Campo: "formato", Mensaje: "se espera a4 o rollo"}}}
	}
	c, err := f.Cierre(ctx, day)
	if err != nil {
		return nil, err
	}
	b, err := pdf.RenderReport(f.cierreReport(day, c), p)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err, Message: "no se pudo generar el PDF del cierre"}
	}
	return b, nil
}

// ImprimirCierre prints the day's close on the printer called impresora
// ("" the profile's default): ESC/POS text on a thermal printer, the A4
// PDF on any other. Errors: EINVALID for a missing date or without a
// printer to print on, ENOTFOUND for an unknown printer, EUNAVAILABLE.
func (f *Facade) ImprimirCierre(ctx context.Context, day cfe.Date, impresora string) (printing.PrintResult, error) {
	name := cmp.Or(strings.TrimSpace(impresora), f.a.Profile.DefaultPrinter)
	if name == "" {
		return printing.PrintResult{}, &cfe.Error{Code: cfe.EINVALID, Op: "app.ImprimirCierre",
			Message: "no hay una impresora predeterminada: elija una impresora para imprimir el cierre",
			Fields:  []cfe.FieldError{{Campo: "impresora", Mensaje: "es obligatoria sin impresora predeterminada"}}}
	}
	c, err := f.Cierre(ctx, day)
	if err != nil {
		return printing.PrintResult{}, err
	}
	return f.printing.PrintReport(ctx, f.cierreReport(day, c), name, "Cierre "+day.String())
}

// cierreReport lays the close c out as a report: per till its receipts by
// type and currency (credit notes subtracted), then its net by currency
// with the means of payment and IVA rates; then the day's totals.
func (f *Facade) cierreReport(day cfe.Date, c *apitype.Cierre) pdf.Report {
	now := f.now()
	r := pdf.Report{
		Title: "Cierre del día " + day.Time(cfe.Montevideo).Format("02/01/2006"),
		Subtitle: []string{
			"Perfil: " + f.a.Name,
			"Generado: " + now.In(cfe.Montevideo).Format("02/01/2006 15:04"),
			fmt.Sprintf("Comprobantes firmados: %d", c.Cantidad),
		},
		Created: now,
	}
	add := func(k pdf.ReportKind, indent int, label, value string) {
		r.Lines = append(r.Lines, pdf.ReportLine{Kind: k, Indent: indent, Label: label, Value: value})
	}
	nets := func(ms []apitype.CierreMoneda) {
		for _, m := range ms {
			add(pdf.ReportTotal, 0, "Neto "+m.Moneda, pdf.FormatMoney(m.Moneda, m.Total))
			for _, p := range m.MediosPago {
				add(pdf.ReportRow, 1, "Pago "+p.Nombre, pdf.FormatMoney(m.Moneda, p.Total))
			}
			for _, v := range m.IVA {
				add(pdf.ReportRow, 1, "IVA "+v.Tasa+": neto", pdf.FormatMoney(m.Moneda, v.Neto))
				add(pdf.ReportRow, 1, "IVA "+v.Tasa+": impuesto", pdf.FormatMoney(m.Moneda, v.Impuesto))
			}
		}
	}
	if len(c.Cajas) == 0 {
		add(pdf.ReportRow, 0, "No se firmaron comprobantes este día.", "")
	}
	for _, till := range c.Cajas {
		name := "Caja serie " + till.Serie
		if till.CodSuc != 0 {
			name += fmt.Sprintf(", sucursal %d", till.CodSuc)
		}
		add(pdf.ReportHeading, 0, name, fmt.Sprintf("%d comprobantes", till.Cantidad))
		for _, t := range till.Tipos {
			label := fmt.Sprintf("%s (%d)", t.Nombre, t.Cantidad)
			if t.Signo < 0 {
				label += ", resta"
			} else if t.Signo == 0 {
				label += ", no suma"
			}
			add(pdf.ReportRow, 1, label, "")
			for _, m := range t.Montos {
				v := m.Total
				if t.Signo < 0 {
					v = v.Neg()
				}
				add(pdf.ReportRow, 2, fmt.Sprintf("%s (%d)", m.Moneda, m.Cantidad), pdf.FormatMoney(m.Moneda, v))
			}
		}
		nets(till.Neto)
		add(pdf.ReportRule, 0, "", "")
	}
	add(pdf.ReportHeading, 0, "Totales del día", "")
	if len(c.Totales) == 0 {
		add(pdf.ReportRow, 1, "Sin ventas", "")
	}
	nets(c.Totales)
	return r
}
