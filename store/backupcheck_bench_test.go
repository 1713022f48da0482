//go:build unix

package store_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/scalefill"
	"github.com/cfe-agent/cfe-agent/store"
)

// BenchmarkVerifyBackup measures the check of every record of a backup of
// 20 000 real e-Tickets (CFE_BENCH_BACKUP_CFES changes the count), each
// signed with RSA-2048 (about 4.7 KB of XML, as the issuer writes them):
// without the signature check, and with it on one and on every processor.
// One op is a whole VerifyBackup; µs/CFE is its share per CFE of the
// elapsed time, cpu-µs/CFE of the processor time the process used (user and
// system): on a machine shared with other work, the elapsed time grows with
// the load and the processor time hardly does.
//
//	go test ./store -run '^$' -bench BenchmarkVerifyBackup -benchtime 1x -count 3
func BenchmarkVerifyBackup(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("CFE_BENCH_BACKUP_CFES")); err == nil && v > 0 {
		n = v
	}
	backup := signedBackup(b, n)
	for _, bc := range []struct {
		name   string
		checks store.RecordChecks
	}{
		{"records", store.RecordChecks{}},
		{"signatures/workers=1", store.RecordChecks{Signature: signatures.Signature, Workers: 1}},
		{fmt.Sprintf("signatures/workers=%d", runtime.GOMAXPROCS(0)), signatures},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cpu0 := cpuTime(b)
			for b.Loop() {
				info, err := store.VerifyBackup(backup, bc.checks)
				if err != nil {
					b.Fatal(err)
				}
				if info.Checked.CFEs != n || (bc.checks.Signature != nil && info.Checked.Signatures != n) {
					b.Fatalf("checked %+v, want %d CFEs", info.Checked, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/CFE")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N*n), "cpu-µs/CFE")
		})
	}
}

// cpuTime is the processor time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// signedBackup makes a backup of a store of n e-Tickets, each a CFE of the
// real issuer (scalefill's templates, numbered and dated anew) signed again
// with a test certificate, so that every signature verifies.
func signedBackup(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	at := time.Date(2026, time.March, 2, 10, 0, 0, 0, cfe.Montevideo)
	tpls, err := scalefill.Templates(ctx, dir, 9, at)
	if err != nil {
		b.Fatal(err)
	}
	plan := scalefill.Plan{N: n, PerDay: 1000, First: cfe.DateOf(at), Seed: 28}
	rg := scalefill.Range(cfe.Date{Year: 2026, Month: time.January, Day: 1}, cfe.Date{Year: 2099, Month: time.December, Day: 31})
	g := scalefill.NewGenerator(plan, tpls, rg)
	s := testSigner(b)
	docs := make([]*cfe.Issued, n)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				doc := g.CFE(i)
				start := bytes.Index(doc.XML, []byte("<Signature"))
				end := bytes.LastIndex(doc.XML, []byte("</Signature>"))
				if start < 0 || end < 0 {
					errs <- fmt.Errorf("CFE %d has no signature to replace", i)
					return
				}
				unsigned := append(bytes.Clone(doc.XML[:start]), doc.XML[end+len("</Signature>"):]...)
				signed, err := s.SignCanonical(unsigned)
				if err != nil {
					errs <- err
					return
				}
				doc.XML, doc.CodSeguridad = signed.XML, cfe.SecurityCode(signed.DigestValue)
				docs[i] = doc
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "agent.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.PutRange(ctx, rg); err != nil {
		b.Fatal(err)
	}
	for from := 0; from < n; from += 1000 {
		if err := db.BulkLoad(ctx, docs[from:min(from+1000, n)]); err != nil {
			b.Fatal(err)
		}
	}
	backup := filepath.Join(dir, "copia.db")
	info, err := db.Backup(ctx, backup, backupMeta, signatures)
	if err != nil {
		b.Fatal(err)
	}
	if info.Checked.Signatures != n {
		b.Fatalf("the backup verified %d signatures, want %d", info.Checked.Signatures, n)
	}
	return backup
}
