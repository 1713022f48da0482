package cfe

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// DescribeReport summarizes a Reporte (a daily report, signed or not) in
// Spanish for the technician: its day and sequence, CantComprobantes, and
// per type the numbers used and annulled with their ranges, the CFCs and
// the total in pesos (TotMntTotal summed over its items).
//
// Errors: EINVALID when b is not a Reporte.
func DescribeReport(b []byte) (string, error) {
	var root reportNode
	if err := xml.Unmarshal(b, &root); err != nil || root.XMLName.Local != "Reporte" {
		return "", &Error{Code: EINVALID, Op: "cfe.DescribeReport", Message: "el documento no es un reporte diario (Reporte)", Err: err}
	}
	var s strings.Builder
	car := root.child("Caratula")
	if car == nil {
		return "", &Error{Code: EINVALID, Op: "cfe.DescribeReport", Message: "el reporte no tiene Caratula"}
	}
	fmt.Fprintf(&s, "reporte diario del %s (RUC %s, secuencia %s): %s comprobantes", car.text("FechaResumen"),
		car.text("RUCEmisor"), car.text("SecEnvio"), car.text("CantComprobantes"))
	if len(root.Nodes) == 1 {
		s.WriteString(", sin resumen (día sin comprobantes)")
	}
	for _, n := range root.Nodes {
		if !strings.HasPrefix(n.XMLName.Local, "Rsmn_") {
			continue
		}
		t, _ := strconv.Atoi(n.text("TipoComp"))
		d := n.child("RsmnData")
		if d == nil {
			continue
		}
		fmt.Fprintf(&s, "; %s:", Type(t).Name())
		if v := d.text("CantCFCEmi"); v != "" {
			fmt.Fprintf(&s, " %s emitidos", v)
		} else {
			fmt.Fprintf(&s, " %s usados, %s emitidos, %s anulados", d.text("CantDocsUtil"), d.text("CantDocsEmi"), d.text("CantDocsAnulados"))
		}
		runs := func(list string) string {
			l := d.child(list)
			if l == nil {
				return ""
			}
			var parts []string
			for _, it := range l.Nodes {
				if it.text("NroDesde") == it.text("NroHasta") {
					parts = append(parts, it.text("Serie")+" "+it.text("NroDesde"))
				} else {
					parts = append(parts, it.text("Serie")+" "+it.text("NroDesde")+"-"+it.text("NroHasta"))
				}
			}
			return strings.Join(parts, ", ")
		}
		if r := runs("RngDocsUtil"); r != "" {
			fmt.Fprintf(&s, " (usados %s", r)
			if a := runs("RngDocsAnulados"); a != "" {
				fmt.Fprintf(&s, "; anulados %s", a)
			}
			s.WriteString(")")
		}
		if m := d.child("Montos"); m != nil {
			total := decimal.Zero
			sucs := map[string]bool{}
			for _, it := range m.Nodes {
				if v, err := decimal.NewFromString(it.text("TotMntTotal")); err == nil {
					total = total.Add(v)
				}
				sucs[it.text("CodSuc")] = true
			}
			fmt.Fprintf(&s, ", total $ %s en %d sucursal(es)", total.StringFixed(2), len(sucs))
		}
	}
	return s.String(), nil
}

// reportNode is a generic element of a report.
type reportNode struct {
	XMLName xml.Name
	Text    []byte       `xml:",chardata"`
	Nodes   []reportNode `xml:",any"`
}

func (n *reportNode) child(name string) *reportNode {
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == name {
			return &n.Nodes[i]
		}
	}
	return nil
}

func (n *reportNode) text(name string) string {
	if c := n.child(name); c != nil {
		return string(bytes.TrimSpace(c.Text))
	}
	return ""
}
