package scalefill_test

import (
	"bytes"
	"compress/flate"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/cfe-agent/cfe-agent/internal/scalefill"
)

// BenchmarkXMLCompression compares, on 1 000 generated CFEs, the stored size
// of the signed XML with DEFLATE, zstd alone and zstd with a raw dictionary
// made of the first CFE at the fastest level (what the store does,
// store/xmlcodec.go), and times
// zstd-with-dictionary decompression (one op: one CFE).
func BenchmarkXMLCompression(b *testing.B) {
	p := plan(1000)
	_, at := p.Day(0)
	tpls, err := scalefill.Templates(ctx, b.TempDir(), nTemplates, at)
	if err != nil {
		b.Fatal(err)
	}
	g := scalefill.NewGenerator(p, tpls, fillRange)
	var xmls [][]byte
	raw := 0
	for i := range p.N {
		x := g.CFE(i).XML
		xmls = append(xmls, x)
		raw += len(x)
	}
	dict := xmls[0]
	plain, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	withDict, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithEncoderDictRaw(1, dict))
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderDictRaw(1, dict))
	var fl, zs, zd int
	var compressed [][]byte
	for _, x := range xmls {
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, flate.BestCompression)
		_, _ = w.Write(x)
		_ = w.Close()
		fl += buf.Len()
		zs += len(plain.EncodeAll(x, nil))
		c := withDict.EncodeAll(x, nil)
		zd += len(c)
		compressed = append(compressed, c)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		out, err := dec.DecodeAll(compressed[i%len(compressed)], nil)
		if err != nil || !bytes.Equal(out, xmls[i%len(xmls)]) {
			b.Fatal("decompressed XML differs", err)
		}
	}
	n := float64(p.N)
	b.ReportMetric(float64(raw)/n, "B-xml/CFE")
	b.ReportMetric(float64(fl)/n, "B-deflate9/CFE")
	b.ReportMetric(float64(zs)/n, "B-zstd/CFE")
	b.ReportMetric(float64(zd)/n, "B-zstd-dict/CFE")
}
