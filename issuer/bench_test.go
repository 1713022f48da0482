package issuer_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Benchmarks of the durable issue path, with what bounds it for comparison.
// Run: go test -run '^$' -bench . -benchtime 3s ./issuer/
// The numbers and the command go to BENCHMARKS.md.

// BenchmarkIssue is the whole path (validate, number, XML, sign, fsynced
// commit) from one caller.
func BenchmarkIssue(b *testing.B) {
	h := newHarness(b)
	body := requestJSON(cfe.ETicket, "")
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		req := decode(b, body)
		req.UUID = fmt.Sprint("bench-", i)
		if _, err := h.iss.Issue(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssue8 is the same path with 8 concurrent callers.
func BenchmarkIssue8(b *testing.B) {
	h := newHarness(b)
	body := requestJSON(cfe.ETicket, "")
	var n atomic.Int64
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := decode(b, body)
			req.UUID = fmt.Sprint("bench8-", n.Add(1))
			if _, err := h.iss.Issue(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if st, err := h.db.Stats(context.Background()); err == nil && st.CommitTransactions > 0 {
		b.ReportMetric(float64(st.CFEs)/float64(st.CommitTransactions), "CFEs/tx")
	}
}

// BenchmarkSignOnly builds and signs the same CFE as the issuer does (the
// canonical bytes of cfe.MarshalXML, signed without parsing), without
// numbering or storage.
func BenchmarkSignOnly(b *testing.B) {
	h := newHarness(b)
	unsigned, err := cfe.MarshalXML(benchCFE(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := h.signer.SignCanonical(unsigned); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSign8 is the issuer's CPU work per CFE (build the XML and sign it)
// from 8 concurrent callers, without numbering or storage: the ceiling of
// BenchmarkIssue8 on this machine.
func BenchmarkSign8(b *testing.B) {
	h := newHarness(b)
	doc := benchCFE(b)
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			unsigned, err := cfe.MarshalXML(doc)
			if err == nil {
				_, err = h.signer.SignCanonical(unsigned)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchCFE is the benchmarks' e-Ticket, numbered as the issuer numbers it.
func benchCFE(b *testing.B) *cfe.CFE {
	doc, err := decode(b, requestJSON(cfe.ETicket, "x")).ToCFE(cfe.IssueParams{Emisor: testEmisor, Tax: cfe.DefaultTaxConfig(), SignedAt: testNow})
	if err != nil {
		b.Fatal(err)
	}
	doc.IdDoc.Serie, doc.IdDoc.Nro = "A", 1
	doc.CAEData = testRange(cfe.ETicket, "A", 1, 100, cfe.DateOf(testNow).AddDays(30)).CAEData()
	return doc
}

// BenchmarkRSA2048 is the raw RSA-2048 PKCS#1 v1.5 signature of a SHA-1
// digest on all cores: the ceiling of any signing path on this machine.
func BenchmarkRSA2048(b *testing.B) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	sum := sha1.Sum([]byte("cfe"))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA1, sum[:]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
