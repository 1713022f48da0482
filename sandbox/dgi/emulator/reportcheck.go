package emulator

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
)

// What the emulator compares when it processes a daily report (ER or DR).
// For the report's RUC and FechaResumen it takes the CFEs it received in an
// envelope it accepted (AS) whose signature date (TmstFirma, Montevideo) is
// that day, contingency receipts (CFC) left aside, and per type of CFE:
//
//   - CantDocsEmi of the type's Rsmn block (0 when the block is absent) must
//     equal the number of those CFEs DGI accepted (AE): REP C29, "emitidos y
//     no rechazados por DGI";
//   - every accepted number must lie in a RngDocsUtil range of its serie;
//   - every number DGI rejected (BE, other than E02 and E09, which leave
//     the number free) must lie in a RngDocsAnulados range of its serie, and
//     CantDocsAnulados must be at least how many those are (REP C28: the
//     company's own annulled numbers count too).
//
// Amounts are not compared. Each difference is one finding; any finding
// makes the report ER.

// reportSummary is what a report declares, per type of CFE.
type reportSummary struct {
	Types map[cfe.Type]*typeSummary `json:"types"`
}

// typeSummary is one Rsmn block.
type typeSummary struct {
	Emitted  int64       `json:"emitidos"`
	Annulled int64       `json:"anulados"`
	Used     []numbering `json:"utilizados,omitempty"`
	Voided   []numbering `json:"rangosAnulados,omitempty"`
}

// numbering is a range of numbers of a serie.
type numbering struct {
	Serie    string `json:"serie"`
	From, To int64
}

func inRanges(rs []numbering, serie string, nro int64) bool {
	return slices.ContainsFunc(rs, func(r numbering) bool { return r.Serie == serie && nro >= r.From && nro <= r.To })
}

// readReportSummary reads the Rsmn blocks of a report the schema accepted.
func readReportSummary(doc []byte) (*reportSummary, error) {
	type item struct {
		Serie    string `xml:"Serie"`
		NroDesde string `xml:"NroDesde"`
		NroHasta string `xml:"NroHasta"`
	}
	var x struct {
		Blocks []struct {
			XMLName  xml.Name
			TipoComp string `xml:"TipoComp"`
			Data     struct {
				CantDocsEmi      string `xml:"CantDocsEmi"`
				CantDocsAnulados string `xml:"CantDocsAnulados"`
				Used             []item `xml:"RngDocsUtil>RDU_Item"`
				Voided           []item `xml:"RngDocsAnulados>RDA_Item"`
			} `xml:"RsmnData"`
		} `xml:",any"`
	}
	if err := xml.NewDecoder(bytes.NewReader(doc)).Decode(&x); err != nil {
		return nil, err
	}
	num := func(s string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return n
	}
	ranges := func(items []item) []numbering {
		var out []numbering
		for _, it := range items {
			out = append(out, numbering{Serie: strings.TrimSpace(it.Serie), From: num(it.NroDesde), To: num(it.NroHasta)})
		}
		return out
	}
	sum := &reportSummary{Types: map[cfe.Type]*typeSummary{}}
	for _, b := range x.Blocks {
		if !strings.HasPrefix(b.XMLName.Local, "Rsmn_") {
			continue
		}
		t := cfe.Type(num(b.TipoComp))
		ts := sum.Types[t]
		if ts == nil {
			ts = &typeSummary{}
			sum.Types[t] = ts
		}
		ts.Emitted += num(b.Data.CantDocsEmi)
		ts.Annulled += num(b.Data.CantDocsAnulados)
		ts.Used = append(ts.Used, ranges(b.Data.Used)...)
		ts.Voided = append(ts.Voided, ranges(b.Data.Voided)...)
	}
	return sum, nil
}

// compareReport returns the inconsistencies between a received report and
// the CFEs the emulator holds (see the comment above), none when it agrees.
func compareReport(tx *bolt.Tx, r *reportRecord) ([]dgi.Motivo, error) {
	sum := r.Summary
	if sum == nil {
		sum = &reportSummary{}
	}
	accepted := map[cfe.Type]int64{}
	var findings []dgi.Motivo
	add := func(format string, args ...any) {
		findings = append(findings, dgi.Motivo{Codigo: cfe.ReportMismatch, Glosa: "Inconsistencia con los CFE recibidos",
			Detalle: fmt.Sprintf(format, args...)})
	}
	rejected := map[cfe.Type]int64{}
	prefix := []byte(r.RUCEmisor + "/")
	c := tx.Bucket(bucketCFEs).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var rec cfeRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return nil, err
		}
		info, ok := rec.Tipo.Info()
		if !ok || info.Contingency || rec.IDReceptor == 0 || rec.Signed != r.FechaResumen {
			continue
		}
		ts := sum.Types[rec.Tipo]
		if ts == nil {
			ts = &typeSummary{}
		}
		switch {
		case rec.Estado == dgi.CFEReceived:
			accepted[rec.Tipo]++
			if !inRanges(ts.Used, rec.Serie, rec.Nro) {
				add("%s %s-%d, recibido por DGI, no está en los rangos utilizados del reporte", rec.Tipo.Name(), rec.Serie, rec.Nro)
			}
		case rec.Estado == dgi.CFERejected && rec.Registered:
			rejected[rec.Tipo]++
			if !inRanges(ts.Voided, rec.Serie, rec.Nro) {
				add("%s %s-%d, rechazado por DGI, no está en los rangos anulados del reporte", rec.Tipo.Name(), rec.Serie, rec.Nro)
			}
		}
	}
	types := map[cfe.Type]bool{}
	for t := range accepted {
		types[t] = true
	}
	for t, ts := range sum.Types {
		if info, ok := t.Info(); ok && !info.Contingency && (ts.Emitted > 0 || ts.Annulled > 0) {
			types[t] = true
		}
	}
	for _, t := range slices.Sorted(func(yield func(cfe.Type) bool) {
		for t := range types {
			if !yield(t) {
				return
			}
		}
	}) {
		ts := sum.Types[t]
		if ts == nil {
			ts = &typeSummary{}
		}
		if ts.Emitted != accepted[t] {
			add("%s: el reporte declara %d emitidos y DGI recibió y aceptó %d firmados el %s", t.Name(), ts.Emitted, accepted[t], r.FechaResumen)
		}
		if ts.Annulled < rejected[t] {
			add("%s: el reporte declara %d anulados y DGI rechazó %d firmados el %s", t.Name(), ts.Annulled, rejected[t], r.FechaResumen)
		}
	}
	return findings, nil
}
