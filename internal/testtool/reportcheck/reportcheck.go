// Package reportcheck recomputes a daily report (ReporteDiarioCFE) from the
// signed CFEs and annulled numbers it describes, independently of
// cfe.BuildReport, and compares it with a report's document. It is a test
// helper: it parses each CFE with the full parser (cfe.ParseXML), keeps
// numbers one by one in sets, reads the report with encoding/xml, and
// restates REP's rules (Formato_Reporte_CFE v13.2) on its own.
package reportcheck

import (
	"encoding/xml"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Input is what the report was built from.
type Input struct {
	RUC      string
	Date     cfe.Date
	SignDay  cfe.Date // the report's signature day (TmstFirmaEnv), Montevideo
	CFEs     [][]byte
	Annulled []cfe.AnnulledRange
	// Rate is the table's rate for an operation in cur on day d.
	Rate    func(cur string, d cfe.Date) (decimal.Decimal, bool)
	UIValue decimal.Decimal
	TopeUI  decimal.Decimal // the cap in UI (5000 since 2022-11-01)
}

// Block is one type's recomputed summary.
type Block struct {
	Type      cfe.Type
	Used      int64
	Annulled  int64
	Issued    int64
	CFC       int64
	AboveCap  int64
	UsedRuns  []string // "A:1-4"
	AnnulRuns []string
	Items     map[string]map[string]string // "fecha/suc/ind" → field → value (2 decimals)
}

// Expected is the recomputed report.
type Expected struct {
	Total  int64
	Blocks map[cfe.Type]*Block
}

var amountFields = []string{"TotMntNoGrv", "TotMntExpyAsim", "TotMntImpPerc", "TotMntIVAenSusp", "TotMntIVATasaMin",
	"TotMntIVATasaBas", "TotMntIVAOtra", "MntIVATasaMin", "MntIVATasaBas", "MntIVAOtra"}

// Recompute works the report out from in.
func Recompute(t testing.TB, in Input) *Expected {
	t.Helper()
	exp := &Expected{Blocks: map[cfe.Type]*Block{}}
	block := func(ty cfe.Type) *Block {
		b := exp.Blocks[ty]
		if b == nil {
			b = &Block{Type: ty, Items: map[string]map[string]string{}}
			exp.Blocks[ty] = b
		}
		return b
	}
	type key struct {
		ty    cfe.Type
		serie string
	}
	used := map[key]map[int64]bool{}
	annulled := map[key]map[int64]bool{}
	rejected := map[key]map[int64]bool{}
	mark := func(m map[key]map[int64]bool, k key, n int64) {
		if m[k] == nil {
			m[k] = map[int64]bool{}
		}
		m[k][n] = true
	}
	for _, a := range in.Annulled {
		info, _ := a.Type.Info()
		if info.Contingency {
			continue
		}
		for n := a.From; n <= a.To; n++ {
			mark(annulled, key{a.Type, a.Serie}, n)
			mark(used, key{a.Type, a.Serie}, n)
			if a.Reason == cfe.AnnulDGIRejected {
				mark(rejected, key{a.Type, a.Serie}, n)
			}
		}
	}
	// sums[type][group][field] = exact sum
	sums := map[cfe.Type]map[string]map[string]decimal.Decimal{}
	tasas := map[cfe.Type]map[string][2]string{}
	credFisc := map[cfe.Type]map[string]bool{}
	for i, doc := range in.CFEs {
		c, err := cfe.ParseXML(doc)
		if err != nil {
			t.Fatalf("reportcheck: CFE %d: %v", i, err)
		}
		ty := c.IdDoc.TipoCFE
		info, _ := ty.Info()
		k := key{ty, c.IdDoc.Serie}
		b := block(ty)
		if info.Contingency {
			b.CFC++
		} else {
			if rejected[k][c.IdDoc.Nro] {
				continue
			}
			mark(used, k, c.IdDoc.Nro)
		}
		tot := c.Totales
		cur := tot.Currency()
		rate := decimal.NewFromInt(1)
		if cur != "UYU" {
			own := info.Kind != cfe.KindDocument || info.Element == cfe.ElemResguardo || cur == "UYI" || cur == "UYR" ||
				in.SignDay.Before(c.IdDoc.FchEmis)
			if own {
				rate = *tot.TpoCambio
			} else {
				r, ok := in.Rate(cur, c.IdDoc.FchEmis)
				if !ok {
					t.Fatalf("reportcheck: no rate for %s on %s", cur, c.IdDoc.FchEmis)
				}
				rate = r
			}
		}
		val := func(p *decimal.Decimal) decimal.Decimal {
			if p == nil {
				return decimal.Zero
			}
			return p.Mul(rate)
		}
		if info.Element == cfe.ElemTicket {
			net := decimal.Zero
			for _, p := range []*decimal.Decimal{tot.MntNoGrv, tot.MntExpoyAsim, tot.MntImpuestoPerc, tot.MntIVaenSusp,
				tot.MntNetoIvaTasaMin, tot.MntNetoIVATasaBasica, tot.MntNetoIVAOtra} {
				if p != nil {
					net = net.Add(*p)
				}
			}
			if cur != "UYU" {
				net = net.Mul(*tot.TpoCambio)
			}
			if net.GreaterThan(in.TopeUI.Mul(in.UIValue)) {
				b.AboveCap++
			}
		}
		ind := 0
		if c.IdDoc.IndPagCta3ros == 1 {
			ind = 1
		}
		g := fmt.Sprintf("%s/%d/%d", c.IdDoc.FchEmis, c.Emisor.CdgDGISucur, ind)
		if sums[ty] == nil {
			sums[ty] = map[string]map[string]decimal.Decimal{}
			tasas[ty] = map[string][2]string{}
			credFisc[ty] = map[string]bool{}
		}
		if sums[ty][g] == nil {
			sums[ty][g] = map[string]decimal.Decimal{}
		}
		s := sums[ty][g]
		add := func(f string, p *decimal.Decimal) { s[f] = s[f].Add(val(p)) }
		add("TotMntNoGrv", tot.MntNoGrv)
		add("TotMntExpyAsim", tot.MntExpoyAsim)
		add("TotMntImpPerc", tot.MntImpuestoPerc)
		add("TotMntIVAenSusp", tot.MntIVaenSusp)
		add("TotMntIVATasaMin", tot.MntNetoIvaTasaMin)
		add("TotMntIVATasaBas", tot.MntNetoIVATasaBasica)
		add("TotMntIVAOtra", tot.MntNetoIVAOtra)
		add("MntIVATasaMin", tot.MntIVATasaMin)
		add("MntIVATasaBas", tot.MntIVATasaBasica)
		add("MntIVAOtra", tot.MntIVAOtra)
		add("TotMntRetenido", tot.MntTotRetenido)
		add("TotMntCredFisc", tot.MntTotCredFisc)
		if tot.MntTotCredFisc != nil {
			credFisc[ty][g] = true
		}
		tz := tasas[ty][g]
		if tz[0] == "" && tot.IVATasaMin != nil && tot.IVATasaMin.IsPositive() {
			tz[0] = tot.IVATasaMin.String()
		}
		if tz[1] == "" && tot.IVATasaBasica != nil && tot.IVATasaBasica.IsPositive() {
			tz[1] = tot.IVATasaBasica.String()
		}
		tasas[ty][g] = tz
	}
	// The amounts each family reports.
	for ty, groups := range sums {
		info, _ := ty.Info()
		b := block(ty)
		for g, s := range groups {
			r := func(f string) decimal.Decimal { return s[f].Round(2) }
			item := map[string]string{}
			switch info.Element {
			case cfe.ElemTicket, cfe.ElemFactura:
				sum := decimal.Zero
				for _, f := range amountFields {
					item[f] = r(f).StringFixed(2)
					sum = sum.Add(r(f))
				}
				item["TotMntTotal"] = sum.StringFixed(2)
				item["TotMntRetenido"] = r("TotMntRetenido").StringFixed(2)
				if credFisc[ty][g] {
					item["TotMntCredFisc"] = r("TotMntCredFisc").StringFixed(2)
				}
				if v := tasas[ty][g][0]; v != "" {
					item["IVATasaMin"] = v
				}
				if v := tasas[ty][g][1]; v != "" {
					item["IVATasaBas"] = v
				}
			case cfe.ElemFacturaExp, cfe.ElemRemitoExp:
				item["TotMntExpyAsim"] = r("TotMntExpyAsim").StringFixed(2)
				item["TotMntTotal"] = r("TotMntExpyAsim").StringFixed(2)
			case cfe.ElemResguardo:
				item["TotMntRetenido"] = r("TotMntRetenido").StringFixed(2)
				if credFisc[ty][g] {
					item["TotMntCredFisc"] = r("TotMntCredFisc").StringFixed(2)
				}
			case cfe.ElemBoleta:
				item["TotMntNoGrv"] = r("TotMntNoGrv").StringFixed(2)
				item["TotMntIVAenSusp"] = r("TotMntIVAenSusp").StringFixed(2)
				item["TotMntTotal"] = r("TotMntNoGrv").Add(r("TotMntIVAenSusp")).StringFixed(2)
				item["TotMntRetenido"] = r("TotMntRetenido").StringFixed(2)
			}
			b.Items[g] = item
		}
	}
	// The numbers, one by one.
	runs := func(set map[int64]bool, serie string) []string {
		nums := make([]int64, 0, len(set))
		for n := range set {
			nums = append(nums, n)
		}
		sort.Slice(nums, func(a, b int) bool { return nums[a] < nums[b] })
		var out []string
		for i := 0; i < len(nums); {
			j := i
			for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
				j++
			}
			out = append(out, fmt.Sprintf("%s:%d-%d", serie, nums[i], nums[j]))
			i = j + 1
		}
		return out
	}
	keys := make([]key, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].serie < keys[b].serie })
	for _, k := range keys {
		b := block(k.ty)
		b.Used += int64(len(used[k]))
		b.Annulled += int64(len(annulled[k]))
		b.UsedRuns = append(b.UsedRuns, runs(used[k], k.serie)...)
		b.AnnulRuns = append(b.AnnulRuns, runs(annulled[k], k.serie)...)
	}
	for ty, b := range exp.Blocks {
		b.Issued = b.Used - b.Annulled
		exp.Total += b.Used + b.CFC
		if b.Used == 0 && b.CFC == 0 {
			delete(exp.Blocks, ty)
		}
	}
	return exp
}

// node is a generic XML element.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []node     `xml:",any"`
}

func (n *node) child(name string) *node {
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == name {
			return &n.Nodes[i]
		}
	}
	return nil
}

func (n *node) text(name string) string {
	if c := n.child(name); c != nil {
		return strings.TrimSpace(c.Text)
	}
	return ""
}

// Read reads a report's document into the same shape as Recompute's.
func Read(t testing.TB, report []byte) (caratula map[string]string, got *Expected) {
	t.Helper()
	var root node
	if err := xml.Unmarshal(report, &root); err != nil {
		t.Fatalf("reportcheck: the report is not XML: %v", err)
	}
	if root.XMLName.Local != "Reporte" || root.XMLName.Space != cfe.NamespaceCFE {
		t.Fatalf("reportcheck: root is %v", root.XMLName)
	}
	caratula = map[string]string{}
	got = &Expected{Blocks: map[cfe.Type]*Block{}}
	for _, n := range root.Nodes {
		switch {
		case n.XMLName.Local == "Caratula":
			for _, c := range n.Nodes {
				caratula[c.XMLName.Local] = strings.TrimSpace(c.Text)
			}
			got.Total, _ = strconv.ParseInt(caratula["CantComprobantes"], 10, 64)
		case strings.HasPrefix(n.XMLName.Local, "Rsmn_"):
			ty, _ := strconv.Atoi(n.text("TipoComp"))
			d := n.child("RsmnData")
			if d == nil {
				t.Fatalf("reportcheck: %s without RsmnData", n.XMLName.Local)
			}
			b := &Block{Type: cfe.Type(ty), Items: map[string]map[string]string{}}
			num := func(name string) int64 { v, _ := strconv.ParseInt(d.text(name), 10, 64); return v }
			b.Used, b.Annulled, b.Issued, b.CFC, b.AboveCap = num("CantDocsUtil"), num("CantDocsAnulados"),
				num("CantDocsEmi"), num("CantCFCEmi"), num("CantDocsMay_topeUI")
			readRuns := func(list string) []string {
				var out []string
				if l := d.child(list); l != nil {
					for _, it := range l.Nodes {
						out = append(out, fmt.Sprintf("%s:%s-%s", it.text("Serie"), it.text("NroDesde"), it.text("NroHasta")))
					}
				}
				return out
			}
			b.UsedRuns, b.AnnulRuns = readRuns("RngDocsUtil"), readRuns("RngDocsAnulados")
			if m := d.child("Montos"); m != nil {
				for _, it := range m.Nodes {
					ind := it.text("IndPagCta3ros")
					if ind == "" {
						ind = "0"
					}
					g := fmt.Sprintf("%s/%s/%s", it.text("Fecha"), it.text("CodSuc"), ind)
					item := map[string]string{}
					for _, f := range it.Nodes {
						switch f.XMLName.Local {
						case "Fecha", "CodSuc", "IndPagCta3ros":
							continue
						case "IVATasaMin", "IVATasaBas":
							item[f.XMLName.Local] = decimal.RequireFromString(strings.TrimSpace(f.Text)).String()
						default:
							item[f.XMLName.Local] = decimal.RequireFromString(strings.TrimSpace(f.Text)).StringFixed(2)
						}
					}
					b.Items[g] = item
				}
			}
			got.Blocks[b.Type] = b
		}
	}
	return caratula, got
}

// Check recomputes in and fails t where report disagrees; it returns the
// recomputation.
func Check(t testing.TB, report []byte, in Input) *Expected {
	t.Helper()
	want := Recompute(t, in)
	car, got := Read(t, report)
	if car["RUCEmisor"] != in.RUC || car["FechaResumen"] != in.Date.String() {
		t.Errorf("reportcheck: Caratula %v, want RUC %s day %s", car, in.RUC, in.Date)
	}
	if got.Total != want.Total {
		t.Errorf("reportcheck: CantComprobantes %d, recomputed %d", got.Total, want.Total)
	}
	for ty, w := range want.Blocks {
		g := got.Blocks[ty]
		if g == nil {
			t.Errorf("reportcheck: type %d has no block; recomputed %+v", ty, *w)
			continue
		}
		if g.Used != w.Used || g.Annulled != w.Annulled || g.Issued != w.Issued || g.CFC != w.CFC || g.AboveCap != w.AboveCap {
			t.Errorf("reportcheck: type %d counts used/annulled/issued/cfc/abovecap %d/%d/%d/%d/%d, recomputed %d/%d/%d/%d/%d",
				ty, g.Used, g.Annulled, g.Issued, g.CFC, g.AboveCap, w.Used, w.Annulled, w.Issued, w.CFC, w.AboveCap)
		}
		if strings.Join(g.UsedRuns, " ") != strings.Join(w.UsedRuns, " ") {
			t.Errorf("reportcheck: type %d used ranges %v, recomputed %v", ty, g.UsedRuns, w.UsedRuns)
		}
		if strings.Join(g.AnnulRuns, " ") != strings.Join(w.AnnulRuns, " ") {
			t.Errorf("reportcheck: type %d annulled ranges %v, recomputed %v", ty, g.AnnulRuns, w.AnnulRuns)
		}
		if fmt.Sprint(g.Items) != fmt.Sprint(w.Items) {
			t.Errorf("reportcheck: type %d amounts\n got %v\nwant %v", ty, g.Items, w.Items)
		}
	}
	for ty := range got.Blocks {
		if want.Blocks[ty] == nil {
			t.Errorf("reportcheck: type %d has a block the recomputation has not", ty)
		}
	}
	return want
}
