// Package scalefill fills a store with many realistic CFEs and measures it:
// the scale tool of issue 22 (`make bench-scale`, BENCHMARKS.md).
//
// Signing millions of CFEs with RSA would take hours, so a fill signs a few
// distinct e-Tickets with the real issuer and signer (Templates) and makes
// every CFE of the fill from one of them (Generator): its own uuid, number,
// signature time and issue date, a fresh random DigestValue and
// SignatureValue of the real lengths (random bytes compress no better than a
// real signature), the security code and QR data that follow from them, and
// the fill's CAE range. Everything else (lines, totals, the certificate) is
// the template's. The XML therefore has the size and the content of a real
// CFE, but its signature does not verify. The CFEs go into the store through
// store.BulkLoad, whose records are byte for byte those of the real commit
// path (store.TestDB_BulkLoad).
package scalefill

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// Range is the CAE range of the filled stores: e-Tickets of serie A, every
// 7-digit number.
func Range(authorized, expires cfe.Date) cfe.CAERange {
	r := cfe.CAERange{RUC: Company.RUCEmisor, Type: cfe.ETicket, Serie: "A", DNro: 1, HNro: 9_999_999,
		CAEID: "90269991010", Autorizado: authorized, Vencimiento: expires, Source: "manual"}
	r.ID = cfe.RangeID(r.Type, r.Serie, r.DNro)
	return r
}

// Plan says what a fill makes: N CFEs, PerDay a day from First on (signed
// between 09:00 and 21:00, Montevideo), numbers from 1.
type Plan struct {
	N      int
	PerDay int
	First  cfe.Date
	Seed   uint64
}

// Day returns the day of the i-th CFE (from 0) and its signature time.
func (p Plan) Day(i int) (cfe.Date, time.Time) {
	day := p.First.AddDays(i / p.PerDay)
	span := 12 * time.Hour
	at := day.Time(cfe.Montevideo).Add(9*time.Hour + span*time.Duration(i%p.PerDay)/time.Duration(p.PerDay))
	return day, at
}

// Last returns the last day of the plan.
func (p Plan) Last() cfe.Date { return p.First.AddDays((p.N - 1) / p.PerDay) }

// Generator makes the CFEs of a plan from templates.
type Generator struct {
	plan Plan
	tpls []*cfe.Issued
	rg   cfe.CAERange
	cae  []byte
}

var (
	reTmst   = regexp.MustCompile(`<TmstFirma>[^<]*</TmstFirma>`)
	reNro    = regexp.MustCompile(`<Nro>[0-9]+</Nro>`)
	reFch    = regexp.MustCompile(`<FchEmis>[^<]*</FchEmis>`)
	reDigest = regexp.MustCompile(`<DigestValue>[^<]*</DigestValue>`)
	reSig    = regexp.MustCompile(`<SignatureValue>[^<]*</SignatureValue>`)
	reCAE    = regexp.MustCompile(`<CAEData>.*</CAEData>`)
)

// NewGenerator returns the generator of plan over templates, numbering in r.
func NewGenerator(plan Plan, templates []*cfe.Issued, r cfe.CAERange) *Generator {
	c := r.CAEData()
	cae := fmt.Appendf(nil, "<CAEData><CAE_ID>%s</CAE_ID><DNro>%d</DNro><HNro>%d</HNro><FecVenc>%s</FecVenc></CAEData>",
		c.CAEID, c.DNro, c.HNro, c.FecVenc)
	return &Generator{plan: plan, tpls: templates, rg: r, cae: cae}
}

// UUID returns the uuid of the i-th CFE of a plan with seed: a version-4
// form, distinct per i.
func UUID(seed uint64, i int) string {
	h := rand.New(rand.NewPCG(seed^0x5ca1ef111, uint64(i)))
	a, b := h.Uint64(), h.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff,
		0x8000|uint16(b>>48)&0x3fff, b&0xffffffffffff)
}

// CFE returns the i-th CFE of the plan (number i+1): the same CFE every time.
func (g *Generator) CFE(i int) *cfe.Issued {
	rng := rand.New(rand.NewPCG(g.plan.Seed, uint64(i)))
	t := g.tpls[i%len(g.tpls)]
	day, at := g.plan.Day(i)
	nro := int64(i + 1)
	digest := make([]byte, 20)
	sig := make([]byte, 256)
	for _, b := range [][]byte{digest, sig} {
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
	}
	d64 := base64.StdEncoding.EncodeToString(digest)
	xml := reTmst.ReplaceAllLiteral(t.XML, fmt.Appendf(nil, "<TmstFirma>%s</TmstFirma>", at.Format(time.RFC3339)))
	xml = reNro.ReplaceAllLiteral(xml, fmt.Appendf(nil, "<Nro>%d</Nro>", nro))
	xml = reFch.ReplaceAllLiteral(xml, fmt.Appendf(nil, "<FchEmis>%s</FchEmis>", day))
	xml = reDigest.ReplaceAllLiteral(xml, fmt.Appendf(nil, "<DigestValue>%s</DigestValue>", d64))
	xml = reSig.ReplaceAllLiteral(xml, fmt.Appendf(nil, "<SignatureValue>%s</SignatureValue>", base64.StdEncoding.EncodeToString(sig)))
	xml = reCAE.ReplaceAllLiteral(xml, g.cae)
	hash := make([]byte, 32)
	for j := range hash {
		hash[j] = byte(rng.Uint32())
	}
	total := t.Total.StringFixed(2)
	qr := fmt.Sprintf("https://www.efactura.dgi.gub.uy/consultaQR/cfe?%s,%d,%s,%d,%s,%02d/%02d/%d,%s",
		Company.RUCEmisor, int(g.rg.Type), g.rg.Serie, nro, total, day.Day, int(day.Month), day.Year, url.QueryEscape(d64))
	return &cfe.Issued{UUID: UUID(g.plan.Seed, i), Type: g.rg.Type, Serie: g.rg.Serie, Nro: nro,
		RangeID: g.rg.ID, CAE: g.rg.CAEData(), TmstFirma: at, XML: bytes.Clone(xml), Adenda: t.Adenda,
		CodSeguridad: d64[:6], DatosQR: qr, Total: t.Total, RequestHash: hex.EncodeToString(hash)}
}

// Fill commits CFEs from..to-1 of the plan into db, batch at a time, through
// store.BulkLoad. db must hold g's range with its counter at from.
func (g *Generator) Fill(ctx context.Context, db *store.DB, from, to, batch int) error {
	docs := make([]*cfe.Issued, 0, batch)
	for i := from; i < to; i++ {
		docs = append(docs, g.CFE(i))
		if len(docs) == batch || i == to-1 {
			if err := db.BulkLoad(ctx, docs); err != nil {
				return fmt.Errorf("CFEs up to %d: %w", i+1, err)
			}
			docs = docs[:0]
		}
	}
	return nil
}
